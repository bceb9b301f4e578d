//===- attention_dq_accum.cuh - rows around the one-pass backward ---------===//
//
// The two row kernels of the one-pass attention backward
// (attention_wgmma_bwd_fused.cuh), a warp per query row:
//  - backward_prep, before it: delta = rowsum(dO * O) and the forward's row
//    log-sum-exp in the log2 domain (+inf for a row that sees no key or
//    lies past the queries, so that its probabilities are 0) for the rows
//    of whole 64-query tiles (C::stats_rows per batch * head), and the
//    row's dQ accumulator zeroed;
//  - backward_dq_finish, after it: dQ = scale * accumulator, in the element
//    type and d_query's layout.
// C: the one-pass kernel's configuration (tq, d, dv, scale, batch_heads,
// stats_rows, dq_stride, has_row_lse and the layouts of out, d_out and
// d_query). The accumulator is [batch * heads][stats_rows][dq_stride] f32.
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/attention_layout.cuh"
#include "kiln/prelude.cuh"

namespace kiln {
namespace attention {

// The sum over a warp's lanes.
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// The query row of this warp: (batch * head) * rows + row.
__device__ __forceinline__ long long warp_row(const launch_ctx &ctx) {
  return (long long)ctx.block.x * (ctx.block_threads() / 32) +
         ctx.thread.x / 32;
}

template <class C>
__device__ __forceinline__ void
backward_prep(const launch_ctx &ctx, const typename C::elem_t *__restrict__ out,
              const typename C::elem_t *__restrict__ d_out,
              const float *__restrict__ given_lse, float *__restrict__ row_lse,
              float *__restrict__ row_delta, float *__restrict__ dq_accum) {
  typedef typename C::elem_t elem_t;
  typedef typename C::idx_t idx_t;
  static_assert(C::has_row_lse, "the one-pass backward takes the forward's "
                                "row log-sum-exp");
  // 16-byte runs of 8 elements, a lane's at a time.
  constexpr int RUN = 8, RUNS = C::dv / RUN;
  static_assert(sizeof(elem_t) == 2 && C::dv % RUN == 0 &&
                    C::dq_stride % 4 == 0,
                "rows of whole 16-byte runs");
  const int lane = ctx.thread.x & 31;
  const long long row = warp_row(ctx);
  if (row >= (long long)C::batch_heads * C::stats_rows)
    return;
  const int bh = (int)(row / C::stats_rows), qi = (int)(row % C::stats_rows);
  const float infinity = __int_as_float(0x7f800000);
  float delta = 0.f, lse = infinity;
  if (qi < C::tq) {
    const elem_t *o =
        out + C::out_layout::base(bh) + (idx_t)qi * C::out_layout::row;
    const elem_t *g =
        d_out + C::d_out_layout::base(bh) + (idx_t)qi * C::d_out_layout::row;
    for (int r = lane; r < RUNS; r += 32) {
      const uint4 ov = *reinterpret_cast<const uint4 *>(o + r * RUN);
      const uint4 gv = *reinterpret_cast<const uint4 *>(g + r * RUN);
      const elem_t *oe = reinterpret_cast<const elem_t *>(&ov);
      const elem_t *ge = reinterpret_cast<const elem_t *>(&gv);
#pragma unroll
      for (int e = 0; e < RUN; ++e)
        delta = fmaf(kiln_load(oe[e]), kiln_load(ge[e]), delta);
    }
    const float given = given_lse[(idx_t)bh * C::tq + qi];
    lse = given == -infinity ? infinity : given * 1.4426950408889634f;
  }
  delta = warp_sum(delta);
  if (lane == 0) {
    row_lse[row] = lse;
    row_delta[row] = delta;
  }
  uint4 *acc = reinterpret_cast<uint4 *>(dq_accum + row * C::dq_stride);
  for (int i = lane; i < C::dq_stride / 4; i += 32)
    acc[i] = uint4{0u, 0u, 0u, 0u};
}

template <class C>
__device__ __forceinline__ void
backward_dq_finish(const launch_ctx &ctx, const float *__restrict__ dq_accum,
                   typename C::elem_t *__restrict__ d_query) {
  typedef typename C::elem_t elem_t;
  typedef typename C::idx_t idx_t;
  const int lane = ctx.thread.x & 31;
  const long long row = warp_row(ctx);
  if (row >= (long long)C::batch_heads * C::tq)
    return;
  const int bh = (int)(row / C::tq), qi = (int)(row % C::tq);
  const float *acc =
      dq_accum + ((long long)bh * C::stats_rows + qi) * C::dq_stride;
  elem_t *dq = d_query + C::d_query_layout::base(bh) +
               (idx_t)qi * C::d_query_layout::row;
  for (int e = lane; e < C::d; e += 32)
    kiln_store(dq + e, acc[e] * C::scale);
}

} // namespace attention
} // namespace kiln
