//===- gemm_wgmma.cuh - bf16/f16 GEMM on Hopper warpgroup MMA (sm_90a) ----===//
//
// wgmma.mma_async on 128-byte-swizzled shared tiles (gemm_layout.cuh) filled
// by a cp.async pipeline; BM / 64 warpgroups of 64 x BN. It copies whole
// 16-byte chunks of both operands only (Cfg::A_VEC and B_VEC), runs one
// problem (GROUPS == KSUMS == 1), and is compiled for sm_90a, so its code
// runs on sm_90 devices only.
// Pipeline. STAGES shared stages, STAGES - 2 tiles copied ahead of the one
// multiplied, one wgmma group in flight while the next is issued. Each
// iteration: wait for the current tile's copies, fence them into the async
// proxy (wgmma reads through it), barrier, issue the tile's four k16 wgmmas,
// refill the stage read two iterations ago (every warpgroup waited for that
// group before the barrier), and wait for the previous group.
// Grid. Persistent: one block per SM walks the work items (tile, batch, K
// split); the copies of an item's first tiles are issued before the previous
// item's epilogue, which then hides their latency. Tiles wholly inside the
// output take an epilogue without bounds tests.
// Accumulators. Warpgroup w computes rows [64w, 64w + 64) of the tile; in it
// warp v, lane (g = lane / 4, q = lane % 4) holds rows 16v + g and 16v + g + 8
// of every 8-column block j at columns 8j + 2q, 8j + 2q + 1: registers
// 4j + {0, 1} and 4j + {2, 3} (the mma.sync m16n8 layout, repeated along N).
//
// Cfg (gemm_common.cuh) adds STAGES; BK is wgmma_block_k. The block is
// BM / 64 * 128 threads, one block per SM.
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/cp_async.cuh"
#include "kiln/gemm_common.cuh"
#include "kiln/tma.cuh"
#include "kiln/wgmma.cuh"

namespace kiln {
namespace gemm {

// One thread's share of the copies of an operand tile from a GROWS x GCOLS
// matrix (rows M/N when K-major, else K): COUNT 16-byte chunks, STEP tile
// rows apart (a multiple of 8, so every chunk has the first one's swizzle
// and its shared offset is the first one's plus a constant). Chunks outside
// the matrix are zero-filled; the tests exist only where a tile can reach
// past the matrix.
template <class Cfg, int MN, bool KMAJOR, typename Cfg::index GROWS, typename Cfg::index GCOLS>
struct wgmma_tile_copy {
  typedef typename Cfg::index idx;
  typedef typename Cfg::element T;
  static constexpr int THREADS = Cfg::BM / 64 * 128;
  static constexpr int PER_ROW = (KMAJOR ? Cfg::BK : MN) / 8;
  static constexpr int STEP = THREADS / PER_ROW;
  static constexpr int COUNT = MN * Cfg::BK / 8 / THREADS;
  static constexpr bool ROW_TAIL = GROWS % (KMAJOR ? MN : Cfg::BK) != 0;
  static constexpr bool COL_TAIL = GCOLS % (KMAJOR ? Cfg::BK : MN) != 0;
  static_assert(THREADS % PER_ROW == 0 && STEP % 8 == 0 && COUNT * THREADS * 8 == MN * Cfg::BK,
                "chunks must divide among threads in whole swizzle rows");
  int row, col;
  unsigned offset;
  __device__ __forceinline__ explicit wgmma_tile_copy(int tid)
      : row(tid / PER_ROW), col(tid % PER_ROW),
        offset(KMAJOR ? wgmma_swizzle_k(tid / PER_ROW, tid % PER_ROW)
                      : wgmma_swizzle_mn(tid / PER_ROW, tid % PER_ROW)) {}
  // The tile at M/N offset mn0, K offset k0 into the shared tile at s.
  __device__ __forceinline__ void operator()(unsigned s, const T *__restrict__ g, idx mn0,
                                             idx k0) const {
    const idx r0 = (KMAJOR ? mn0 : k0) + row, c0 = (KMAJOR ? k0 : mn0) + col * 8;
    const T *src = g + r0 * GCOLS + c0;
#pragma unroll
    for (int i = 0; i < COUNT; ++i) {
      const bool valid = (!COL_TAIL || c0 < GCOLS) && (!ROW_TAIL || r0 + i * STEP < GROWS);
      cp_async::cache_global(s + offset + i * STEP * 128,
                             valid ? src + i * STEP * GCOLS : g, valid ? 16 : 0);
    }
  }
};

// A unit of work: one output tile of one GEMM batch and K split.
template <class Cfg> struct wgmma_work {
  typedef typename Cfg::index idx;
  typedef shape<Cfg> S;
  // Every (tile, batch, split).
  static constexpr long long COUNT =
      (long long)Cfg::GEMM_BATCH * Cfg::SPLIT * S::TILES_M * S::TILES_N;

  const typename Cfg::element *a, *b;
  idx batch, m0, n0;
  int split, ktBegin, nk;

  template <class Ops, class Params>
  static __device__ __forceinline__ wgmma_work at(const Params &p, long long w) {
    wgmma_work x;
    const long long z = w / (S::TILES_M * S::TILES_N);
    idx tm, tn;
    tile_of<Cfg>((idx)(w % (S::TILES_M * S::TILES_N)), tm, tn);
    x.batch = (idx)(z / Cfg::SPLIT);
    x.split = (int)(z % Cfg::SPLIT);
    x.m0 = tm * Cfg::BM;
    x.n0 = tn * Cfg::BN;
    x.a = Ops::lhs(p, x.batch);
    x.b = Ops::rhs(p, x.batch);
    x.ktBegin = x.split * Cfg::KT_PER_SPLIT;
    const int ktEnd =
        S::KT < x.ktBegin + Cfg::KT_PER_SPLIT ? S::KT : x.ktBegin + Cfg::KT_PER_SPLIT;
    x.nk = ktEnd > x.ktBegin ? ktEnd - x.ktBegin : 0;
    return x;
  }
};

// Warpgroup wg's accumulators (rows m0 + 64 wg .. + 63 of the tile at
// (m0, n0) of GEMM batch b) through the epilogue; `thread` is the thread's
// index in its warpgroup.
template <class Cfg, class Epi, class Params>
__device__ __forceinline__ void
wgmma_epilogue(const Params &p, int split, typename Cfg::index b,
               typename Cfg::index m0, typename Cfg::index n0, int wg,
               int thread, const float (&acc)[Cfg::BN / 2]) {
  typedef typename Cfg::index idx;
  // Every tile lies inside the output: the epilogue needs no bounds tests.
  constexpr bool EVEN_TILES = Cfg::ROWS % Cfg::BM == 0 && Cfg::N % Cfg::BN == 0;
  const int lane = thread & 31, warp = thread >> 5, g = lane >> 2, q = lane & 3;
  const idx row = m0 + wg * 64 + warp * 16 + g;
  const idx r = b * Cfg::ROWS + row;
  if (EVEN_TILES || (m0 + Cfg::BM <= Cfg::ROWS && n0 + Cfg::BN <= Cfg::N)) {
    // One block of independent pairs; a column's epilogue operands serve
    // both rows.
#pragma unroll
    for (int j = 0; j < Cfg::BN / 8; ++j)
#pragma unroll
      for (int half = 0; half < 2; ++half)
        emit_pair<Cfg, Epi, true>(p, split, r + half * 8, n0 + j * 8 + q * 2,
                                  acc[j * 4 + half * 2],
                                  acc[j * 4 + half * 2 + 1]);
  } else {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      if (row + half * 8 >= Cfg::ROWS)
        continue;
#pragma unroll
      for (int j = 0; j < Cfg::BN / 8; ++j)
        emit_pair<Cfg, Epi>(p, split, r + half * 8, n0 + j * 8 + q * 2,
                            acc[j * 4 + half * 2], acc[j * 4 + half * 2 + 1]);
    }
  }
}

// Persistent: block i takes work items i, i + grid.x, ...; the first tiles
// of the next item are copied while this item's epilogue runs.
template <class Cfg, class Ops, class Epi, class Params>
__device__ __forceinline__ void wgmma_gemm(const launch_ctx &ctx, const Params &p) {
  typedef typename Cfg::index idx;
  typedef shape<Cfg> S;
  typedef wgmma_work<Cfg> Work;
  constexpr int THREADS = Cfg::BM / 64 * 128;
  constexpr unsigned A_BYTES = wgmma_tile_bytes(Cfg::BM), B_BYTES = wgmma_tile_bytes(Cfg::BN);
  constexpr int AHEAD = Cfg::STAGES - 2; // tiles copied ahead of the multiplied one
  constexpr int ACC = Cfg::BN / 2;
  static_assert(Cfg::BK == wgmma_block_k && Cfg::BM % 64 == 0 && Cfg::BN % 64 == 0 &&
                    Cfg::BN <= 256,
                "wgmma tiles are 64-row warpgroup slices of 64-column swizzle rows");
  static_assert(Cfg::A_VEC && Cfg::B_VEC, "wgmma tiles are copied in 16-byte chunks");
  static_assert(Cfg::GROUPS == 1 && Cfg::KSUMS == 1, "the wgmma kernel runs one problem");
  static_assert(Cfg::STAGES >= 3, "the pipeline keeps one group in flight and one tile ahead");
  static_assert(THREADS % 128 == 0, "whole warpgroups");

  extern __shared__ __align__(16) unsigned char gemm_smem[];
  // Swizzle atoms start on 1024-byte boundaries (the launch adds the slack).
  const unsigned sA = ((unsigned)__cvta_generic_to_shared(gemm_smem) + 1023u) & ~1023u;
  const unsigned sB = sA + Cfg::STAGES * A_BYTES;
  const int tid = ctx.thread.x, wg = tid >> 7;

  const wgmma_tile_copy<Cfg, Cfg::BM, Cfg::A_KMAJOR, S::A_GROWS, S::A_GCOLS> copyA(tid);
  const wgmma_tile_copy<Cfg, Cfg::BN, Cfg::B_KMAJOR, S::B_GROWS, S::B_GCOLS> copyB(tid);
  auto loadStage = [&](const Work &x, int stage, int kt) {
    const idx k0 = (idx)kt * Cfg::BK;
    copyA(sA + stage * A_BYTES, x.a, x.m0, k0);
    copyB(sB + stage * B_BYTES, x.b, x.n0, k0);
  };
  // The first AHEAD tiles of an item; one commit group per tile (empty
  // groups past its end).
  auto prologue = [&](const Work &x) {
#pragma unroll
    for (int s = 0; s < AHEAD; ++s) {
      if (s < x.nk)
        loadStage(x, s, x.ktBegin + s);
      cp_async::commit();
    }
  };

  long long w = ctx.block.x;
  if (w >= Work::COUNT)
    return;
  Work cur = Work::template at<Ops>(p, w);
  prologue(cur);
  for (; w < Work::COUNT; w += ctx.grid.x) {
    float acc[ACC];
#pragma unroll
    for (int i = 0; i < ACC; ++i)
      acc[i] = 0.0f;

    for (int i = 0; i < cur.nk; ++i) {
      cp_async::wait<AHEAD - 1>();
      // cp.async wrote through the generic proxy; wgmma reads through the
      // async proxy.
      tma::fence_async();
      __syncthreads();
      const int stage = i % Cfg::STAGES;
      wgmma::fence_accumulators(acc);
      wgmma::fence();
#pragma unroll
      for (int j = 0; j < Cfg::BK / 16; ++j)
        wgmma::mma<Cfg::BN, Cfg::KIND, !Cfg::A_KMAJOR, !Cfg::B_KMAJOR>(
            acc, wgmma_operand(Cfg::A_KMAJOR, sA + stage * A_BYTES, wg * 64, j),
            wgmma_operand(Cfg::B_KMAJOR, sB + stage * B_BYTES, 0, j));
      wgmma::commit_group();
      // Refill the stage that group i - 2 read: each warpgroup waited for it
      // before the barrier above.
      const int next = i + AHEAD;
      if (next < cur.nk)
        loadStage(cur, next % Cfg::STAGES, cur.ktBegin + next);
      cp_async::commit();
      wgmma::wait<1>();
      wgmma::fence_accumulators(acc);
    }
    wgmma::wait<0>();
    wgmma::fence_accumulators(acc);
    cp_async::wait<0>();
    // Both warpgroups are done with every stage before they are refilled.
    __syncthreads();
    const Work done = cur;
    if (w + ctx.grid.x < Work::COUNT) {
      cur = Work::template at<Ops>(p, w + ctx.grid.x);
      prologue(cur);
    }

    wgmma_epilogue<Cfg, Epi>(p, done.split, done.batch, done.m0, done.n0, wg,
                             tid & 127, acc);
  }
}

} // namespace gemm
} // namespace kiln
