//===- conv_igemm.cuh - convolution passes as implicit GEMMs on tensor cores
//===//
//
// One kernel for the three passes of kiln.conv2d (forward, backward input,
// backward filter) in both layouts: the GEMM of conv_layout.cuh per group,
// with operand tiles gathered straight from the activations and the filter
// (no im2col buffer) into a STAGES-deep ring of shared tiles that keep each
// operand's contiguous dimension, and multiplied with mma.sync exactly as
// the GEMM kernel does (gemm_mma.cuh: ldmatrix fragments, .trans for
// M/N-major tiles). bf16/f16 run m16n8k16, f32 m16n8k8 tf32 either once
// (KIND 2, --tf32) or split into high and low tf32 parts over three
// products (KIND 3), which keeps f32's accuracy; f32 accumulation always.
//
// An operand whose gathered elements come in aligned runs of 16 bytes
// (channels last with a multiple of 8 channels, or the plain rows of the
// filter; conv_layout.cuh's a_vector/b_vector) is copied with cp.async,
// zero-filled in the padding; any other (3 input channels, channels-first
// windows) is gathered element by element: f32 elements by 4-byte
// cp.async, 16-bit ones loaded and stored by the threads into the stage of
// a tile STAGES - 1 ahead, after the tile in flight is multiplied.
//
// Cfg: the geometry of conv_layout.cuh and `element`, `index`, KIND (0 bf16,
// 1 f16, 2 tf32, 3 tf32 in three products), TF32 (KIND >= 2), BM, BN, BK,
// WARPS_M, WARPS_N, STAGES, A_KMAJOR, B_KMAJOR, A_VEC, B_VEC (from
// conv_layout.cuh), SPLIT and KT_PER_SPLIT (the K tiles of each split of
// the reduction). Params: `a` and `b`, the tensors the operands gather
// from, and `float *scratch` (SPLIT > 1: the f32 partial products). Epi,
// the fused epilogue of group g at GEMM row r and column c: `store(p, g,
// r, c, acc)` and `store_pair(p, g, r, c, acc0, acc1)` (c even, c + 1 may
// lie past the last column).
//
// grid.x runs over the output tiles, grid.z over (group, split) in a
// strided loop; the block is WARPS_M * WARPS_N * 32 threads.
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/conv_layout.cuh"
#include "kiln/cp_async.cuh"
#include "kiln/gemm_mma.cuh"

namespace kiln {
namespace conv {

template <class Cfg> struct igemm_shape {
  typedef typename Cfg::index idx;
  static constexpr idx ROWS = gemm_rows(Cfg{});
  static constexpr idx COLS = gemm_cols(Cfg{});
  static constexpr idx K = gemm_k(Cfg{});
  static constexpr idx TILES_M = (ROWS + Cfg::BM - 1) / Cfg::BM;
  static constexpr idx TILES_N = (COLS + Cfg::BN - 1) / Cfg::BN;
  static constexpr int KT = (int)((K + Cfg::BK - 1) / Cfg::BK);
  // The outputs of every group (the partial products of one split).
  static constexpr idx TOTAL = (idx)Cfg::GROUPS * ROWS * COLS;
};

// Columns c and c + 1 (c even; c + 1 may lie past the last) of GEMM row r
// of group g: through the epilogue, or into split `split`'s f32 partials.
template <class Cfg, class Epi, class Params>
__device__ __forceinline__ void
store_result(const Params &p, typename Cfg::index group, int split,
             typename Cfg::index r, typename Cfg::index c, float v0, float v1) {
  typedef typename Cfg::index idx;
  typedef igemm_shape<Cfg> S;
  if constexpr (Cfg::SPLIT == 1) {
    Epi::store_pair(p, group, r, c, v0, v1);
  } else {
    float *dst =
        p.scratch + (idx)split * S::TOTAL + (group * S::ROWS + r) * S::COLS + c;
    if (c < S::COLS)
      dst[0] = v0;
    if (c + 1 < S::COLS)
      dst[1] = v1;
  }
}

// One operand's tiles: A (rows x K tile) or B (columns x K tile), each
// element gathered through conv_layout.cuh's a_at / b_at.
template <class Cfg, bool IS_A> struct operand {
  typedef typename Cfg::index idx;
  typedef typename Cfg::element T;
  typedef igemm_shape<Cfg> S;
  static constexpr int THREADS = Cfg::WARPS_M * Cfg::WARPS_N * 32;
  static constexpr bool KMAJOR = IS_A ? Cfg::A_KMAJOR : Cfg::B_KMAJOR;
  static constexpr bool VEC = IS_A ? Cfg::A_VEC : Cfg::B_VEC;
  // Copied by cp.async (16-byte runs, or single 4-byte elements), rather
  // than loaded and stored by the threads (single 2-byte elements: cp.async
  // moves 4, 8 or 16 bytes).
  static constexpr bool ASYNC = VEC || sizeof(T) == 4;
  static constexpr int MN = IS_A ? Cfg::BM : Cfg::BN;
  static constexpr int LD = gemm::mma_tile_ld(KMAJOR, MN, Cfg::BK, Cfg::TF32);
  static constexpr int STAGE =
      gemm::mma_stage_elements(KMAJOR, MN, Cfg::BK, Cfg::TF32);
  // The tile's contiguous extent, and the elements one copy moves.
  static constexpr int CONTIGUOUS = KMAJOR ? Cfg::BK : MN;
  static constexpr int V = VEC ? 16 / (int)sizeof(T) : 1;
  static constexpr int PER_ROW = CONTIGUOUS / V;
  static constexpr int UNITS = (KMAJOR ? MN : Cfg::BK) * PER_ROW;
  static constexpr int PER_THREAD = UNITS / THREADS;
  static_assert(CONTIGUOUS % V == 0 && UNITS % THREADS == 0,
                "copies must divide among the threads");

  // Unit i of thread `tid`: its position in the shared tile and its operand
  // element (mn, k) relative to the tile's first. When the threads cover
  // whole rows of the tile, a thread keeps its column for every i, so that
  // what its column's gather computes (a pixel's coordinates) is computed
  // once.
  static __device__ __forceinline__ void unit(int tid, int i, int &at, int &mn,
                                              int &k) {
    int row, col;
    if constexpr (THREADS % PER_ROW == 0) {
      row = tid / PER_ROW + i * (THREADS / PER_ROW);
      col = (tid % PER_ROW) * V;
    } else {
      const int u = tid + i * THREADS;
      row = u / PER_ROW;
      col = (u % PER_ROW) * V;
    }
    at = row * LD + col;
    mn = KMAJOR ? row : col;
    k = KMAJOR ? col : row;
  }
  // The element offset of operand element (mn, k) of `group`, or -1 for a
  // zero (past the operand's edges, or the padding).
  static __device__ __forceinline__ idx offset(idx group, idx mn, idx k) {
    return operand_at<IS_A>(Cfg{}, group, mn, k);
  }

  // Copies in flight (ASYNC): 16-byte runs, or 4-byte elements, through
  // L1: the windows of neighbouring pixels overlap, so most of a tile's
  // gathers hit lines the tile's other taps brought in.
  static __device__ __forceinline__ void
  copy(T *s, const T *__restrict__ g, idx group, idx mn0, idx k0, int tid) {
    // Element copies unrolled by two: unrolled wholly, the compiler keeps
    // every element's address for the whole K loop and spills.
#pragma unroll(VEC ? PER_THREAD : 2)
    for (int i = 0; i < PER_THREAD; ++i) {
      int at, mn, k;
      unit(tid, i, at, mn, k);
      const idx off = offset(group, mn0 + mn, k0 + k);
      const T *src = off >= 0 ? g + off : g;
      const unsigned dst = (unsigned)__cvta_generic_to_shared(s + at);
      if constexpr (VEC)
        cp_async::cache_all<16>(dst, src, off >= 0 ? 16 : 0);
      else
        cp_async::cache_all<4>(dst, src, off >= 0 ? 4 : 0);
    }
  }
  // Element loads stored straight to the shared tile (not ASYNC), four in
  // flight per thread.
  static __device__ __forceinline__ void
  gather(T *s, const T *__restrict__ g, idx group, idx mn0, idx k0, int tid) {
#pragma unroll 4
    for (int i = 0; i < PER_THREAD; ++i) {
      int at, mn, k;
      unit(tid, i, at, mn, k);
      const idx off = offset(group, mn0 + mn, k0 + k);
      s[at] = off >= 0 ? g[off] : T(0.0f);
    }
  }
};

// f32 as a high tf32 part and the tf32 of the rest.
__device__ __forceinline__ void split_tf32(float x, unsigned &hi,
                                           unsigned &lo) {
  hi = mma::to_tf32(x);
  lo = mma::to_tf32(x - __uint_as_float(hi));
}

// KIND 3's fragments of A (16 x 8 at m_base, kk) and of two adjacent 8-column
// B tiles, high and low parts (the tf32 element order of gemm_mma.cuh).
template <class Cfg>
__device__ __forceinline__ void fragment_a_x3(unsigned (&hi)[4],
                                              unsigned (&lo)[4], const float *t,
                                              int m_base, int kk, int lane) {
  constexpr int LD = operand<Cfg, true>::LD;
  const int g = lane >> 2, q = lane & 3;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int m = m_base + g + (i & 1) * 8, k = kk + q + (i >> 1) * 4;
    split_tf32(Cfg::A_KMAJOR ? t[m * LD + k] : t[k * LD + m], hi[i], lo[i]);
  }
}
template <class Cfg>
__device__ __forceinline__ void
fragment_b_x3(unsigned (&hi)[2][2], unsigned (&lo)[2][2], const float *t,
              int n_base, int kk, int lane) {
  constexpr int LD = operand<Cfg, false>::LD;
  const int g = lane >> 2, q = lane & 3;
#pragma unroll
  for (int j = 0; j < 2; ++j)
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const int n = n_base + j * 8 + g, k = kk + q + i * 4;
      split_tf32(Cfg::B_KMAJOR ? t[n * LD + k] : t[k * LD + n], hi[j][i],
                 lo[j][i]);
    }
}

// acc += the products of one shared stage.
template <class Cfg, int MT, int NT>
__device__ __forceinline__ void
multiply_stage(float (&acc)[MT][NT][4], const typename Cfg::element *tA,
               const typename Cfg::element *tB, int m_warp, int n_warp,
               int lane) {
  constexpr int KSTEP = Cfg::TF32 ? 8 : 16;
#pragma unroll
  for (int kk = 0; kk < Cfg::BK; kk += KSTEP) {
    if constexpr (Cfg::KIND == 3) {
      // B's fragments pair by pair, so that only one pair's high and low
      // parts are live besides A's.
      unsigned ah[MT][4], al[MT][4];
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
        fragment_a_x3<Cfg>(ah[mt], al[mt], tA, m_warp + mt * 16, kk, lane);
#pragma unroll
      for (int nt = 0; nt < NT; nt += 2) {
        unsigned bh[2][2], bl[2][2];
        fragment_b_x3<Cfg>(bh, bl, tB, n_warp + nt * 8, kk, lane);
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
          for (int j = 0; j < 2; ++j) {
            // The small cross terms first, then the large product.
            mma::fma<2>(acc[mt][nt + j], al[mt], bh[j]);
            mma::fma<2>(acc[mt][nt + j], ah[mt], bl[j]);
            mma::fma<2>(acc[mt][nt + j], ah[mt], bh[j]);
          }
      }
    } else {
      unsigned af[MT][4], bf[NT][2];
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
        gemm::mma_fragment_a<Cfg>(af[mt], tA, m_warp + mt * 16, kk, lane);
#pragma unroll
      for (int nt = 0; nt < NT; nt += 2)
        gemm::mma_fragment_b<Cfg>(bf[nt], bf[nt + 1], tB, n_warp + nt * 8, kk,
                                  lane);
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int nt = 0; nt < NT; ++nt)
          mma::fma<Cfg::KIND>(acc[mt][nt], af[mt], bf[nt]);
    }
  }
}

template <class Cfg, class Epi, class Params>
__device__ __forceinline__ void igemm(const launch_ctx &ctx, const Params &p) {
  typedef typename Cfg::index idx;
  typedef typename Cfg::element T;
  typedef igemm_shape<Cfg> S;
  typedef operand<Cfg, true> A;
  typedef operand<Cfg, false> B;
  constexpr int WM = Cfg::BM / Cfg::WARPS_M, WN = Cfg::BN / Cfg::WARPS_N;
  constexpr int MT = WM / 16, NT = WN / 8;
  static_assert(MT >= 1 && NT % 2 == 0 && Cfg::BK % 16 == 0, "bad warp tile");
  extern __shared__ __align__(16) unsigned char conv_smem[];
  T *sA = reinterpret_cast<T *>(conv_smem);
  T *sB = sA + Cfg::STAGES * A::STAGE;
  const int tid = ctx.thread.x, lane = tid & 31, warp = tid >> 5;
  const int m_warp = (warp / Cfg::WARPS_N) * WM,
            n_warp = (warp % Cfg::WARPS_N) * WN;
  idx tm, tn;
  gemm::grouped_tile<idx>((idx)ctx.block.x, S::TILES_M, S::TILES_N, (idx)8, tm,
                          tn);
  const idx m0 = tm * Cfg::BM, n0 = tn * Cfg::BN;

  for (int z = ctx.block.z; z < Cfg::GROUPS * Cfg::SPLIT; z += ctx.grid.z) {
    const idx group = z / Cfg::SPLIT;
    const int split = z % Cfg::SPLIT;
    const int kt_begin = split * Cfg::KT_PER_SPLIT;
    const int kt_end = S::KT < kt_begin + Cfg::KT_PER_SPLIT
                           ? S::KT
                           : kt_begin + Cfg::KT_PER_SPLIT;
    const int nk = kt_end > kt_begin ? kt_end - kt_begin : 0;
    // Copies of tile kt into `stage` in flight, and the gathers of the
    // operands cp.async cannot copy.
    auto issue = [&](int stage, int kt) {
      const idx k0 = (idx)kt * Cfg::BK;
      if constexpr (A::ASYNC)
        A::copy(sA + stage * A::STAGE, p.a, group, m0, k0, tid);
      if constexpr (B::ASYNC)
        B::copy(sB + stage * B::STAGE, p.b, group, n0, k0, tid);
    };
    auto gather = [&](int stage, int kt) {
      const idx k0 = (idx)kt * Cfg::BK;
      if constexpr (!A::ASYNC)
        A::gather(sA + stage * A::STAGE, p.a, group, m0, k0, tid);
      if constexpr (!B::ASYNC)
        B::gather(sB + stage * B::STAGE, p.b, group, n0, k0, tid);
    };

    float acc[MT][NT][4];
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
      for (int j = 0; j < NT; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e)
          acc[i][j][e] = 0.0f;

          // Tiles 0 .. STAGES-2 in flight (gathers stored at once), then per
          // iteration: wait for the oldest, start tile i + STAGES - 1 into the
          // stage consumed in the previous iteration, multiply tile i, and then
          // gather into that stage (after the multiply, so that the loads'
          // latency does not hold up this warp's products). One commit group
          // per tile.
#pragma unroll
    for (int s = 0; s < Cfg::STAGES - 1; ++s) {
      if (s < nk) {
        issue(s, kt_begin + s);
        gather(s, kt_begin + s);
      }
      cp_async::commit();
    }
    for (int i = 0; i < nk; ++i) {
      cp_async::wait<Cfg::STAGES - 2>();
      __syncthreads();
      const int next = i + Cfg::STAGES - 1;
      if (next < nk)
        issue(next % Cfg::STAGES, kt_begin + next);
      cp_async::commit();
      multiply_stage<Cfg>(acc, sA + (i % Cfg::STAGES) * A::STAGE,
                          sB + (i % Cfg::STAGES) * B::STAGE, m_warp, n_warp,
                          lane);
      if (next < nk)
        gather(next % Cfg::STAGES, kt_begin + next);
    }
    cp_async::wait<0>();
    // The next (group, split) refills the stages.
    __syncthreads();

    // Accumulator (g, 2q..2q+1) and (g + 8, 2q..2q+1) of each 16x8 tile.
    const int g = lane >> 2, q = lane & 3;
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const idx r = m0 + m_warp + mt * 16 + g + half * 8;
        if (r >= S::ROWS)
          continue;
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) {
          const idx c = n0 + n_warp + nt * 8 + q * 2;
          store_result<Cfg, Epi>(p, group, split, r, c, acc[mt][nt][half * 2],
                                 acc[mt][nt][half * 2 + 1]);
        }
      }
  }
}

// The second kernel of a split reduction: adds the SPLIT f32 partial
// products in split order (deterministic) and applies the epilogue. Any
// grid of 256-thread blocks (a strided loop over the outputs).
template <class Cfg, class Epi, class Params>
__device__ __forceinline__ void igemm_split_sum(const launch_ctx &ctx,
                                                const Params &p) {
  typedef typename Cfg::index idx;
  typedef igemm_shape<Cfg> S;
  constexpr idx PAIRS = S::TOTAL / 2;
  if constexpr (S::COLS % 2 == 0) {
    for (idx i = (idx)ctx.block.x * 256 + ctx.thread.x; i < PAIRS;
         i += (idx)ctx.grid.x * 256) {
      float2 acc = reinterpret_cast<const float2 *>(p.scratch)[i];
#pragma unroll
      for (int s = 1; s < Cfg::SPLIT; ++s) {
        const float2 x =
            reinterpret_cast<const float2 *>(p.scratch + s * S::TOTAL)[i];
        acc.x += x.x;
        acc.y += x.y;
      }
      const idx e = 2 * i, c = e % S::COLS, rest = e / S::COLS;
      Epi::store_pair(p, rest / S::ROWS, rest % S::ROWS, c, acc.x, acc.y);
    }
  } else {
    for (idx i = (idx)ctx.block.x * 256 + ctx.thread.x; i < S::TOTAL;
         i += (idx)ctx.grid.x * 256) {
      float acc = p.scratch[i];
#pragma unroll
      for (int s = 1; s < Cfg::SPLIT; ++s)
        acc += p.scratch[s * S::TOTAL + i];
      const idx c = i % S::COLS, rest = i / S::COLS;
      Epi::store(p, rest / S::ROWS, rest % S::ROWS, c, acc);
    }
  }
}

} // namespace conv
} // namespace kiln
