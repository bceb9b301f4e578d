//===- optimizer.cuh - multi-tensor kernels over groups of block ranges ---===//
//
// An optimizer's update of every parameter (or any pointwise fusion whose
// results share no root) is one launch of independent pointwise groups over
// tensors of different shapes. Group g owns the contiguous block range
// [start(g), start(g + 1)) of the launch, sized to its element count; a
// block finds its group by binary search in that constant table and runs
// the group's grid-stride loop (pointwise.cuh) over the group's own blocks.
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/pointwise.cuh"

namespace kiln {
namespace pointwise {

// Where a block is: its group, its index among the group's blocks and their
// number.
struct group_block {
  unsigned group, block, blocks;
};

// The block ranges of the groups: Starts are the first block of each group
// and, last, the total.
template <unsigned... Starts> struct block_ranges {
  static constexpr unsigned groups = sizeof...(Starts) - 1;
  static_assert(groups >= 1, "a multi-tensor kernel has groups");

  __host__ __device__ static constexpr unsigned start(unsigned g) {
    constexpr unsigned table[] = {Starts...};
    return table[g];
  }
  static constexpr unsigned blocks = start(groups);

  // The group of `block`, the last one starting at or before it: a binary
  // search unrolled over the table's constants.
  template <unsigned Lo = 0, unsigned Hi = groups>
  __device__ __forceinline__ static group_block find(unsigned block) {
    if constexpr (Hi - Lo == 1) {
      constexpr unsigned first = start(Lo), count = start(Hi) - start(Lo);
      return group_block{Lo, block - first, count};
    } else {
      constexpr unsigned mid = (Lo + Hi) / 2;
      return block >= start(mid) ? find<mid, Hi>(block) : find<Lo, mid>(block);
    }
  }
};

// Runs the group of this block: groups[g] on the blocks of range g.
template <class Ranges, class... Groups>
__device__ __forceinline__ void multi_tensor(const launch_ctx &ctx,
                                             const Groups &...groups) {
  static_assert(sizeof...(Groups) == Ranges::groups,
                "one block range per group");
  const group_block at = Ranges::find(ctx.block.x);
  unsigned g = 0;
  (void)((at.group == g++ &&
          (grid_stride(ctx, at.block, at.blocks, groups), true)) ||
         ...);
}

} // namespace pointwise
} // namespace kiln
