//===- custom_layout.cuh - launch geometry of user kernels (kiln.custom) --===//
//
// Shared by the ABI header user kernels include (custom_op.cuh) and the
// planner that launches them (codegen/cuda/custom/CustomEmitter.cpp), so the
// two agree on the rank a tensor may have and on how a grid is sized.
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/host_device.cuh"

namespace kiln {
namespace custom {

// The most dimensions a tensor of a custom kernel has (the dialect's
// CustomOp::kMaxRank): its shape is a fixed array of this many entries.
constexpr int max_rank = 8;

// Threads per block unless the op says `block_size`.
constexpr long long default_block_size = 256;

// Blocks of a custom kernel's one-dimensional grid: one thread per element
// of the largest tensor it writes, but at most `max_blocks` (a few waves of
// the GPU), so kernels loop grid-stride over their work; never 0.
__host__ __device__ constexpr long long
grid_blocks(long long elements, long long block_size, long long max_blocks) {
  return clamp(ceil_div(elements, block_size), 1, max_blocks);
}

} // namespace custom
} // namespace kiln
