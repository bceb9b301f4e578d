//===- batch_norm_layout.cuh - how batch norm kernels map work ------------===//
//
// The layout arithmetic of batch_norm.cuh, shared with the host planner
// (BatchNormEmitter.cpp) and its tests. The input is seen as
// [outer, C, inner] (C the channel dim); each channel reduces over its
// outer * inner elements.
//
// - Column mode (inner < kSegmentMinInner, e.g. NHWC or [N, C]): the input
//   is [outer, C * inner] and its columns are reduced over the outer rows,
//   coalesced: blocks of `cols` consecutive columns (a power of two, at most
//   32) by kThreads / cols row lanes; a channel then combines its `inner`
//   columns.
// - Segment mode (NCHW and other large inner): a block reduces one channel,
//   its kThreads threads walking the channel's contiguous segments of
//   `inner` elements in order.
//
// Either way the reduced range is split over grid.y when the blocks alone
// do not fill the GPU; every block writes a partial, and a second kernel
// combines a channel's partials in a fixed order, one warp per channel.
//
// Vectors: `vec` is the elements of one 16-byte access of the input's type.
// Column mode with one column per channel (inner == 1: channels last, or
// [N, C]) and C a multiple of vec reads vec consecutive columns per thread
// in one access (a "vector column"), and the element-wise kernels move vec
// elements per access wherever the element count allows.
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/reduce_layout.cuh"

namespace kiln {
namespace bn {

// Threads of every batch norm kernel's (one-dimensional) blocks.
constexpr long long kThreads = 256;
// Segments of at least this many contiguous elements are walked in segment
// mode; shorter ones make columns.
constexpr long long kSegmentMinInner = 32;
// Least work of one split: rows per column split (a few per row lane), and
// elements per segment split.
constexpr long long kColumnMinRows = 64;
constexpr long long kSegmentMinChunk = 4096;

__host__ __device__ constexpr bool column_mode(long long inner) {
  return inner < kSegmentMinInner;
}
// Columns one thread of the statistics kernels reads per access: `vec`
// where every row is whole vector columns of consecutive channels, else 1.
__host__ __device__ constexpr long long column_vec(long long channels,
                                                  long long inner,
                                                  long long vec) {
  return inner == 1 && channels % vec == 0 ? vec : 1;
}
// Elements the element-wise kernels move per access: `vec` where the
// element count is whole vectors, else 1.
__host__ __device__ constexpr long long element_vec(long long elements,
                                                   long long vec) {
  return elements % vec == 0 ? vec : 1;
}
// Consecutive (vector) columns of one block in column mode (a power of
// two), of `width` columns read `cvec` at a time.
__host__ __device__ constexpr long long column_tile(long long width,
                                                   long long cvec = 1) {
  return reduce::min_of(
      32, reduce::next_pow2(reduce::max_of(reduce::ceil_div(width, cvec), 1)));
}
// Threads of a block that share one column (or, in segment mode, one
// channel).
__host__ __device__ constexpr long long
lanes_of(long long channels, long long inner, long long cvec = 1) {
  return column_mode(inner) ? kThreads / column_tile(channels * inner, cvec)
                            : kThreads;
}
// Blocks along grid.x: column tiles, or channels.
__host__ __device__ constexpr long long
tiles_of(long long channels, long long inner, long long cvec = 1) {
  return column_mode(inner)
             ? reduce::ceil_div(channels * inner,
                                column_tile(channels * inner, cvec) * cvec)
             : channels;
}
// The reduced range that splits divide: rows in column mode, a channel's
// elements in segment mode.
__host__ __device__ constexpr long long split_length(long long outer,
                                                    long long inner) {
  return column_mode(inner) ? outer : outer * inner;
}
// The length of one split of the reduced range (all of it when not split),
// for `target` blocks that keep the GPU busy.
__host__ __device__ constexpr long long
chunk_of(long long outer, long long channels, long long inner,
         long long target, long long cvec = 1) {
  return reduce::split_chunk(
      tiles_of(channels, inner, cvec), split_length(outer, inner),
      column_mode(inner) ? kColumnMinRows : kSegmentMinChunk, target);
}
// The partials one split writes: one per column, or one per channel.
__host__ __device__ constexpr long long partials_per_split(long long channels,
                                                           long long inner) {
  return column_mode(inner) ? channels * inner : channels;
}
// Splits of the reduced range; none when a channel has no elements.
__host__ __device__ constexpr long long splits_of(long long outer,
                                                 long long channels,
                                                 long long inner,
                                                 long long chunk) {
  return outer * inner == 0
             ? 0
             : reduce::split_count(split_length(outer, inner), chunk);
}
// Per-channel kernels (the combination of partials, eval statistics): one
// warp per channel, a block each, so that as many SMs as there are channels
// fetch the partials (a convolution's epilogue leaves a thousand or more
// per channel, strided by the channel count: each a sector of its own).
constexpr long long kChannelLanes = 32;
constexpr long long kChannelThreads = kChannelLanes;
__host__ __device__ constexpr long long channel_blocks(long long channels) {
  return reduce::ceil_div(channels * kChannelLanes, kChannelThreads);
}

// The per-channel coefficients of the element-wise kernels are f32 arrays
// field by field ([fields][C]), so that channels last a thread reads a
// field of its consecutive channels in 16-byte accesses. normalize's:
// y = (x - mean) * scale + beta.
enum norm_field { kNormMean = 0, kNormScale = 1, kNormFields = 2 };
// input_grad's: dx = scale * (g - mg - xh * mgx), xh = (x - mean) * rstd.
enum dx_field {
  kDxMean = 0,
  kDxRstd = 1,
  kDxScale = 2,
  kDxMg = 3,
  kDxMgx = 4,
  kDxFields = 5
};

// Static shared memory of tile_stats.cuh's column statistics in a block of
// `threads` (the stored tile's epilogue): one welford (three floats) per
// column of each of the threads / (columns / 2) row parts.
__host__ __device__ constexpr unsigned tile_stats_shared_bytes(int threads) {
  return (unsigned)(threads * 2 * 3 * sizeof(float));
}

} // namespace bn
} // namespace kiln
