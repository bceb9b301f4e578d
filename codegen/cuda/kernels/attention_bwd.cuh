//===- attention_bwd.cuh - flash-attention backward -----------------------===//
//
// The softmax is recomputed and the gradients come from two kernels, neither
// with atomics:
//  1. backward_dq, over query tiles: the row statistics (log-sum-exp by a
//     first sweep over the keys, delta = rowsum(dO * O)) are left in
//     scratch, and a second sweep accumulates dq = scale * dS K in registers;
//  2. backward_dkdv, over key tiles: every query tile that sees the keys is
//     visited, P = exp(S - lse) and dS = P (dP - delta) are recomputed, and
//     dv = P^T dO and dk = scale * dS^T Q accumulate in registers.
//
// C: a configuration as in attention_common.cuh, with q_layout, k_layout,
// v_layout, out_layout, d_out_layout and, for each gradient it writes
// (has_dq, has_dk, has_dv), d_query_layout, d_key_layout, d_value_layout.
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/attention_common.cuh"

namespace kiln {
namespace attention {

template <class C>
__device__ __forceinline__ void
backward_dq(const launch_ctx &ctx, const typename C::elem_t *__restrict__ q,
            const typename C::elem_t *__restrict__ k,
            const typename C::elem_t *__restrict__ v,
            const typename C::elem_t *__restrict__ out,
            const typename C::elem_t *__restrict__ d_out,
            float *__restrict__ row_lse, float *__restrict__ row_delta,
            typename C::elem_t *__restrict__ d_query) {
  typedef typename C::elem_t elem_t;
  typedef typename C::idx_t idx_t;
  typedef dims<C> T;
  constexpr int TQ = T::TQ, TK = T::TK, D = T::D, DV = T::DV, DP = T::DP,
                DVP = T::DVP;
  constexpr int BM = T::BM, BN = T::BN, QT = T::QT, RM = T::RM, RN = T::RN;
  constexpr int DJ = T::DJ, DVJ = T::DVJ;
  constexpr int LQ = T::LQ, LK = T::LK, LV = T::LV, LO = T::LO, LP = T::LP;
  constexpr smem_layout L = backward_dq_smem(BM, DP, DVP);
  float *smem = shared_floats();
  float *sQ = smem + L.q, *sO = smem + L.o, *sK = smem + L.k, *sV = smem + L.v;
  float *sS = smem + L.s;
  const int tx = ctx.thread.x % 16, ty = ctx.thread.x / 16;
  const int bh = ctx.block.x / QT;
  const int q0 = (QT - 1 - (int)(ctx.block.x % QT)) * BM;
  const elem_t *qb = q + C::q_layout::base(bh), *kb = k + C::k_layout::base(bh),
               *vb = v + C::v_layout::base(bh);
  load_tile<C, BM, D, DP, LQ, C::q_layout::row>(ctx, sQ, qb, q0, TQ, C::qscale);
  load_tile<C, BM, DV, DVP, LO, C::d_out_layout::row>(
      ctx, sO, d_out + C::d_out_layout::base(bh), q0, TQ, 1.f);
  __syncthreads();
  // delta_i = sum_e dO[i, e] * O[i, e].
  float delta[RM];
#pragma unroll
  for (int i = 0; i < RM; ++i) {
    const int r = ty + 16 * i, qi = q0 + r;
    float acc = 0.f;
    if (qi < TQ)
#pragma unroll
      for (int jj = 0; jj < DVJ; ++jj) {
        const int e = tx + 16 * jj;
        if (e < DV)
          acc += sO[r * LO + e] *
                 kiln_load(out[C::out_layout::base(bh) +
                               (idx_t)qi * C::out_layout::row + e]);
      }
    delta[i] = row_sum(acc);
  }
  const int kEnd = C::causal ? min(TK, min(q0 + BM, TQ) + (TK - TQ)) : TK;
  // Sweep 1: the log-sum-exp of every row (log2 domain).
  float m[RM], l[RM];
#pragma unroll
  for (int i = 0; i < RM; ++i)
    m[i] = -inf(), l[i] = 0.f;
  for (int k0 = 0; k0 < kEnd; k0 += BN) {
    __syncthreads();
    load_tile<C, BN, D, DP, LK, C::k_layout::row>(ctx, sK, kb, k0, TK, 1.f);
    __syncthreads();
    float s[RM][RN], alpha[RM];
    scores<RM, RN, DP, LQ, LK>(s, sQ, sK, ty, tx);
    online_max<C>(s, m, l, alpha, q0, k0, ty, tx);
#pragma unroll
    for (int i = 0; i < RM; ++i)
#pragma unroll
      for (int j = 0; j < RN; ++j)
        l[i] += m[i] == -inf() ? 0.f : exp2f(s[i][j] - m[i]);
  }
  float lse[RM];
#pragma unroll
  for (int i = 0; i < RM; ++i) {
    lse[i] = m[i] + log2f(row_sum(l[i]));
    const int qi = q0 + ty + 16 * i;
    if (tx == 0 && qi < TQ) {
      row_lse[(idx_t)bh * TQ + qi] = lse[i];
      row_delta[(idx_t)bh * TQ + qi] = delta[i];
    }
  }
  // Sweep 2: dS = P (dP - delta), dq += dS K.
  float dq[RM][DJ];
  zero(dq);
  for (int k0 = 0; k0 < kEnd; k0 += BN) {
    __syncthreads();
    load_tile<C, BN, D, DP, LK, C::k_layout::row>(ctx, sK, kb, k0, TK, 1.f);
    load_tile<C, BN, DV, DVP, LV, C::v_layout::row>(ctx, sV, vb, k0, TK, 1.f);
    __syncthreads();
    float s[RM][RN], dp[RM][RN];
    scores<RM, RN, DP, LQ, LK>(s, sQ, sK, ty, tx);
    zero(dp);
    tile_mma<RM, RN, DVP>(
        dp, [&](int i, int e) { return sO[(ty + 16 * i) * LO + e]; },
        [&](int j, int e) { return sV[(tx + 16 * j) * LV + e]; });
#pragma unroll
    for (int i = 0; i < RM; ++i) {
      const int qi = q0 + ty + 16 * i;
#pragma unroll
      for (int j = 0; j < RN; ++j) {
        const float p =
            visible<C>(qi, k0 + tx + 16 * j) ? exp2f(s[i][j] - lse[i]) : 0.f;
        sS[(ty + 16 * i) * LP + tx + 16 * j] = p * (dp[i][j] - delta[i]);
      }
    }
    __syncthreads();
    tile_mma<RM, DJ, BN>(
        dq, [&](int i, int c) { return sS[(ty + 16 * i) * LP + c]; },
        [&](int jj, int c) { return sK[c * LK + tx + 16 * jj]; });
  }
  if constexpr (C::has_dq) {
#pragma unroll
    for (int i = 0; i < RM; ++i) {
      const int qi = q0 + ty + 16 * i;
      if (qi >= TQ)
        continue;
#pragma unroll
      for (int jj = 0; jj < DJ; ++jj) {
        const int e = tx + 16 * jj;
        if (e < D)
          kiln_store(d_query + C::d_query_layout::base(bh) +
                         (idx_t)qi * C::d_query_layout::row + e,
                     dq[i][jj] * C::scale);
      }
    }
  }
}

template <class C>
__device__ __forceinline__ void
backward_dkdv(const launch_ctx &ctx, const typename C::elem_t *__restrict__ q,
              const typename C::elem_t *__restrict__ k,
              const typename C::elem_t *__restrict__ v,
              const typename C::elem_t *__restrict__ d_out,
              const float *__restrict__ row_lse,
              const float *__restrict__ row_delta,
              typename C::elem_t *__restrict__ d_key,
              typename C::elem_t *__restrict__ d_value) {
  typedef typename C::elem_t elem_t;
  typedef typename C::idx_t idx_t;
  typedef dims<C> T;
  constexpr int TQ = T::TQ, TK = T::TK, D = T::D, DV = T::DV, DP = T::DP,
                DVP = T::DVP;
  constexpr int BM = T::BM, BN = T::BN, KT = T::KT, RM = T::RM, RN = T::RN;
  constexpr int DJ = T::DJ, DVJ = T::DVJ;
  constexpr int LQ = T::LQ, LK = T::LK, LV = T::LV, LO = T::LO, LP = T::LP;
  constexpr smem_layout L = backward_dkdv_smem(BM, DP, DVP);
  float *smem = shared_floats();
  float *sK = smem + L.k, *sV = smem + L.v, *sQ = smem + L.q, *sO = smem + L.o;
  float *sP = smem + L.p, *sS = smem + L.s, *sL = smem + L.lse,
        *sD = smem + L.delta;
  const int tx = ctx.thread.x % 16, ty = ctx.thread.x / 16;
  const int bh = ctx.block.x / KT;
  const int k0 = (int)(ctx.block.x % KT) * BN;
  const elem_t *qb = q + C::q_layout::base(bh),
               *ob = d_out + C::d_out_layout::base(bh);
  load_tile<C, BN, D, DP, LK, C::k_layout::row>(
      ctx, sK, k + C::k_layout::base(bh), k0, TK, 1.f);
  load_tile<C, BN, DV, DVP, LV, C::v_layout::row>(
      ctx, sV, v + C::v_layout::base(bh), k0, TK, 1.f);
  float dk[RN][DJ], dv[RN][DVJ];
  zero(dk);
  zero(dv);
  // The first query that sees key k0, rounded down to its tile.
  const int qStart = C::causal ? max(0, k0 - (TK - TQ)) / BM * BM : 0;
  for (int q0 = qStart; q0 < TQ; q0 += BM) {
    __syncthreads();
    load_tile<C, BM, D, DP, LQ, C::q_layout::row>(ctx, sQ, qb, q0, TQ, 1.f);
    load_tile<C, BM, DV, DVP, LO, C::d_out_layout::row>(ctx, sO, ob, q0, TQ,
                                                        1.f);
    for (int r = ctx.thread.x; r < BM; r += kThreads) {
      const bool valid = q0 + r < TQ;
      sL[r] = valid ? row_lse[(idx_t)bh * TQ + q0 + r] : 0.f;
      sD[r] = valid ? row_delta[(idx_t)bh * TQ + q0 + r] : 0.f;
    }
    __syncthreads();
    float s[RM][RN], dp[RM][RN];
    scores<RM, RN, DP, LQ, LK>(s, sQ, sK, ty, tx);
    zero(dp);
    tile_mma<RM, RN, DVP>(
        dp, [&](int i, int e) { return sO[(ty + 16 * i) * LO + e]; },
        [&](int j, int e) { return sV[(tx + 16 * j) * LV + e]; });
#pragma unroll
    for (int i = 0; i < RM; ++i) {
      const int r = ty + 16 * i, qi = q0 + r;
#pragma unroll
      for (int j = 0; j < RN; ++j) {
        const bool on = qi < TQ && visible<C>(qi, k0 + tx + 16 * j);
        const float p = on ? exp2f(s[i][j] * C::qscale - sL[r]) : 0.f;
        sP[r * LP + tx + 16 * j] = p;
        sS[r * LP + tx + 16 * j] = p * (dp[i][j] - sD[r]);
      }
    }
    __syncthreads();
    tile_mma<RN, DVJ, BM>(
        dv, [&](int i, int r) { return sP[r * LP + ty + 16 * i]; },
        [&](int jj, int r) { return sO[r * LO + tx + 16 * jj]; });
    tile_mma<RN, DJ, BM>(
        dk, [&](int i, int r) { return sS[r * LP + ty + 16 * i]; },
        [&](int jj, int r) { return sQ[r * LQ + tx + 16 * jj]; });
  }
#pragma unroll
  for (int i = 0; i < RN; ++i) {
    const int kj = k0 + ty + 16 * i;
    if (kj >= TK)
      continue;
    if constexpr (C::has_dk) {
#pragma unroll
      for (int jj = 0; jj < DJ; ++jj) {
        const int e = tx + 16 * jj;
        if (e < D)
          kiln_store(d_key + C::d_key_layout::base(bh) +
                         (idx_t)kj * C::d_key_layout::row + e,
                     dk[i][jj] * C::scale);
      }
    }
    if constexpr (C::has_dv) {
#pragma unroll
      for (int jj = 0; jj < DVJ; ++jj) {
        const int e = tx + 16 * jj;
        if (e < DV)
          kiln_store(d_value + C::d_value_layout::base(bh) +
                         (idx_t)kj * C::d_value_layout::row + e,
                     dv[i][jj]);
      }
    }
  }
}

} // namespace attention
} // namespace kiln
