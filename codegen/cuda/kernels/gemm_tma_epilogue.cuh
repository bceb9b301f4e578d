//===- gemm_tma_epilogue.cuh - the TMA GEMM's epilogue --------------------===//
//
// What a consumer warpgroup of gemm_tma.cuh does with its accumulators
// once an item's products have retired: the staged epilogue (through a
// shared staging area per warp, whole 16-byte runs per lane, optionally
// stored by TMA) or the fragment epilogue of gemm_wgmma.cuh, and the L2
// prefetch of the epilogue's inputs when the consumer takes the item.
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/gemm_tma_roles.cuh"
#include "kiln/gemm_tma_schedule.cuh"
#include "kiln/gemm_wgmma.cuh"
#include "kiln/memory.cuh"
#include "kiln/tma.cuh"
#include "kiln/tma_shared.cuh"

namespace kiln {
namespace gemm {

// The staged epilogue of one warp: its 16 rows (row0 .. row0 + 15 of
// problem `problem`, columns n0 ..) of a warpgroup's 64-row accumulators,
// through `staging` (wgmma_staged_warp_bytes(BN) of shared memory, 1024-byte
// aligned), CH columns at a time, laid out by wgmma_staged_offset. With
// Cfg::TMA_STORE the epilogue leaves its first result, rounded to the element
// type, in place of the product's run, and lane 0 stores the warp's 16 rows
// by TMA (Params::o_map, {64, 16} boxes): no lane waits for its global
// stores, and the copy engine drops the tile's overhang.
template <class Cfg, class Epi, class Params>
__device__ __forceinline__ void
staged_epilogue(const Params &p, typename Cfg::index problem,
                typename Cfg::index row0, typename Cfg::index n0, int lane,
                const float (&acc)[Cfg::BN / 2], unsigned staging) {
  typedef typename Cfg::index idx;
  typedef typename Cfg::element T;
  constexpr int RUN = wgmma_staged_run, CH = wgmma_staged_columns(Cfg::BN);
  constexpr int RUNS = CH / RUN, ROWS_PER_PASS = 32 / RUNS;
  static_assert(RUNS >= 8 && RUNS <= 32 && Cfg::BN % CH == 0,
                "a staged row holds 8 to 32 runs");
  static_assert(Cfg::SPLIT == 1 && Cfg::N % RUN == 0,
                "the staged epilogue stores whole runs of the output");
  static_assert(!Cfg::TMA_STORE || Cfg::GROUPS == 1,
                "a TMA store writes the output of one problem");
  constexpr bool EVEN_TILES = Cfg::ROWS % Cfg::BM == 0 && Cfg::N % Cfg::BN == 0;
  const int g = lane >> 2, q = lane & 3;
  const idx r0 = problem * Cfg::ROWS;
#pragma unroll
  for (int ch = 0; ch < Cfg::BN / CH; ++ch) {
    // The previous chunk's (or tile's) store has read the staging.
    if constexpr (Cfg::TMA_STORE) {
      if (lane == 0)
        tma::bulk_wait_read<0>();
      __syncwarp();
    }
    // Fragments: rows g and g + 8, columns 8j + 2q and 8j + 2q + 1.
#pragma unroll
    for (int j = 0; j < RUNS; ++j)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int row = g + half * 8, a = (ch * RUNS + j) * 4 + half * 2;
        const unsigned at = staging + wgmma_staged_offset(row, j) + q * 4;
        mem::store_shared(at, pack<T>(acc[a], acc[a + 1]));
      }
    __syncwarp();
    // One run at a time: unrolled, the runs' epilogues would be interleaved
    // and hold more registers than the accumulators leave.
#pragma unroll 1
    for (int pass = 0; pass < 16 / ROWS_PER_PASS; ++pass) {
      const int row = pass * ROWS_PER_PASS + lane / RUNS, run = lane % RUNS;
      const idx r = row0 + row, c = n0 + ch * CH + run * RUN;
      const unsigned slot = staging + wgmma_staged_offset(row, run);
      unsigned w[4];
      mem::load_shared(slot, w);
      float v[RUN];
#pragma unroll
      for (int e = 0; e < 4; ++e)
        unpack<T>(w[e], v[2 * e], v[2 * e + 1]);
      // N is a multiple of RUN: a run starts inside the output or past it.
      if (EVEN_TILES || (r < Cfg::ROWS && c < Cfg::N)) {
        if constexpr (Cfg::TMA_STORE)
          Epi::store_run_staged(p, r0 + r, c, v, slot);
        else
          Epi::store_run_in(p, r0 + r, c, v);
      }
    }
    if constexpr (Cfg::TMA_STORE) {
      // The runs written back reach the copy engine's reads.
      tma::fence_async();
      __syncwarp();
      if (lane == 0 && (EVEN_TILES || row0 < Cfg::ROWS)) {
#pragma unroll
        for (int box = 0; box < CH / 64; ++box) {
          const idx c = n0 + ch * CH + box * 64;
          if (EVEN_TILES || c < Cfg::N)
            tma::store_2d(*p.o_map, staging + box * wgmma_staged_box_bytes,
                          (int)c, (int)row0);
        }
        tma::bulk_commit();
      }
    } else {
      // The next chunk overwrites what the lanes have just read.
      __syncwarp();
    }
  }
}

// The tile's rows of the tensors of the product's shape that the epilogue
// reads (Epi::prefetch_row), asked of the L2 when the consumer takes the
// item, a row per thread: by the epilogue, a K loop later, their loads hit
// the L2 instead of waiting for memory (which in ping-pong would outlast
// the other consumer's products).
template <class Cfg, class Epi, class Params>
__device__ __forceinline__ void
prefetch_epilogue_inputs(const Params &p, typename Cfg::index problem,
                         typename Cfg::index row0, int rows,
                         typename Cfg::index n0, int thread) {
  typedef typename Cfg::index idx;
  const idx columns = Cfg::N - n0 < Cfg::BN ? Cfg::N - n0 : (idx)Cfg::BN;
  for (int i = thread; i < rows; i += 128) {
    const idx r = row0 + i;
    if (r < Cfg::ROWS)
      Epi::prefetch_row(p, problem * Cfg::ROWS + r, n0, columns);
  }
}

// Consumer warpgroup cwg's epilogue of item x. Stacked problems' outputs
// follow each other (r = problem * ROWS + row).
template <class Cfg, class Epi, class Params>
__device__ __forceinline__ void
tma_epilogue(const Params &p, const tma_work<Cfg> &x,
             const float (&acc)[tma_roles<Cfg>::SLICES][tma_roles<Cfg>::ACC],
             const tma_memory<Cfg> &sm, int cwg, int tid) {
  typedef typename Cfg::index idx;
  if constexpr (Cfg::STAGED_EPILOGUE) {
    const int warp = (tid >> 5) & 3;
#pragma unroll
    for (int t = 0; t < tma_roles<Cfg>::SLICES; ++t)
      staged_epilogue<Cfg, Epi>(
          p, (idx)x.problem, x.m0 + (Cfg::PINGPONG ? t : cwg) * 64 + warp * 16,
          x.n0, tid & 31, acc[t], sm.staging(cwg * 4 + warp));
  } else {
#pragma unroll
    for (int t = 0; t < tma_roles<Cfg>::SLICES; ++t)
      wgmma_epilogue<Cfg, Epi>(p, x.split, (idx)x.problem, x.m0, x.n0,
                               Cfg::PINGPONG ? t : cwg, tid & 127, acc[t]);
  }
}

} // namespace gemm
} // namespace kiln
