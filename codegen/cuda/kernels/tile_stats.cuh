//===- tile_stats.cuh - per-column statistics of a tile in shared memory --===//
//
// A convolution's epilogue that feeds batch norm writes, for each of its
// output tiles, the (count, mean, squared deviations) of every column (a
// channel of a channels-last result) over the tile's rows, so that batch
// norm combines those partials (batch_norm.cuh's stats_final) instead of
// reading the activation once more. The tile is already staged in shared
// memory in the result's type, so the statistics are those of the values
// stored, as batch norm reads them.
//
// Each thread sums a pair of adjacent columns over one part of the rows,
// shifted by the part's first value (a sample of the same data, so the
// squares of the differences lose nothing to cancellation); the parts then
// merge in order, which fixes the result for a given shape.
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/batch_norm_layout.cuh"
#include "kiln/welford.cuh"

namespace kiln {
namespace bn {

// The statistics of columns [0, cols) over rows [0, rows) of a ROWS x COLS
// tile whose element (r, c) is staged[at(r, c)], with at(r, c + 1) ==
// at(r, c) + 1 for even c and at(r, c) even there: out[c] for c < cols.
// The THREADS threads that hold the tile call it (tid numbers them) and
// `sync` is a barrier of exactly them (in a warp-specialised block, not of
// the whole block); the caller synchronises before the tile or the next
// call's shared memory is written again.
template <int ROWS, int COLS, int THREADS, class R, class At, class Sync>
__device__ __forceinline__ void
tile_column_stats(int tid, const R *__restrict__ staged, const At &at, int rows,
                  int cols, welford *__restrict__ out, Sync sync) {
  constexpr int PAIRS = COLS / 2, PARTS = THREADS / PAIRS,
                PART_ROWS = ROWS / PARTS;
  static_assert(COLS % 2 == 0 && THREADS % PAIRS == 0 && ROWS % PARTS == 0,
                "threads take whole column pairs over whole row parts");
  struct alignas(2 * sizeof(R)) pair {
    R x[2];
  };
  __shared__ welford parts[PARTS][COLS];
  static_assert(sizeof(parts) == tile_stats_shared_bytes(THREADS),
                "the planners reserve this much static shared memory");
  const int lc = tid % PAIRS * 2, part = tid / PAIRS;
  const int first = part * PART_ROWS;
  const int end = rows < first + PART_ROWS ? rows : first + PART_ROWS;
  float shift[2] = {0.f, 0.f}, s1[2] = {0.f, 0.f}, s2[2] = {0.f, 0.f};
  if (first < end) {
    const pair v = *reinterpret_cast<const pair *>(staged + at(first, lc));
    shift[0] = kiln_load(v.x[0]);
    shift[1] = kiln_load(v.x[1]);
  }
#pragma unroll
  for (int i = 0; i < PART_ROWS; ++i) {
    const int lr = first + i;
    if (lr < end) {
      const pair v = *reinterpret_cast<const pair *>(staged + at(lr, lc));
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const float d = kiln_load(v.x[e]) - shift[e];
        s1[e] += d;
        s2[e] += d * d;
      }
    }
  }
  const float n = first < end ? (float)(end - first) : 0.f;
#pragma unroll
  for (int e = 0; e < 2; ++e) {
    welford w;
    w.init();
    if (n > 0.f) {
      const float m = s1[e] / n, m2 = s2[e] - s1[e] * m;
      w = {n, shift[e] + m, m2 > 0.f ? m2 : 0.f};
    }
    parts[part][lc + e] = w;
  }
  sync();
  for (int c = tid; c < cols; c += THREADS) {
    welford acc = parts[0][c];
#pragma unroll
    for (int q = 1; q < PARTS; ++q)
      acc.merge(parts[q][c]);
    out[c] = acc;
  }
}

} // namespace bn
} // namespace kiln
