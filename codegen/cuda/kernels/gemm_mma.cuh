//===- gemm_mma.cuh - GEMM on tensor cores through mma.sync ---------------===//
//
// bf16/f16 through mma.sync m16n8k16, f32 through m16n8k8 tf32 (operands
// rounded with cvt.rna.tf32), f32 accumulation. Tiles are copied with
// cp.async into a STAGES-deep ring of padded (bank conflict free) shared
// tiles that keep each operand's global layout; bf16/f16 fragments are read
// with ldmatrix (.trans for M/N-major operands, so transposes need no
// transposing pass), tf32 fragments with scalar shared loads. Tails are
// zero-filled (cp.async src-size 0). An operand whose contiguous dimension
// is not a multiple of 16 bytes (Cfg::A_VEC / B_VEC false) is loaded
// element by element (slower, same pipeline).
//
// Cfg (gemm_common.cuh) adds WARPS_M x WARPS_N warps, STAGES and
// MIN_BLOCKS. The block is (WARPS_M * WARPS_N * 32) threads; grid.x runs
// over output tiles, grid.z over (problem, batch, split) in a strided loop.
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/cp_async.cuh"
#include "kiln/gemm_common.cuh"
#include "kiln/mma.cuh"

namespace kiln {
namespace gemm {

template <class Cfg> struct mma_tiles {
  typedef typename Cfg::element T;
  static constexpr int THREADS = Cfg::WARPS_M * Cfg::WARPS_N * 32;
  static constexpr int WM = Cfg::BM / Cfg::WARPS_M, WN = Cfg::BN / Cfg::WARPS_N;
  static constexpr int MT = WM / 16, NT = WN / 8;
  static constexpr int KSTEP = Cfg::TF32 ? 8 : 16;
  static constexpr int VEC = 16 / (int)sizeof(T);
  static constexpr int A_ROWS = mma_tile_rows(Cfg::A_KMAJOR, Cfg::BM, Cfg::BK);
  static constexpr int A_COLS = mma_tile_cols(Cfg::A_KMAJOR, Cfg::BM, Cfg::BK);
  static constexpr int A_LD = mma_tile_ld(Cfg::A_KMAJOR, Cfg::BM, Cfg::BK, Cfg::TF32);
  static constexpr int B_ROWS = mma_tile_rows(Cfg::B_KMAJOR, Cfg::BN, Cfg::BK);
  static constexpr int B_COLS = mma_tile_cols(Cfg::B_KMAJOR, Cfg::BN, Cfg::BK);
  static constexpr int B_LD = mma_tile_ld(Cfg::B_KMAJOR, Cfg::BN, Cfg::BK, Cfg::TF32);
  static constexpr int A_STAGE = mma_stage_elements(Cfg::A_KMAJOR, Cfg::BM, Cfg::BK, Cfg::TF32);
  static constexpr int B_STAGE = mma_stage_elements(Cfg::B_KMAJOR, Cfg::BN, Cfg::BK, Cfg::TF32);
  static_assert(MT >= 1 && NT % 2 == 0 && Cfg::BK % KSTEP == 0, "bad warp tile");
  static_assert((A_LD * (int)sizeof(T)) % 16 == 0 && (B_LD * (int)sizeof(T)) % 16 == 0,
                "shared rows must stay 16-byte aligned");
};

// Copies rows [r0, r0 + R) x columns [c0, c0 + C) of a GROWS x GCOLS row-major
// matrix into a shared tile with leading dimension LD; outside the matrix the
// tile is zero. VEC_COPY: 16-byte cp.async (GCOLS % VEC == 0, so a chunk is
// either wholly inside or wholly outside); otherwise element by element.
template <class Cfg, int R, int C, int LD, typename Cfg::index GROWS,
          typename Cfg::index GCOLS, bool VEC_COPY>
__device__ __forceinline__ void mma_load_tile(typename Cfg::element *s,
                                              const typename Cfg::element *__restrict__ g,
                                              typename Cfg::index r0, typename Cfg::index c0,
                                              int tid) {
  typedef typename Cfg::index idx;
  typedef typename Cfg::element T;
  constexpr int THREADS = mma_tiles<Cfg>::THREADS;
  constexpr int VEC = mma_tiles<Cfg>::VEC;
  if constexpr (VEC_COPY) {
    constexpr int PER_ROW = C / VEC;
    constexpr int CHUNKS = R * PER_ROW;
    static_assert(C % VEC == 0 && CHUNKS % THREADS == 0, "chunks must divide among threads");
#pragma unroll
    for (int i = 0; i < CHUNKS / THREADS; ++i) {
      const int chunk = tid + i * THREADS;
      const int row = chunk / PER_ROW, col = (chunk % PER_ROW) * VEC;
      const idx gr = r0 + row, gc = c0 + col;
      const bool valid = gr < GROWS && gc < GCOLS;
      const T *src = valid ? g + gr * GCOLS + gc : g;
      const unsigned dst = (unsigned)__cvta_generic_to_shared(s + row * LD + col);
      cp_async::cache_global(dst, src, valid ? 16 : 0);
    }
  } else {
    constexpr int ELEMS = R * C;
    static_assert(ELEMS % THREADS == 0, "elements must divide among threads");
#pragma unroll 4
    for (int i = 0; i < ELEMS / THREADS; ++i) {
      const int e = tid + i * THREADS;
      const int row = e / C, col = e % C;
      const idx gr = r0 + row, gc = c0 + col;
      s[row * LD + col] = (gr < GROWS && gc < GCOLS) ? g[gr * GCOLS + gc] : T(0.0f);
    }
  }
}

// A (16 x KSTEP at rows m_base, k kk) from its shared tile into an mma
// fragment.
template <class Cfg>
__device__ __forceinline__ void mma_fragment_a(unsigned (&a)[4], const typename Cfg::element *t,
                                               int m_base, int kk, int lane) {
  constexpr int LD = mma_tiles<Cfg>::A_LD;
  if constexpr (Cfg::TF32) {
    const int g = lane >> 2, q = lane & 3;
    // a0 (g, q), a1 (g + 8, q), a2 (g, q + 4), a3 (g + 8, q + 4)
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int m = m_base + g + (i & 1) * 8, k = kk + q + (i >> 1) * 4;
      a[i] = mma::to_tf32(Cfg::A_KMAJOR ? t[m * LD + k] : t[k * LD + m]);
    }
  } else if constexpr (Cfg::A_KMAJOR) {
    // Matrices (rows 0-7 | 8-15) x (k 0-7 | 8-15) in fragment order.
    mma::ldmatrix_x4(a, t + (m_base + (lane & 15)) * LD + kk + (lane >> 4) * 8);
  } else {
    const int q = lane >> 3;
    mma::ldmatrix_x4_trans(a, t + (kk + (q >> 1) * 8 + (lane & 7)) * LD + m_base + (q & 1) * 8);
  }
}
// Fragments of two adjacent 8-column B tiles (n_base and n_base + 8).
template <class Cfg>
__device__ __forceinline__ void mma_fragment_b(unsigned (&b0)[2], unsigned (&b1)[2],
                                               const typename Cfg::element *t, int n_base, int kk,
                                               int lane) {
  constexpr int LD = mma_tiles<Cfg>::B_LD;
  if constexpr (Cfg::TF32) {
    const int g = lane >> 2, q = lane & 3;
    // b0 (k = q, n = g), b1 (k = q + 4, n = g)
#pragma unroll
    for (int j = 0; j < 2; ++j)
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        const int n = n_base + j * 8 + g, k = kk + q + i * 4;
        (j ? b1 : b0)[i] = mma::to_tf32(Cfg::B_KMAJOR ? t[n * LD + k] : t[k * LD + n]);
      }
  } else {
    unsigned r[4];
    const int q = lane >> 3;
    if constexpr (Cfg::B_KMAJOR)
      mma::ldmatrix_x4(r, t + (n_base + (q >> 1) * 8 + (lane & 7)) * LD + kk + (q & 1) * 8);
    else
      mma::ldmatrix_x4_trans(r, t + (kk + (q & 1) * 8 + (lane & 7)) * LD + n_base + (q >> 1) * 8);
    b0[0] = r[0];
    b0[1] = r[1];
    b1[0] = r[2];
    b1[1] = r[3];
  }
}

template <class Cfg, class Ops, class Epi, class Params>
__device__ __forceinline__ void mma_gemm(const launch_ctx &ctx, const Params &p) {
  typedef typename Cfg::index idx;
  typedef typename Cfg::element T;
  typedef shape<Cfg> S;
  typedef mma_tiles<Cfg> L;
  extern __shared__ __align__(16) unsigned char gemm_smem[];
  T *sA = reinterpret_cast<T *>(gemm_smem);
  T *sB = sA + Cfg::STAGES * L::A_STAGE;
  const int tid = ctx.thread.x, lane = tid & 31, warp = tid >> 5;
  const int warpM = warp / Cfg::WARPS_N, warpN = warp % Cfg::WARPS_N;
  idx tm, tn;
  tile_of<Cfg>(ctx.block.x, tm, tn);
  const idx m0 = tm * Cfg::BM, n0 = tn * Cfg::BN;

  for (long long z = ctx.block.z; z < (long long)Cfg::GROUPS * Cfg::GEMM_BATCH * Cfg::SPLIT;
       z += ctx.grid.z) {
    const idx b = (idx)(z / Cfg::SPLIT);
    const int split = (int)(z % Cfg::SPLIT);
    const int ktBegin = split * Cfg::KT_PER_SPLIT;
    const int ktEnd = S::KT_ALL < ktBegin + Cfg::KT_PER_SPLIT ? S::KT_ALL
                                                               : ktBegin + Cfg::KT_PER_SPLIT;
    const int nk = ktEnd > ktBegin ? ktEnd - ktBegin : 0;
    auto loadStage = [&](int stage, int kt) {
      const T *gA, *gB;
      idx k0;
      tile_operands<Cfg, Ops>(p, b, kt, gA, gB, k0);
      T *tA = sA + stage * L::A_STAGE;
      T *tB = sB + stage * L::B_STAGE;
      if constexpr (Cfg::A_KMAJOR)
        mma_load_tile<Cfg, L::A_ROWS, L::A_COLS, L::A_LD, S::A_GROWS, S::A_GCOLS, Cfg::A_VEC>(
            tA, gA, m0, k0, tid);
      else
        mma_load_tile<Cfg, L::A_ROWS, L::A_COLS, L::A_LD, S::A_GROWS, S::A_GCOLS, Cfg::A_VEC>(
            tA, gA, k0, m0, tid);
      if constexpr (Cfg::B_KMAJOR)
        mma_load_tile<Cfg, L::B_ROWS, L::B_COLS, L::B_LD, S::B_GROWS, S::B_GCOLS, Cfg::B_VEC>(
            tB, gB, n0, k0, tid);
      else
        mma_load_tile<Cfg, L::B_ROWS, L::B_COLS, L::B_LD, S::B_GROWS, S::B_GCOLS, Cfg::B_VEC>(
            tB, gB, k0, n0, tid);
    };

    float acc[L::MT][L::NT][4];
#pragma unroll
    for (int i = 0; i < L::MT; ++i)
#pragma unroll
      for (int j = 0; j < L::NT; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e)
          acc[i][j][e] = 0.0f;

    // Pipeline: tiles 0 .. STAGES-2 in flight, then per iteration wait for
    // the oldest, refill the stage consumed in the previous iteration, and
    // multiply. One commit group per tile (empty groups at the end).
#pragma unroll
    for (int s = 0; s < Cfg::STAGES - 1; ++s) {
      if (s < nk)
        loadStage(s, ktBegin + s);
      cp_async::commit();
    }
    for (int i = 0; i < nk; ++i) {
      cp_async::wait<Cfg::STAGES - 2>();
      __syncthreads();
      const int next = i + Cfg::STAGES - 1;
      if (next < nk)
        loadStage(next % Cfg::STAGES, ktBegin + next);
      cp_async::commit();
      const T *tA = sA + (i % Cfg::STAGES) * L::A_STAGE;
      const T *tB = sB + (i % Cfg::STAGES) * L::B_STAGE;
#pragma unroll
      for (int kk = 0; kk < Cfg::BK; kk += L::KSTEP) {
        unsigned af[L::MT][4], bf[L::NT][2];
#pragma unroll
        for (int mt = 0; mt < L::MT; ++mt)
          mma_fragment_a<Cfg>(af[mt], tA, warpM * L::WM + mt * 16, kk, lane);
#pragma unroll
        for (int nt = 0; nt < L::NT; nt += 2)
          mma_fragment_b<Cfg>(bf[nt], bf[nt + 1], tB, warpN * L::WN + nt * 8, kk, lane);
#pragma unroll
        for (int mt = 0; mt < L::MT; ++mt)
#pragma unroll
          for (int nt = 0; nt < L::NT; ++nt)
            mma::fma<Cfg::KIND>(acc[mt][nt], af[mt], bf[nt]);
      }
    }
    cp_async::wait<0>();
    // The next batch iteration refills the stages.
    __syncthreads();

    // Accumulator (g, 2q..2q+1) and (g + 8, 2q..2q+1) of each 16x8 tile.
    const int g = lane >> 2, q = lane & 3;
#pragma unroll
    for (int mt = 0; mt < L::MT; ++mt)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const idx row = m0 + warpM * L::WM + mt * 16 + g + half * 8;
        if (row >= Cfg::ROWS)
          continue;
        const idx r = b * Cfg::ROWS + row;
#pragma unroll
        for (int nt = 0; nt < L::NT; ++nt) {
          const idx c = n0 + warpN * L::WN + nt * 8 + q * 2;
          emit_pair<Cfg, Epi>(p, split, r, c, acc[mt][nt][half * 2], acc[mt][nt][half * 2 + 1]);
        }
      }
  }
}

} // namespace gemm
} // namespace kiln
