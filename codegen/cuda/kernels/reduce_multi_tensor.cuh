//===- reduce_multi_tensor.cuh - reductions over several tensors ----------===//
//
// Whole-tensor reductions over several tensors (a global gradient norm, the
// statistics of every gradient): the blocks of one kernel are partitioned
// among the segments (a tensor, or tensors read together), each block
// reduces a fixed chunk of its segment and writes one partial per
// reduction; one block then combines each reduction's partials in block
// order and finishes. Small inputs take one block and one launch.
//
// The planner generates:
// - Tables, the segments' constant tables: static count, and start(t),
//   slot(t), elements(t) of segment t (blocks [start(t), start(t + 1)); its
//   slot among the segments that share its code);
// - Segments: operator()(ctx, const segment &) reduces one block's chunk of
//   a segment into its partials (segments with the same code share it,
//   their pointers picked from tables by slot, so the kernel does not grow
//   with the number of tensors);
// - Final: operator()(ctx) combines the partials (combine_partials) and
//   stores the scalar results.
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/reduce_common.cuh"
#include "kiln/reduce_layout.cuh"

namespace kiln {
namespace reduce {

// Block `block` of segment `index`.
struct segment {
  unsigned index, slot, block, blocks;
  long long elements;
};

template <class Tables>
__device__ __forceinline__ segment segment_at(unsigned index, unsigned block) {
  return segment{index, Tables::slot(index), block,
                 Tables::start(index + 1) - Tables::start(index),
                 (long long)Tables::elements(index)};
}

// The segment of block b: the last one starting at or before it.
template <class Tables>
__device__ __forceinline__ unsigned segment_of_block(unsigned b) {
  unsigned lo = 0, hi = Tables::count;
  while (hi - lo > 1) {
    const unsigned mid = (lo + hi) / 2;
    if (b >= Tables::start(mid))
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

template <class Tables, class Segments>
__device__ __forceinline__ void multi_reduce_partial(const launch_ctx &ctx,
                                                     const Segments &segments) {
  const unsigned index = segment_of_block<Tables>(ctx.block.x);
  segments(ctx, segment_at<Tables>(index, ctx.block.x - Tables::start(index)));
}

// One block walks every segment, then combines and finishes: its partials,
// written before the barrier, are visible to it after.
template <class Tables, class Segments, class Final>
__device__ __forceinline__ void multi_reduce_single(const launch_ctx &ctx,
                                                    const Segments &segments,
                                                    const Final &final) {
  for (unsigned index = 0; index < Tables::count; ++index)
    segments(ctx, segment_at<Tables>(index, 0));
  __syncthreads();
  final(ctx);
}

template <class Final>
__device__ __forceinline__ void multi_reduce_final(const launch_ctx &ctx,
                                                   const Final &final) {
  final(ctx);
}

// The `count` partials at p combined by the block's Threads threads: each
// thread in block order, then the group reduction; the same value in every
// thread.
template <int Threads, class T, class Op>
__device__ __forceinline__ T combine_partials(const launch_ctx &ctx,
                                              const T *__restrict__ p,
                                              int count, Op op, T identity,
                                              T *scratch) {
  T acc = identity;
  for (int i = ctx.thread.x; i < count; i += Threads)
    acc = op(acc, p[i]);
  return kiln_group_reduce<Threads>(ctx, acc, op, identity, scratch);
}

} // namespace reduce
} // namespace kiln
