//===- merged.cuh - several kernels' parts run as one launch --------------===//
//
// Small kernels are launch-bound, so launches of an entry that touch no common
// written memory run as one kernel: block b of its one-dimensional grid runs
// the part whose block range [First, First + blocks) holds b. Each part is a
// device function of a launch context (prelude.cuh); kiln::part gives it the
// context its own launch would have had: its own block index and grid, and,
// when its blocks are smaller than the merged kernel's (parts of whole warps
// run in a one-dimensional block of the largest part's size), its own thread
// index and block size. Threads past a part's block size take no part in it:
// a barrier does not wait for threads that have exited.
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/prelude.cuh"

namespace kiln {

template <unsigned First, unsigned GX, unsigned GY, unsigned GZ, unsigned BX,
          unsigned BY, unsigned BZ>
struct part {
  static constexpr unsigned blocks = GX * GY * GZ;
  static constexpr unsigned threads = BX * BY * BZ;

  // Whether flat block `b` belongs to this part.
  static __device__ __forceinline__ bool holds(unsigned b) {
    return b >= First && b < First + blocks;
  }

  // The context of this thread in the part, for a block it holds; false for
  // threads past the part's block size.
  static __device__ __forceinline__ bool enter(const launch_ctx &merged,
                                               launch_ctx &ctx) {
    const unsigned b = merged.block.x - First;
    ctx.block = make_uint3(b % GX, (b / GX) % GY, b / (GX * GY));
    ctx.grid = make_uint3(GX, GY, GZ);
    ctx.block_dim = make_uint3(BX, BY, BZ);
    if (merged.block_dim.x == BX && merged.block_dim.y == BY &&
        merged.block_dim.z == BZ) {
      ctx.thread = merged.thread;
      return true;
    }
    // A one-dimensional merged block: number the part's threads as CUDA
    // does (x fastest), so that its warps stay the same.
    const unsigned t = merged.thread.x;
    if (t >= threads)
      return false;
    ctx.thread = make_uint3(t % BX, (t / BX) % BY, t / (BX * BY));
    return true;
  }
};

} // namespace kiln
