//===- gemm_simt.cuh - exact f32 GEMM on CUDA cores -----------------------===//
//
// FMA in f32, TM x TN outputs per thread from double-buffered shared tiles
// (BK = 8 deep per slice). With SLICES > 1 the block's threads form that
// many K slices: each shared K tile (BK deep) is split into BK / SLICES
// rows per slice, and at the end slice 0 adds the other slices' sums in
// slice order (split-K within the block: parallelism for small, deep
// problems in one launch).
//
// Cfg (gemm_common.cuh) adds TM, TN, SLICES and MIN_BLOCKS. The block is
// simt_slice_threads(BM, BN, TM, TN) * SLICES threads; the grid as for
// mma_gemm.
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/gemm_common.cuh"

namespace kiln {
namespace gemm {

template <class Cfg, class Ops, class Epi, class Params>
__device__ __forceinline__ void simt_gemm(const launch_ctx &ctx, const Params &p) {
  typedef typename Cfg::index idx;
  typedef shape<Cfg> S;
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, TM = Cfg::TM, TN = Cfg::TN;
  constexpr int TX = BN / TN;
  constexpr int SLICE_THREADS = simt_slice_threads(BM, BN, TM, TN);
  constexpr int THREADS = SLICE_THREADS * Cfg::SLICES;
  constexpr int SLICE_K = BK / Cfg::SLICES;
  static_assert(SLICE_K * Cfg::SLICES == BK, "slices must divide the K tile");
  constexpr int EA = BM * BK / THREADS;
  constexpr int EB = BN * BK / THREADS;
  static_assert(BM * BK % THREADS == 0 && BN * BK % THREADS == 0, "bad tile");
  static_assert(TM % 4 == 0 && TN % 4 == 0, "thread tiles are float4 groups");

  // Dynamic shared memory (its size is the launch's), so that kernels
  // merged into one launch share it instead of adding up.
  // [buffer][k][m or n], m/n contiguous (simt_ld pads the rows).
  extern __shared__ __align__(16) unsigned char gemm_smem[];
  typedef float TileA[2][BK][simt_ld(BM)];
  typedef float TileB[2][BK][simt_ld(BN)];
  TileA &sA = *reinterpret_cast<TileA *>(gemm_smem);
  TileB &sB = *reinterpret_cast<TileB *>(gemm_smem + sizeof(TileA));
  // The other slices' sums, [slice - 1][output of the thread][thread].
  float *sRed = reinterpret_cast<float *>(gemm_smem + sizeof(TileA) + sizeof(TileB));
  const int tid = ctx.thread.x, slice = tid / SLICE_THREADS, lt = tid % SLICE_THREADS;
  const int ty = lt / TX, tx = lt % TX;
  idx tm, tn;
  tile_of<Cfg>(ctx.block.x, tm, tn);
  const idx m0 = tm * BM, n0 = tn * BN;

  for (long long z = ctx.block.z; z < (long long)Cfg::GROUPS * Cfg::GEMM_BATCH * Cfg::SPLIT;
       z += ctx.grid.z) {
    const idx b = (idx)(z / Cfg::SPLIT);
    const int split = (int)(z % Cfg::SPLIT);
    const int ktBegin = split * Cfg::KT_PER_SPLIT;
    const int ktEnd = S::KT_ALL < ktBegin + Cfg::KT_PER_SPLIT ? S::KT_ALL
                                                               : ktBegin + Cfg::KT_PER_SPLIT;
    const int nk = ktEnd > ktBegin ? ktEnd - ktBegin : 0;
    // Element e of a tile: consecutive threads walk the global contiguous
    // dimension (coalesced); (ml, kl) / (nl, kl) are its tile coordinates.
    float ra[EA], rb[EB];
    auto fetch = [&](int kt) {
      const float *gA, *gB;
      idx k0;
      tile_operands<Cfg, Ops>(p, b, kt, gA, gB, k0);
#pragma unroll
      for (int i = 0; i < EA; ++i) {
        const int e = tid + i * THREADS;
        const int kl = Cfg::A_KMAJOR ? e % BK : e / BM;
        const int ml = Cfg::A_KMAJOR ? e / BK : e % BM;
        const idx gm = m0 + ml, gk = k0 + kl;
        ra[i] = (gm < Cfg::ROWS && gk < Cfg::K)
                    ? gA[Cfg::A_KMAJOR ? gm * Cfg::K + gk : gk * Cfg::ROWS + gm]
                    : 0.0f;
      }
#pragma unroll
      for (int i = 0; i < EB; ++i) {
        const int e = tid + i * THREADS;
        const int kl = Cfg::B_KMAJOR ? e % BK : e / BN;
        const int nl = Cfg::B_KMAJOR ? e / BK : e % BN;
        const idx gn = n0 + nl, gk = k0 + kl;
        rb[i] = (gn < Cfg::N && gk < Cfg::K)
                    ? gB[Cfg::B_KMAJOR ? gn * Cfg::K + gk : gk * Cfg::N + gn]
                    : 0.0f;
      }
    };
    auto stash = [&](int buf) {
#pragma unroll
      for (int i = 0; i < EA; ++i) {
        const int e = tid + i * THREADS;
        sA[buf][Cfg::A_KMAJOR ? e % BK : e / BM][Cfg::A_KMAJOR ? e / BK : e % BM] = ra[i];
      }
#pragma unroll
      for (int i = 0; i < EB; ++i) {
        const int e = tid + i * THREADS;
        sB[buf][Cfg::B_KMAJOR ? e % BK : e / BN][Cfg::B_KMAJOR ? e / BK : e % BN] = rb[i];
      }
    };

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int j = 0; j < TN; ++j)
        acc[i][j] = 0.0f;
    if (nk > 0) {
      fetch(ktBegin);
      stash(0);
    }
    __syncthreads();
    for (int i = 0; i < nk; ++i) {
      const int buf = i & 1;
      if (i + 1 < nk)
        fetch(ktBegin + i + 1);
#pragma unroll
      for (int kk = slice * SLICE_K; kk < (slice + 1) * SLICE_K; ++kk) {
        float a[TM], bv[TN];
#pragma unroll
        for (int v = 0; v < TM / 4; ++v) {
          const float4 x =
              *reinterpret_cast<const float4 *>(&sA[buf][kk][simt_row_of(BM, TM, ty, v * 4)]);
          a[v * 4] = x.x, a[v * 4 + 1] = x.y, a[v * 4 + 2] = x.z, a[v * 4 + 3] = x.w;
        }
#pragma unroll
        for (int v = 0; v < TN / 4; ++v) {
          const float4 x =
              *reinterpret_cast<const float4 *>(&sB[buf][kk][simt_row_of(BN, TN, tx, v * 4)]);
          bv[v * 4] = x.x, bv[v * 4 + 1] = x.y, bv[v * 4 + 2] = x.z, bv[v * 4 + 3] = x.w;
        }
#pragma unroll
        for (int u = 0; u < TM; ++u)
#pragma unroll
          for (int v = 0; v < TN; ++v)
            acc[u][v] = fmaf(a[u], bv[v], acc[u][v]);
      }
      if (i + 1 < nk)
        stash(buf ^ 1);
      __syncthreads();
    }
    if constexpr (Cfg::SLICES > 1) {
      // sRed is written again only after the next batch iteration's first
      // __syncthreads, which slice 0 reaches after reading it here.
      if (slice > 0) {
#pragma unroll
        for (int u = 0; u < TM; ++u)
#pragma unroll
          for (int v = 0; v < TN; ++v)
            sRed[((slice - 1) * TM * TN + u * TN + v) * SLICE_THREADS + lt] = acc[u][v];
      }
      __syncthreads();
      if (slice > 0)
        continue;
#pragma unroll
      for (int s = 0; s < Cfg::SLICES - 1; ++s)
#pragma unroll
        for (int u = 0; u < TM; ++u)
#pragma unroll
          for (int v = 0; v < TN; ++v)
            acc[u][v] += sRed[(s * TM * TN + u * TN + v) * SLICE_THREADS + lt];
    }

#pragma unroll
    for (int u = 0; u < TM; ++u) {
      const idx row = m0 + simt_row_of(BM, TM, ty, u);
      if (row >= Cfg::ROWS)
        continue;
      const idx r = b * Cfg::ROWS + row;
#pragma unroll
      for (int v = 0; v < TN; v += 2)
        emit_pair<Cfg, Epi>(p, split, r, n0 + simt_row_of(BN, TN, tx, v), acc[u][v],
                            acc[u][v + 1]);
    }
  }
}

} // namespace gemm
} // namespace kiln
