//===- tiled_grid.cuh - grids past CUDA's limits, run in tiles ------------===//
//
// A kernel's grid may be larger than CUDA launches (gridDim.x at most
// 2^31 - 1, gridDim.y and .z at most 65535). The renderer then launches a
// grid within those limits (KernelRenderer.h: launchGridOf) whose block at
// (x, y, z) runs the blocks of the whole grid at (x + i * gridDim.x,
// y + j * gridDim.y, z + k * gridDim.z), one after the other, each with the
// context it would have had in one launch of the whole grid (its block
// index, the whole grid): the kernel's code cannot tell the difference.
// Between two of them the block meets at a barrier, so that the next does
// not overwrite shared memory that slower threads still read for the last.
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/prelude.cuh"

namespace kiln {

template <unsigned GX, unsigned GY, unsigned GZ, typename Run>
__device__ __forceinline__ void run_tiled(const launch_ctx &launch, Run run) {
  launch_ctx ctx = launch;
  ctx.grid = make_uint3(GX, GY, GZ);
  bool first = true;
  // 64-bit positions: a tile's next position may pass 2^32 - 1.
  for (unsigned long long z = launch.block.z; z < GZ; z += launch.grid.z)
    for (unsigned long long y = launch.block.y; y < GY; y += launch.grid.y)
      for (unsigned long long x = launch.block.x; x < GX; x += launch.grid.x) {
        if (!first)
          __syncthreads();
        first = false;
        ctx.block = make_uint3(static_cast<unsigned>(x),
                               static_cast<unsigned>(y),
                               static_cast<unsigned>(z));
        run(ctx);
      }
}

} // namespace kiln
