//===- embedding_layout.cuh - launch arithmetic of the embedding gradient -===//
//
// Shared by the planner (EmbeddingEmitter.cpp), the kernel template
// (embedding.cuh) and the tests. The gradient of a [V, D] table from N
// lookups is computed in three stages:
//
// - a stable LSD radix sort of the lookups by row (8-bit digits; keys in
//   [0, V], V standing for every out-of-range index), each pass a histogram
//   kernel and a scatter kernel over tiles of `sort_tile(N)` lookups;
// - a kernel over chunks of `kChunk` consecutive sorted lookups that marks
//   where each row's run starts and ends, and sums the head of every run
//   that began in an earlier chunk into an f32 partial row;
// - a kernel over table rows: each row sums its run's first chunk directly
//   and adds the partials of the chunks it spans, in order, then stores it
//   (zero for a row no lookup names).
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/host_device.cuh"

namespace kiln {
namespace embedding {

using ::kiln::ceil_div;
using ::kiln::clamp;
using ::kiln::next_pow2;

// Radix sort: 256 threads per block, one thread per bin of an 8-bit digit.
constexpr long long kSortThreads = 256;
constexpr int kRadixBits = 8;
constexpr long long kRadixBins = 256;

// Bits of a key in [0, v]; passes of 8-bit digits that cover them (one at
// least, so that even a one-row table sorts its out-of-range lookups last).
__host__ __device__ constexpr int key_bits(long long v) {
  int bits = 0;
  while (bits < 62 && (1LL << bits) <= v)
    ++bits;
  return bits;
}
__host__ __device__ constexpr int radix_passes(long long v) {
  const int passes = (key_bits(v) + kRadixBits - 1) / kRadixBits;
  return passes < 1 ? 1 : passes;
}

// Lookups per thread of a sort tile: 4 to 16, so that up to about 64 tiles
// cover the lookups; every scatter block reads every tile's histogram.
__host__ __device__ constexpr long long sort_items(long long n) {
  return clamp(next_pow2(ceil_div(n, kSortThreads * 64)), 4, 16);
}
__host__ __device__ constexpr long long sort_tile(long long n) {
  return kSortThreads * sort_items(n);
}
__host__ __device__ constexpr long long sort_tiles(long long n) {
  return n > 0 ? ceil_div(n, sort_tile(n)) : 1;
}

// Sorted lookups per chunk (one warp each), chunks per block.
constexpr long long kChunk = 32;
constexpr long long kChunkThreads = 256;
__host__ __device__ constexpr long long chunks(long long n) {
  return ceil_div(n, kChunk);
}
__host__ __device__ constexpr long long chunk_blocks(long long n) {
  return ceil_div(chunks(n), kChunkThreads / 32);
}

// Table rows: `row_group` threads per row (a power of two, 1 to 256) take
// `width` consecutive elements per step, about 4 steps each; a thread keeps
// its f32 sums of every step in registers when they are at most 32 floats,
// else it walks the run once per step. Blocks hold 128 threads at least.
__host__ __device__ constexpr long long row_vectors(long long d, int width) {
  return ceil_div(d, width);
}
__host__ __device__ constexpr long long row_group(long long d, int width) {
  return clamp(next_pow2(ceil_div(row_vectors(d, width), 4)), 1, 256);
}
__host__ __device__ constexpr long long row_steps(long long d, int width) {
  return ceil_div(row_vectors(d, width), row_group(d, width));
}
__host__ __device__ constexpr bool row_cached(long long d, int width) {
  return row_steps(d, width) * width <= 32;
}
__host__ __device__ constexpr long long row_threads(long long d, int width) {
  return row_group(d, width) < 128 ? 128 : row_group(d, width);
}
__host__ __device__ constexpr long long rows_per_block(long long d,
                                                       int width) {
  return row_threads(d, width) / row_group(d, width);
}
__host__ __device__ constexpr long long row_blocks(long long v, long long d,
                                                   int width) {
  return ceil_div(v, rows_per_block(d, width));
}

// Elements per step: 16 bytes of the element type where they divide the
// row, else the largest power of two that does.
__host__ __device__ constexpr int vector_width(long long d,
                                               long long element_bytes) {
  int width = (int)(16 / element_bytes);
  while (width > 1 && d % width != 0)
    width /= 2;
  return width;
}

// Scratch, in bytes before 256-byte alignment: the tiles' digit histograms,
// two (key, lookup) buffers the passes alternate between, each row's run
// [start, end), and one f32 partial row per chunk.
__host__ __device__ constexpr long long histogram_bytes(long long n) {
  return sort_tiles(n) * kRadixBins * 4;
}
__host__ __device__ constexpr long long sorted_bytes(long long n) {
  return (n > 0 ? n : 1) * 4;
}
__host__ __device__ constexpr long long bounds_bytes(long long v) {
  return v * 8;
}
__host__ __device__ constexpr long long partial_bytes(long long n,
                                                      long long d) {
  return (chunks(n) > 0 ? chunks(n) : 1) * d * 4;
}

} // namespace embedding
} // namespace kiln
