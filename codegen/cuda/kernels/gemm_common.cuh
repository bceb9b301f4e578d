//===- gemm_common.cuh - what every GEMM kernel template shares -----------===//
//
// A GEMM kernel is instantiated with three generated types:
//  - Cfg, the configuration: `element` (the operand type) and `index` (int or
//    long long, element offsets and indices) types, and static constexpr
//    members: the problem (M, N, K, BATCH, GEMM_BATCH and ROWS, the batch
//    folded into the rows when the rhs is shared; OUT_ROWS, the rows of every
//    output, r = batch * M + m; GROUPS, problems of one shape whose outputs
//    are stacked; KSUMS, problems whose products are summed over their
//    concatenated K), the operand layouts (A_KMAJOR: lhs stored [M][K];
//    B_KMAJOR: rhs stored [N][K]; A_VEC / B_VEC: 16-byte copies are legal),
//    KIND (0 bf16, 1 f16, 2 tf32/f32), TF32, the tile (BM, BN, BK, GROUP_M
//    and the kernel's own members) and the split of K (SPLIT,
//    KT_PER_SPLIT);
//  - Ops, the operand matrices: `lhs(p, b)` and `rhs(p, b)` of GEMM batch b
//    (batches of problem g follow those of problem g - 1);
//  - Epi, the fused epilogue at output row r, column c: `store(p, r, c,
//    acc)`, `store_pair(p, r, c, acc0, acc1)` (c even; c + 1 may lie past
//    the end), `store_pair_in` (both columns inside the output) and, for
//    the staged epilogue of gemm_tma.cuh, `store_run_in(p, r, c, acc[8])`
//    (columns c .. c + 7, c a multiple of 8, inside the output) and, for
//    its TMA stores, `store_run_staged(p, r, c, acc[8], slot)` (the first
//    result to shared address `slot`, the others to memory); for
//    gemm_tma.cuh also `kPrefetch` and `prefetch_row(p, r, c, n)`: columns
//    c .. c + n - 1 of row r of the tensors of the product's shape the
//    epilogue reads, asked of the L2.
// The parameters `p` are a generated struct with a `float *scratch`: the f32
// partial products of split-K.
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/gemm_layout.cuh"
#include "kiln/memory.cuh"
#include "kiln/prelude.cuh"

namespace kiln {
namespace gemm {

// Asks the L2 cache for `count` elements at `p` ahead of their loads: one
// prefetch per 128-byte line, through the load path (a bulk prefetch would
// queue on the copy engine behind the producer's tensor copies).
template <typename T>
__device__ __forceinline__ void prefetch_l2(const T *p, unsigned count) {
  const unsigned long long begin = reinterpret_cast<unsigned long long>(p);
  const unsigned long long end = begin + (unsigned long long)count * sizeof(T);
  for (unsigned long long line = begin & ~127ull; line < end; line += 128)
    mem::prefetch_l2_line(line);
}

// Sizes derived from a configuration.
template <class Cfg> struct shape {
  typedef typename Cfg::index idx;
  static constexpr idx TILES_M = (Cfg::ROWS + Cfg::BM - 1) / Cfg::BM;
  static constexpr idx TILES_N = (Cfg::N + Cfg::BN - 1) / Cfg::BN;
  // K tiles of one problem, and of the concatenated K of summed problems.
  static constexpr int KT = (int)((Cfg::K + Cfg::BK - 1) / Cfg::BK);
  static constexpr int KT_ALL = Cfg::KSUMS * KT;
  // Outputs of every problem, rows stacked problem after problem.
  static constexpr idx TOTAL = Cfg::GROUPS * Cfg::OUT_ROWS * Cfg::N;
  // Global matrices of one batch: A is [rows][K] or [K][rows], B [N][K] or
  // [K][N].
  static constexpr idx A_GROWS = Cfg::A_KMAJOR ? Cfg::ROWS : Cfg::K;
  static constexpr idx A_GCOLS = Cfg::A_KMAJOR ? Cfg::K : Cfg::ROWS;
  static constexpr idx B_GROWS = Cfg::B_KMAJOR ? Cfg::N : Cfg::K;
  static constexpr idx B_GCOLS = Cfg::B_KMAJOR ? Cfg::K : Cfg::N;
};

// Block index -> (tile row, tile column) in the grouped order.
template <class Cfg>
__device__ __forceinline__ void tile_of(typename Cfg::index pid,
                                        typename Cfg::index &tm,
                                        typename Cfg::index &tn) {
  typedef typename Cfg::index idx;
  grouped_tile<idx>(pid, shape<Cfg>::TILES_M, shape<Cfg>::TILES_N,
                    (idx)Cfg::GROUP_M, tm, tn);
}

// The operand matrices of K tile kt of GEMM batch b and the tile's first k.
// When the products of several problems are summed (KSUMS > 1), tile kt
// belongs to problem kt / KT: one accumulation over their concatenated K.
template <class Cfg, class Ops, class Params>
__device__ __forceinline__ void
tile_operands(const Params &p, typename Cfg::index b, int kt,
              const typename Cfg::element *&a,
              const typename Cfg::element *&bm, typename Cfg::index &k0) {
  typedef typename Cfg::index idx;
  constexpr int KT = shape<Cfg>::KT;
  if constexpr (Cfg::KSUMS == 1) {
    a = Ops::lhs(p, b);
    bm = Ops::rhs(p, b);
    k0 = (idx)kt * Cfg::BK;
  } else {
    const int g = kt / (KT > 0 ? KT : 1);
    a = Ops::lhs(p, g * Cfg::GEMM_BATCH + b);
    bm = Ops::rhs(p, g * Cfg::GEMM_BATCH + b);
    k0 = (idx)(kt - g * KT) * Cfg::BK;
  }
}

// Two f32 as one register of storage elements (the first in the low half),
// and back.
template <class E> __device__ __forceinline__ unsigned pack(float lo, float hi);
template <>
__device__ __forceinline__ unsigned pack<__nv_bfloat16>(float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<unsigned *>(&v);
}
template <>
__device__ __forceinline__ unsigned pack<__half>(float lo, float hi) {
  __half2 v = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<unsigned *>(&v);
}
template <class E>
__device__ __forceinline__ void unpack(unsigned w, float &lo, float &hi);
template <>
__device__ __forceinline__ void unpack<__nv_bfloat16>(unsigned w, float &lo,
                                                      float &hi) {
  const float2 v = __bfloat1622float2(*reinterpret_cast<__nv_bfloat162 *>(&w));
  lo = v.x;
  hi = v.y;
}
template <>
__device__ __forceinline__ void unpack<__half>(unsigned w, float &lo,
                                               float &hi) {
  const float2 v = __half22float2(*reinterpret_cast<__half2 *>(&w));
  lo = v.x;
  hi = v.y;
}

// Two adjacent elements with one store (p is aligned to two elements).
__device__ __forceinline__ void store2(float *p, float a, float b) {
  *reinterpret_cast<float2 *>(p) = make_float2(a, b);
}
__device__ __forceinline__ void store2(__nv_bfloat16 *p, float a, float b) {
  *reinterpret_cast<__nv_bfloat162 *>(p) = __floats2bfloat162_rn(a, b);
}
__device__ __forceinline__ void store2(__half *p, float a, float b) {
  *reinterpret_cast<__half2 *>(p) = __floats2half2_rn(a, b);
}

// Result I of a run of consecutive columns (res[e][I] at column c + e),
// rounded to T and stored in 16-byte pieces (dst is aligned to the run).
template <int I, class T, int RUN, int COUNT>
__device__ __forceinline__ void store_run(T *dst,
                                          const float (&res)[RUN][COUNT]) {
  alignas(16) T v[RUN];
#pragma unroll
  for (int e = 0; e < RUN; ++e)
    kiln_store(&v[e], res[e][I]);
  kiln_store_vec<RUN>(dst, v);
}

// Result I of a run of 8 consecutive columns, rounded to T, as one 16-byte
// store to shared address `slot` (the staging a TMA store reads).
template <int I, class T, int COUNT>
__device__ __forceinline__ void stage_run(unsigned slot,
                                          const float (&res)[8][COUNT]) {
  unsigned w[4];
#pragma unroll
  for (int e = 0; e < 4; ++e)
    w[e] = pack<T>(res[2 * e][I], res[2 * e + 1][I]);
  mem::store_shared(slot, w);
}

// Product values at output row r, columns c and c + 1 (c even): the fused
// epilogue, or the f32 partial product of split `split`. INSIDE: both
// columns are known to lie inside the output (no test).
template <class Cfg, class Epi, bool INSIDE = false, class Params>
__device__ __forceinline__ void emit_pair(const Params &p, int split,
                                          typename Cfg::index r,
                                          typename Cfg::index c, float v0,
                                          float v1) {
  if constexpr (Cfg::SPLIT == 1) {
    if constexpr (INSIDE)
      Epi::store_pair_in(p, r, c, v0, v1);
    else
      Epi::store_pair(p, r, c, v0, v1);
  } else {
    float *dst = p.scratch + split * shape<Cfg>::TOTAL + r * Cfg::N + c;
    if (INSIDE || c + 1 < Cfg::N) {
      if constexpr (Cfg::N % 2 == 0) {
        *reinterpret_cast<float2 *>(dst) = make_float2(v0, v1);
      } else {
        dst[0] = v0;
        dst[1] = v1;
      }
    } else if (c < Cfg::N) {
      dst[0] = v0;
    }
  }
}

} // namespace gemm
} // namespace kiln
