//===- reduce_dims.cuh - reductions over any dims -------------------------===//
//
// The input shape is collapsed into alternating kept and reduced groups of
// dims. When the innermost group is reduced, a group of threads walks each
// output's elements (row mode); otherwise threads map to the contiguous
// innermost kept group and an 8-way split of the reduced index is combined
// through shared memory (column mode: coalesced, no transpose). When the
// outputs are too few to fill the GPU, the reduced range is split over
// blocks (grid.y) that write per-split partials, and a second kernel
// combines them in split order.
//
// The planner generates what is particular to a fusion:
// - Offsets: static base(q) and reduced(q), the input offsets of output q's
//   first element and of reduced index q;
// - Acc: the accumulators, trivially constructible (column mode keeps them
//   in shared memory), with init(), combine(const Acc &) and
//   group_reduce<GROUP>(ctx);
// - Element: operator()(Acc &, off, o, r, owner) accumulates the element at
//   input offset `off` (reduced index r) of output o, storing the element
//   outputs when `owner`;
// - the finish, operator()(const Acc &, o), which stores output o, or with
//   splits the partial store, store(const Acc &, at), and for the second
//   kernel the partial load, load(at) and combine(Acc &, at).
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/reduce_common.cuh"
#include "kiln/reduce_layout.cuh"

namespace kiln {
namespace reduce {

// Row mode: `Rows` outputs of `Length` contiguous-group elements, reduced in
// chunks of `Chunk` (splits = grid.y).
template <class Idx, long long Rows, long long Length, long long Chunk>
struct reduce_rows_config {
  using idx_t = Idx;
  static constexpr long long rows = Rows, length = Length, chunk = Chunk;
  static constexpr long long splits = split_count(Length, Chunk);
  static constexpr int group =
      splits > 1 ? (int)kReduceMaxGroup : (int)row_group(Length, kReduceMaxGroup);
  static constexpr int rows_per_block = (int)rows_in_block(group);
  static constexpr int threads = group * rows_per_block;
  static constexpr long long blocks = ceil_div(Rows, rows_per_block);
};

template <class Cfg, class Offsets, class Acc, class Element, class Done>
__device__ __forceinline__ void reduce_rows(const launch_ctx &ctx,
                                            const Element &element,
                                            const Done &done) {
  using idx_t = typename Cfg::idx_t;
  constexpr int group = Cfg::group;
  const int lid = ctx.thread.x % group;
  idx_t o = (idx_t)ctx.block.x * Cfg::rows_per_block + ctx.thread.x / group;
  const bool active = o < (idx_t)Cfg::rows;
  if (!active)
    o = (idx_t)(Cfg::rows - 1); // idle threads still take part in shuffles
  const idx_t base = Offsets::base(o);
  const idx_t r0 = (idx_t)ctx.block.y * (idx_t)Cfg::chunk;
  const idx_t r1 = min((idx_t)Cfg::length, r0 + (idx_t)Cfg::chunk);
  Acc acc;
  acc.init();
  for (idx_t r = r0 + lid; r < r1; r += group) {
    const idx_t off = base + Offsets::reduced(r);
    element(acc, off, o, r, active);
  }
  acc.template group_reduce<group>(ctx);
  if (!active || lid != 0)
    return;
  if constexpr (Cfg::splits == 1)
    done(acc, o);
  else
    done.store(acc, (idx_t)ctx.block.y * (idx_t)Cfg::rows + o);
}

// Column mode: `Rows` outputs, the innermost `Inner` of them contiguous,
// each of `Length` reduced elements in chunks of `Chunk`.
template <class Idx, long long Rows, long long Length, long long Inner,
          long long Chunk>
struct reduce_columns_config {
  using idx_t = Idx;
  static constexpr long long rows = Rows, length = Length, inner = Inner,
                             chunk = Chunk;
  static constexpr long long splits = split_count(Length, Chunk);
  static constexpr long long tiles = ceil_div(Inner, kColumnTile);
  static constexpr long long blocks = tiles * (Rows / Inner);
};

template <class Cfg, class Offsets, class Acc, class Element, class Done>
__device__ __forceinline__ void reduce_columns(const launch_ctx &ctx,
                                               const Element &element,
                                               const Done &done) {
  using idx_t = typename Cfg::idx_t;
  constexpr idx_t inner = (idx_t)Cfg::inner;
  __shared__ Acc tile[kColumnSplit][kColumnTile + 1];
  const idx_t outer = ctx.block.x / Cfg::tiles;
  const idx_t c = (idx_t)(ctx.block.x % Cfg::tiles) * 32 + ctx.thread.x;
  const bool active = c < inner;
  const idx_t o = outer * inner + c;
  const idx_t base = Offsets::base(outer) + c;
  const idx_t r0 = (idx_t)ctx.block.y * (idx_t)Cfg::chunk;
  const idx_t r1 = min((idx_t)Cfg::length, r0 + (idx_t)Cfg::chunk);
  Acc acc;
  acc.init();
  if (active)
    for (idx_t r = r0 + ctx.thread.y; r < r1; r += 8) {
      const idx_t off = base + Offsets::reduced(r);
      element(acc, off, o, r, true);
    }
  tile[ctx.thread.y][ctx.thread.x] = acc;
  __syncthreads();
  if (ctx.thread.y != 0 || !active)
    return;
#pragma unroll
  for (int t = 1; t < 8; ++t)
    acc.combine(tile[t][ctx.thread.x]);
  if constexpr (Cfg::splits == 1)
    done(acc, o);
  else
    done.store(acc, (idx_t)ctx.block.y * (idx_t)Cfg::rows + o);
}

// The second pass: `Rows` outputs, each combining its `Splits` partials in
// split order; 256 outputs per block.
template <class Idx, long long Rows, long long Splits> struct reduce_final_config {
  using idx_t = Idx;
  static constexpr long long rows = Rows, splits = Splits;
  static constexpr long long blocks = ceil_div(Rows, kFinalThreads);
};

template <class Cfg, class Acc, class Partials, class Finish>
__device__ __forceinline__ void reduce_final(const launch_ctx &ctx,
                                             const Partials &partials,
                                             const Finish &finish) {
  using idx_t = typename Cfg::idx_t;
  const idx_t o = (idx_t)ctx.block.x * 256 + ctx.thread.x;
  if (o >= (idx_t)Cfg::rows)
    return;
  Acc acc = partials.load(o);
  for (int s = 1; s < Cfg::splits; ++s)
    partials.combine(acc, (idx_t)s * (idx_t)Cfg::rows + o);
  finish(acc, o);
}

} // namespace reduce
} // namespace kiln
