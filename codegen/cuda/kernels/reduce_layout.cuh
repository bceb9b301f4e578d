//===- reduce_layout.cuh - how reduction kernels map work to threads ------===//
//
// The layout arithmetic of the reduction kernels, shared by the templates
// (reduce_*.cuh), the host-side planners (ReductionKernels.cpp and its
// neighbours) and the tests: threads per row, rows per block, elements per
// thread, and how a reduced range is split over blocks when the outputs
// alone do not fill the GPU.
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/host_device.cuh"

namespace kiln {
namespace reduce {

using ::kiln::ceil_div;
using ::kiln::clamp;
using ::kiln::next_pow2;
__host__ __device__ constexpr long long min_of(long long a, long long b) {
  return a < b ? a : b;
}
__host__ __device__ constexpr long long max_of(long long a, long long b) {
  return a > b ? a : b;
}

// Row kernels: GROUP threads (a power of two, at most `max_group`) own one
// row of m contiguous elements, about 8 elements per thread; several rows
// share a block of 128 threads when GROUP < 32.
__host__ __device__ constexpr long long row_group(long long m,
                                                  long long max_group = 1024) {
  return clamp(next_pow2(ceil_div(m, 8)), 1, max_group);
}
__host__ __device__ constexpr long long rows_in_block(long long group) {
  return group > 32 ? 1 : 128 / group;
}
// Steps of `width` consecutive elements one thread takes of a row.
__host__ __device__ constexpr long long row_steps(long long m, long long width,
                                                  long long group) {
  return ceil_div(ceil_div(m, width), group);
}
// A thread's elements of the row stay in registers between the passes when
// they are at most 16.
__host__ __device__ constexpr bool row_cached(long long m, long long width,
                                              long long group) {
  return row_steps(m, width, group) * width <= 16;
}

// A reduced range of `length` elements of `blocks` blocks' outputs is split
// into chunks when the blocks do not reach `target` and each chunk still
// gets `min_chunk` elements, 1024 chunks at most: the elements of one chunk
// (all of them when the range is not split, or when there are no blocks,
// e.g. no channels; the last chunk may be shorter).
__host__ __device__ constexpr long long split_chunk(long long blocks,
                                                    long long length,
                                                    long long min_chunk,
                                                    long long target) {
  if (blocks <= 0 || blocks >= target || length <= min_chunk)
    return max_of(length, 1);
  return ceil_div(length, clamp(min_of(ceil_div(target, blocks),
                                       ceil_div(length, min_chunk)),
                                1, 1024));
}
// The chunks of a range split into chunks of `chunk` elements.
__host__ __device__ constexpr long long split_count(long long length,
                                                    long long chunk) {
  return ceil_div(max_of(length, 1), chunk);
}

// Generic reductions in row mode: at most 512 threads per output, all 512
// when the range is split.
constexpr long long kReduceMaxGroup = 512;
constexpr long long kRowMinChunk = 4096;
// Column mode: 32 columns per block, the reduced index split 8 ways; the
// reduced range is split until the blocks reach kColumnTargetWaves times
// the planner's target.
constexpr long long kColumnTile = 32;
constexpr long long kColumnSplit = 8;
constexpr long long kColumnMinChunk = 256;
constexpr long long kColumnTargetWaves = 4;
// The second pass of a split reduction: 256 outputs per block.
constexpr long long kFinalThreads = 256;

// The weight/bias gradients of a norm over [rows, m]: rows split over
// blocks when the column tiles do not reach kColumnTargetWaves times
// `target` (a block of 256 threads leaves room for several per SM, and
// each thread's loads must overlap), in chunks of 256 rows at least; a norm
// of at most 1024 rows is one launch (its step is launch-bound). The rows
// of one chunk.
__host__ __device__ constexpr long long norm_param_chunk(long long rows,
                                                         long long m,
                                                         long long target) {
  const long long tiles = ceil_div(m, kColumnTile);
  const long long blocks = kColumnTargetWaves * target;
  const long long splits =
      tiles < blocks && rows > 1024
          ? clamp(min_of(ceil_div(blocks, tiles), ceil_div(rows, 256)), 1,
                  1024)
          : 1;
  return ceil_div(max_of(rows, 1), splits);
}

// Multi-tensor reductions: 256 threads per block, each block a fixed chunk
// of its segment (at least 2048 elements, a multiple of 256 * 8); up to
// 8192 elements in all, one block does everything.
constexpr long long kMultiThreads = 256;
constexpr long long kMultiMinChunk = 2048;
constexpr long long kMultiSingleBlockElements = 8192;
__host__ __device__ constexpr long long multi_chunk(long long total,
                                                    long long target) {
  return ceil_div(max_of(kMultiMinChunk, ceil_div(total, target)),
                  kMultiThreads * 8) *
         kMultiThreads * 8;
}

// Element-wise loss gradients: 256 threads per block, grid-stride, at most
// eight waves of blocks.
constexpr long long kElementThreads = 256;
__host__ __device__ constexpr long long element_blocks(long long n,
                                                       long long target) {
  return min_of(ceil_div(n, kElementThreads), 8 * target);
}

} // namespace reduce
} // namespace kiln
