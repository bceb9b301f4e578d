//===- pointwise_layout.cuh - launch arithmetic of pointwise kernels ------===//
//
// Written once for the planner (PointwiseEmitter.cpp), which sizes launches
// with it, and the kernel templates (pointwise.cuh, optimizer.cuh), which
// check their configuration against it. A thread step covers `width`
// consecutive root elements (16-byte vector accesses) or one.
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/host_device.cuh"

namespace kiln {
namespace pointwise {

// Threads of a block at most; a small kernel gets fewer, in whole warps.
constexpr long long max_block_threads = 256;

// Elements per thread step on the vector path: 16 bytes of the narrowest
// tensor moved, at most 8; 1 (the scalar loop only) when not every tensor
// is read and written element for element at the root's flat index, or when
// the root has fewer than two steps of elements.
__host__ __device__ constexpr int vector_width(bool element_for_element,
                                               long long narrowest_bytes,
                                               long long elements) {
  const long long width = !element_for_element ? 1
                          : 16 / narrowest_bytes < 8 ? 16 / narrowest_bytes
                                                     : 8;
  return elements < 2 * width ? 1 : (int)width;
}

// Thread steps that cover `elements`.
__host__ __device__ constexpr long long steps(long long elements, int width) {
  return (elements + width - 1) / width;
}

// Threads of a block for a kernel whose largest group takes `most_steps`:
// whole warps, at most max_block_threads.
__host__ __device__ constexpr long long block_threads(long long most_steps) {
  const long long warps = (most_steps + 31) / 32 * 32;
  return warps < max_block_threads ? warps : max_block_threads;
}

// Blocks of one group: one thread per step, at least one block and at most
// `max_blocks` (more work loops in the grid-stride loop).
__host__ __device__ constexpr long long group_blocks(long long elements,
                                                     int width,
                                                     long long threads,
                                                     long long max_blocks) {
  const long long blocks = (steps(elements, width) + threads - 1) / threads;
  return blocks < 1 ? 1 : blocks > max_blocks ? max_blocks : blocks;
}

} // namespace pointwise
} // namespace kiln
