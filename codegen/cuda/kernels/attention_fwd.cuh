//===- attention_fwd.cuh - flash-attention forward ------------------------===//
//
// One block of 256 threads per (batch*head, tile of BM queries); K/V tiles
// of BN keys are staged in shared memory (as f32) and the softmax is computed
// online (running max and sum per query row, in the log2 domain with the
// scale folded into Q), so the score matrix never leaves the chip. Causal
// blocks stop at their last visible key tile. Products accumulate in f32
// with FMA on CUDA cores.
//
// C: a configuration as in attention_common.cuh, with q_layout, k_layout,
// v_layout and out_layout. A non-null `row_lse` ([B * H][Tq] f32) receives
// each row's log-sum-exp (natural log) of its scaled scores.
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/attention_common.cuh"

namespace kiln {
namespace attention {

template <class C>
__device__ __forceinline__ void
forward(const launch_ctx &ctx, const typename C::elem_t *__restrict__ q,
        const typename C::elem_t *__restrict__ k,
        const typename C::elem_t *__restrict__ v,
        typename C::elem_t *__restrict__ out, float *__restrict__ row_lse) {
  typedef typename C::elem_t elem_t;
  typedef typename C::idx_t idx_t;
  typedef dims<C> T;
  constexpr int TQ = T::TQ, TK = T::TK, D = T::D, DV = T::DV, DP = T::DP,
                DVP = T::DVP;
  constexpr int BM = T::BM, BN = T::BN, QT = T::QT, RM = T::RM, RN = T::RN,
                DVJ = T::DVJ;
  constexpr int LQ = T::LQ, LK = T::LK, LV = T::LV, LP = T::LP;
  constexpr smem_layout L = forward_smem(BM, DP, DVP);
  float *smem = shared_floats();
  float *sQ = smem + L.q, *sK = smem + L.k, *sV = smem + L.v, *sP = smem + L.p;
  const int tx = ctx.thread.x % 16, ty = ctx.thread.x / 16;
  const int bh = ctx.block.x / QT;
  // The longest causal tiles first.
  const int q0 = (QT - 1 - (int)(ctx.block.x % QT)) * BM;
  const elem_t *qb = q + C::q_layout::base(bh), *kb = k + C::k_layout::base(bh),
               *vb = v + C::v_layout::base(bh);
  load_tile<C, BM, D, DP, LQ, C::q_layout::row>(ctx, sQ, qb, q0, TQ, C::qscale);
  float m[RM], l[RM], o[RM][DVJ];
#pragma unroll
  for (int i = 0; i < RM; ++i)
    m[i] = -inf(), l[i] = 0.f;
  zero(o);
  const int kEnd = C::causal ? min(TK, min(q0 + BM, TQ) + (TK - TQ)) : TK;
  for (int k0 = 0; k0 < kEnd; k0 += BN) {
    __syncthreads();
    load_tile<C, BN, D, DP, LK, C::k_layout::row>(ctx, sK, kb, k0, TK, 1.f);
    load_tile<C, BN, DV, DVP, LV, C::v_layout::row>(ctx, sV, vb, k0, TK, 1.f);
    __syncthreads();
    float s[RM][RN], alpha[RM];
    scores<RM, RN, DP, LQ, LK>(s, sQ, sK, ty, tx);
    online_max<C>(s, m, l, alpha, q0, k0, ty, tx);
#pragma unroll
    for (int i = 0; i < RM; ++i) {
      const float mt = m[i];
#pragma unroll
      for (int jj = 0; jj < DVJ; ++jj)
        o[i][jj] *= alpha[i];
#pragma unroll
      for (int j = 0; j < RN; ++j) {
        const float p = mt == -inf() ? 0.f : exp2f(s[i][j] - mt);
        l[i] += p;
        sP[(ty + 16 * i) * LP + tx + 16 * j] = p;
      }
    }
    __syncthreads();
    tile_mma<RM, DVJ, BN>(
        o, [&](int i, int c) { return sP[(ty + 16 * i) * LP + c]; },
        [&](int jj, int c) { return sV[c * LV + tx + 16 * jj]; });
  }
#pragma unroll
  for (int i = 0; i < RM; ++i) {
    const float total = row_sum(l[i]);
    const int qi = q0 + ty + 16 * i;
    if (qi >= TQ)
      continue;
    if (row_lse && tx == 0)
      row_lse[(idx_t)bh * TQ + qi] = natural_lse(m[i], total);
    const float inv = total > 0.f ? 1.f / total : 0.f;
#pragma unroll
    for (int jj = 0; jj < DVJ; ++jj) {
      const int e = tx + 16 * jj;
      if (e < DV)
        kiln_store(out + C::out_layout::base(bh) +
                       (idx_t)qi * C::out_layout::row + e,
                   o[i][jj] * inv);
    }
  }
}

} // namespace attention
} // namespace kiln
