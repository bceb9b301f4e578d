//===- attention_common.cuh - pieces of the flash-attention kernels -------===//
//
// What the forward and backward kernels share: the tile sizes derived from a
// configuration, the causal mask, strided [B, H, T, D] addressing, tile loads
// into shared memory, the per-thread tile product, row reductions over the
// 16 threads of a row, the score tile and the online-softmax max step.
//
// A configuration `C` (written by the planner) has:
//   elem_t, idx_t                     storage element and index types
//   tq, tk, d, dv                     query/key lengths, q/k and v head dims
//   tile                              query and key tile rows (64, 32, 16)
//   causal, scale, qscale             the mask, the scale, scale * log2(e)
//   q_layout, k_layout, ...           a strided<> per tensor the kernel uses
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/attention_layout.cuh"
#include "kiln/prelude.cuh"

namespace kiln {
namespace attention {

__device__ __forceinline__ float inf() { return __int_as_float(0x7f800000); }

// A row's log-sum-exp in natural log (kiln.attention's row_lse) from its
// running maximum m of the scores times scale * log2(e) and its sum of
// exp2(score * qscale - m); -inf for a row that saw no key.
__device__ __forceinline__ float natural_lse(float m, float sum) {
  return sum > 0.f ? (m + log2f(sum)) * 0.6931471805599453f : -inf();
}

// Tile sizes, per-thread fragment counts and shared row strides of `C`.
template <class C> struct dims {
  static constexpr int TQ = C::tq, TK = C::tk, D = C::d, DV = C::dv;
  static constexpr int DP = pad16(D), DVP = pad16(DV);
  static constexpr int BM = C::tile, BN = C::tile;
  static constexpr int QT = (TQ + BM - 1) / BM, KT = (TK + BN - 1) / BN;
  static constexpr int RM = BM / kGrid, RN = BN / kGrid;
  static constexpr int DJ = DP / kGrid, DVJ = DVP / kGrid;
  static constexpr int LQ = head_ld(DP), LK = head_ld(DP);
  static constexpr int LV = head_ld(DVP), LO = head_ld(DVP);
  static constexpr int LP = score_ld(BM);
};

// Key kj is visible to query qi (causal mask aligned to the ends: key j is
// visible to query i when j <= i + Tk - Tq).
template <class C> __device__ __forceinline__ bool visible(int qi, int kj) {
  return kj < C::tk && (!C::causal || kj <= qi + (C::tk - C::tq));
}

// The dynamic shared memory as floats.
__device__ __forceinline__ float *shared_floats() {
  extern __shared__ __align__(16) unsigned char kiln_attention_smem[];
  return reinterpret_cast<float *>(kiln_attention_smem);
}

// Rows [row0, row0 + ROWS) of a [t, W] matrix with rows RS elements apart
// into shared [ROWS][LD] as f32 times `mul`; zeros beyond t rows and W
// columns (up to WP).
template <class C, int ROWS, int W, int WP, int LD, long long RS>
__device__ __forceinline__ void
load_tile(const launch_ctx &ctx, float *dst,
          const typename C::elem_t *__restrict__ src, int row0, int t,
          float mul) {
  typedef typename C::idx_t idx_t;
  for (int idx = ctx.thread.x; idx < ROWS * WP; idx += kThreads) {
    const int r = idx / WP, e = idx % WP;
    float v = 0.f;
    if (row0 + r < t && e < W)
      v = kiln_load(src[(idx_t)(row0 + r) * RS + e]) * mul;
    dst[r * LD + e] = v;
  }
}

// acc[i][j] += sum_k a(i, k) * b(j, k) for this thread's RI x RJ outputs.
template <int RI, int RJ, int K, class A, class B>
__device__ __forceinline__ void tile_mma(float (&acc)[RI][RJ], A a, B b) {
#pragma unroll 4
  for (int k = 0; k < K; ++k) {
    float av[RI], bv[RJ];
#pragma unroll
    for (int i = 0; i < RI; ++i)
      av[i] = a(i, k);
#pragma unroll
    for (int j = 0; j < RJ; ++j)
      bv[j] = b(j, k);
#pragma unroll
    for (int i = 0; i < RI; ++i)
#pragma unroll
      for (int j = 0; j < RJ; ++j)
        acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
  }
}

// Max and sum over the 16 threads (tx) that share a row.
__device__ __forceinline__ float row_max(float v) {
#pragma unroll
  for (int o = 8; o > 0; o /= 2)
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ __forceinline__ float row_sum(float v) {
#pragma unroll
  for (int o = 8; o > 0; o /= 2)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

template <int R, int N> __device__ __forceinline__ void zero(float (&a)[R][N]) {
#pragma unroll
  for (int i = 0; i < R; ++i)
#pragma unroll
    for (int j = 0; j < N; ++j)
      a[i][j] = 0.f;
}

// This thread's scores of a query tile against a key tile in shared memory:
// s[i][j] = q(row ty + 16 i) . k(row tx + 16 j).
template <int RM, int RN, int DP, int LQ, int LK>
__device__ __forceinline__ void scores(float (&s)[RM][RN], const float *sQ,
                                       const float *sK, int ty, int tx) {
  zero(s);
  tile_mma<RM, RN, DP>(
      s, [&](int i, int e) { return sQ[(ty + 16 * i) * LQ + e]; },
      [&](int j, int e) { return sK[(tx + 16 * j) * LK + e]; });
}

// Masks the scores of the key tile at k0 and advances the online softmax of
// rows q0 + ty + 16 i: m becomes the running row maximum, l is rescaled to
// it, and alpha holds the factor for sums kept elsewhere (a row masked so
// far keeps maximum -inf and factor 1).
template <class C, int RM, int RN>
__device__ __forceinline__ void online_max(float (&s)[RM][RN], float (&m)[RM],
                                           float (&l)[RM], float (&alpha)[RM],
                                           int q0, int k0, int ty, int tx) {
#pragma unroll
  for (int i = 0; i < RM; ++i) {
    const int qi = q0 + ty + 16 * i;
    float mt = m[i];
#pragma unroll
    for (int j = 0; j < RN; ++j) {
      if (!visible<C>(qi, k0 + tx + 16 * j))
        s[i][j] = -inf();
      mt = fmaxf(mt, s[i][j]);
    }
    mt = row_max(mt);
    alpha[i] = mt == -inf() ? 1.f : exp2f(m[i] - mt);
    m[i] = mt;
    l[i] *= alpha[i];
  }
}

} // namespace attention
} // namespace kiln
