//===- pool_layout.cuh - window arithmetic of the pooling kernels ---------===//
//
// Written once for the kernels (pool.cuh), the planner (PoolEmitter.cpp) and
// the tests. Along one spatial axis of `size` elements padded by `pad` in
// front, output `o` pools the input span [o*s - pad, o*s - pad + k) clipped to
// [0, size); the verifier keeps every pad at most k/2, so no clipped span is
// empty. The gradients gather: input element i adds the outputs whose spans
// hold it, [first_window, last_window], in increasing order.
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/host_device.cuh"

namespace kiln {
namespace pool {

// Threads of a block at most; a small kernel gets fewer, in whole warps.
constexpr long long max_block_threads = 256;

// Outputs along an axis: floor((size + pad_front + pad_back - k) / s) + 1.
__host__ __device__ constexpr long long output_size(long long size,
                                                    long long k, long long s,
                                                    long long pad_front,
                                                    long long pad_back) {
  return (size + pad_front + pad_back - k) / s + 1;
}

// The clipped span [window_begin, window_end) of output o.
template <class I>
__host__ __device__ constexpr I window_begin(I o, I s, I pad) {
  return o * s - pad > 0 ? o * s - pad : 0;
}
template <class I>
__host__ __device__ constexpr I window_end(I o, I k, I s, I pad, I size) {
  return o * s - pad + k < size ? o * s - pad + k : size;
}

// The first output whose span holds input i: the least o with
// o*s - pad + k > i (never below 0).
template <class I>
__host__ __device__ constexpr I first_window(I i, I k, I s, I pad) {
  return i + pad - k + 1 <= 0 ? 0 : (i + pad - k + 1 + s - 1) / s;
}
// The last output whose span holds input i: the greatest o < outputs with
// o*s - pad <= i. An input no span holds gets last < first.
template <class I>
__host__ __device__ constexpr I last_window(I i, I s, I pad, I outputs) {
  return (i + pad) / s < outputs - 1 ? (i + pad) / s : outputs - 1;
}

// Spans that hold one input element along an axis, at most.
__host__ __device__ constexpr long long windows_per_element(long long k,
                                                            long long s) {
  return (k + s - 1) / s;
}

// Max pooling's gradient recomputes the argmax of every window that holds
// an element when that reads at most this many elements per element (2x2
// windows of stride 2 read 4, 3x3 of stride 3 read 9); otherwise one kernel
// leaves each window's argmax in scratch and a second gathers from it.
constexpr long long max_recompute_reads = 16;
__host__ __device__ constexpr bool recompute_argmax(long long kh, long long kw,
                                                    long long sh,
                                                    long long sw) {
  return windows_per_element(kh, sh) * windows_per_element(kw, sw) * kh * kw <=
         max_recompute_reads;
}

// Channels a thread takes at once: with NHWC the channels of one position
// are contiguous, so a thread moves up to 16 bytes of them (at most 8) when
// that many divide C; NCHW windows are strided, one element at a time.
__host__ __device__ constexpr int channel_vector(bool nhwc, long long c,
                                                 long long element_bytes) {
  if (!nhwc)
    return 1;
  for (int v = 8; v > 1; v /= 2)
    if (v * element_bytes <= 16 && c % v == 0)
      return v;
  return 1;
}

// Threads of a block for `items` work items: whole warps, at most
// max_block_threads.
__host__ __device__ constexpr long long block_threads(long long items) {
  const long long warps = (items + 31) / 32 * 32;
  return warps < max_block_threads ? warps : max_block_threads;
}

// Blocks of a grid-stride launch: one item per thread, at least one block,
// at most `max_blocks` (more items loop).
__host__ __device__ constexpr long long grid_blocks(long long items,
                                                    long long threads,
                                                    long long max_blocks) {
  const long long blocks = (items + threads - 1) / threads;
  return blocks < 1 ? 1 : blocks > max_blocks ? max_blocks : blocks;
}

} // namespace pool
} // namespace kiln
