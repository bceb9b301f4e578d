//===- softmax.cuh - softmax and log_softmax along one dim ----------------===//
//
// exp(x - max) / sum, or x - (max + log(sum)), as the reference computes
// them. Along the innermost dim a row kernel (reduce_row.cuh); along an
// outer dim 32 consecutive columns per block (coalesced), the softmax dim
// split 8 ways over ctx.thread.y and combined in shared memory in a fixed
// order.
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/reduce_row.cuh"

namespace kiln {
namespace reduce {

template <class Cfg, bool Log, class In, class Out>
__device__ __forceinline__ void softmax_rows(const launch_ctx &ctx,
                                             const In *__restrict__ in,
                                             Out *__restrict__ out) {
  using idx_t = typename Cfg::idx_t;
  __shared__ float scratch[32];
  const row_position<Cfg> p(ctx);
  row_input<Cfg, In> x(in, p.row);
  Out *out_row = out + p.row * (idx_t)Cfg::m;
  x.cache(p.lid);
  float mx = -kiln_inf();
  row_loop<Cfg>(p.lid,
                [&](int k, int e, idx_t j) { mx = kiln_max(mx, x.at(k, e, j)); });
  mx = row_reduce<Cfg>(ctx, mx, kiln_max_op(), -kiln_inf(), scratch);
  float s = 0.f;
  row_loop<Cfg>(p.lid,
                [&](int k, int e, idx_t j) { s += expf(x.at(k, e, j) - mx); });
  s = row_reduce<Cfg>(ctx, s, kiln_sum_op(), 0.f, scratch);
  if constexpr (Log) {
    const float lse = mx + logf(s);
    if (!p.active)
      return;
    row_loop<Cfg>(p.lid, [&](int k, int e, idx_t j) {
      kiln_store(out_row + j, x.at(k, e, j) - lse);
    });
  } else {
    const float inv = 1.f / s;
    if (!p.active)
      return;
    row_loop<Cfg>(p.lid, [&](int k, int e, idx_t j) {
      kiln_store(out_row + j, expf(x.at(k, e, j) - mx) * inv);
    });
  }
}

// Softmax over dim `Size` of [Outer, Size, Inner] with Inner > 1.
template <class Idx, long long Outer, long long Size, long long Inner>
struct strided_config {
  using idx_t = Idx;
  static constexpr long long outer = Outer, size = Size, inner = Inner;
  static constexpr long long tiles = ceil_div(Inner, kColumnTile);
  static constexpr long long blocks = tiles * Outer;
};

// v combined over the 8 threads of its column, in order, into all of them.
template <class Op>
__device__ __forceinline__ float column_combine(const launch_ctx &ctx,
                                                float (&tile)[8][33], float v,
                                                Op op) {
  tile[ctx.thread.y][ctx.thread.x] = v;
  __syncthreads();
  v = tile[0][ctx.thread.x];
#pragma unroll
  for (int t = 1; t < 8; ++t)
    v = op(v, tile[t][ctx.thread.x]);
  __syncthreads();
  return v;
}

template <class Cfg, bool Log, class In, class Out>
__device__ __forceinline__ void softmax_strided(const launch_ctx &ctx,
                                                const In *__restrict__ in,
                                                Out *__restrict__ out) {
  using idx_t = typename Cfg::idx_t;
  constexpr idx_t inner = (idx_t)Cfg::inner, size = (idx_t)Cfg::size;
  __shared__ float tile[8][33];
  const idx_t outer = ctx.block.x / Cfg::tiles;
  const idx_t c = (idx_t)(ctx.block.x % Cfg::tiles) * 32 + ctx.thread.x;
  const bool active = c < inner;
  const idx_t base = outer * size * inner + (active ? c : 0);
  const In *x_col = in + base;
  Out *out_row = out + base;
  float mx = -kiln_inf();
  for (idx_t d = ctx.thread.y; d < size; d += 8)
    mx = kiln_max(mx, kiln_load(x_col[d * inner]));
  mx = column_combine(ctx, tile, mx, kiln_max_op());
  float s = 0.f;
  for (idx_t d = ctx.thread.y; d < size; d += 8)
    s += expf(kiln_load(x_col[d * inner]) - mx);
  s = column_combine(ctx, tile, s, kiln_sum_op());
  if constexpr (Log) {
    const float lse = mx + logf(s);
    if (!active)
      return;
    for (idx_t d = ctx.thread.y; d < size; d += 8) {
      const float x = kiln_load(x_col[d * inner]);
      kiln_store(out_row + d * inner, x - lse);
    }
  } else {
    const float inv = 1.f / s;
    if (!active)
      return;
    for (idx_t d = ctx.thread.y; d < size; d += 8) {
      const float x = kiln_load(x_col[d * inner]);
      kiln_store(out_row + d * inner, expf(x - mx) * inv);
    }
  }
}

} // namespace reduce
} // namespace kiln
