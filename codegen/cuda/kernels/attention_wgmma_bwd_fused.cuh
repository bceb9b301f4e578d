//===- attention_wgmma_bwd_fused.cuh - one-pass attention backward --------===//
//
// The backward of attention_wgmma_bwd.cuh in one pass over the key tiles
// (sm_90a, bf16/f16, head dims of at most 128), as FlashAttention-3
// computes it: five products per pair of tiles where the two-kernel
// backward takes seven (it forms S and dP twice, once per kernel). A work
// item keeps BK = 128 keys and values and streams the tiles of 64 queries
// that see them (produce_key_items); each of its two consumer warpgroups
// forms P^T and dS^T for its 64 keys (key_probabilities) and accumulates
// dV += P^T dO and dK += dS^T Q in registers, as backward_dkdv_wgmma does,
// and also multiplies its keys' share of the tile's dQ, dQ^T = K^T dS^T,
// with dS^T through shared memory. The two shares are added in shared
// memory and the sum goes to an f32 accumulator of dQ in global memory by
// one bulk reduction (cp.reduce.async.bulk .add.f32). The order in which
// the key tiles' sums reach a row of dQ varies from run to run, and so may
// its last bits: this backward is not deterministic (the two-kernel one
// is). Three kernels:
//  1. backward_prep, a warp per query row: delta = rowsum(dO * O), the
//     forward's row log-sum-exp in the log2 domain (C::has_row_lse is
//     required: no statistics sweep), and the row's accumulator zeroed;
//  2. backward_fused_wgmma: dK, dV and the accumulated dQ;
//  3. backward_dq_finish, a warp per query row: dQ = scale * accumulator,
//     in the element type and d_query's layout.
//
// C: as backward_dkdv_wgmma's (bm = 128 keys kept, bn = 64 queries
// streamed), with dq_stride = dq_accum_stride(d): the accumulator is
// [batch * heads][stats_rows][dq_stride] f32, so that a tile of 64 query
// rows is one contiguous run, the image of a staging tile.
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/attention_dq_accum.cuh"
#include "kiln/attention_wgmma_bwd.cuh"

namespace kiln {
namespace attention {

template <class C>
__device__ __forceinline__ void backward_fused_wgmma(
    const launch_ctx &ctx, const tensor_map &q_map, const tensor_map &k_map,
    const tensor_map &v_map, const tensor_map &d_out_map,
    const float *__restrict__ row_lse, const float *__restrict__ row_delta,
    float *__restrict__ dq_accum, typename C::elem_t *__restrict__ d_key,
    typename C::elem_t *__restrict__ d_value) {
  typedef typename C::elem_t elem_t;
  constexpr wgmma_smem L =
      wgmma_fused_backward_smem(C::bm, C::bn, C::d, C::dv, C::stages);
  constexpr int TK = C::tk;
  constexpr int BK = C::bm, BQ = C::bn, STAGES = C::stages;
  constexpr int DP = pad_panel(C::d), DVP = pad_panel(C::dv);
  constexpr int KPANELS = DP / kPanel, VPANELS = DVP / kPanel;
  constexpr int DS = C::dq_stride;
  // Key rows of one warpgroup, in k16 steps of the dQ product.
  constexpr int OWN_STEPS = kWarpgroupRows / 16;
  // dQ's product in flight with dV's and dK's: registers for the three
  // accumulators and both fragments.
  constexpr bool DQ_IN_FLIGHT = 2 * KPANELS + VPANELS <= 3;
  typedef tma::register_split<2> Regs;
  static_assert(BK == 2 * kWarpgroupRows && BQ == kPanel,
                "two consumer warpgroups of 64 keys, 64-query tiles (the "
                "queries of dS^T are one swizzled panel)");
  static_assert(KPANELS + VPANELS <= 4,
                "dK, dV and a dQ share in registers: head dims of at most 128");
  static_assert(DS == dq_accum_stride(C::d), "the accumulator's rows");
  static_assert(C::has_dk && C::has_dv && C::has_row_lse,
                "the one-pass backward computes every gradient from the "
                "forward's row log-sum-exp");
  const pipeline_smem<STAGES> sm(L, BQ);
  const int tid = ctx.thread.x, wg = tid >> 7;
  // Staging tile b: `ready` once warpgroup 1 may add its share to the one
  // warpgroup 0 stored (128 arrivals); `free` once the bulk reduction of
  // the tile's last use has read it (one arrival).
  const unsigned extra = sm.base + (unsigned)L.bars + 8u * (2 + 3 * STAGES);
  auto ready = [&](int b) { return extra + 8u * b; };
  auto freed = [&](int b) { return extra + 8u * (2 + b); };
  if (tid == 0)
    for (int b = 0; b < 2; ++b) {
      tma::barrier_init(ready(b), 128);
      tma::barrier_init(freed(b), 1);
    }
  sm.init(tid, 2);

  if (wg == 0) {
    Regs::producer();
    if (tid == 0)
      produce_key_items<C, BK, BQ>(ctx, sm, q_map, k_map, v_map, d_out_map,
                                   row_lse, row_delta);
    return;
  }

  Regs::consumer();
  const int cwg = wg - 1;
  const lane_pos pos(tid);
  const unsigned aRow0 = cwg * kWarpgroupRows;
  const unsigned dsTile = sm.base + (unsigned)L.ds;
  stream_ring<STAGES> ring;
  // Query tiles this block has taken so far: staging tile (used & 1), in
  // its phase (used >> 1).
  int used = 0;
  typedef key_item<C, BK, BQ> item;
  for (typename item::walk at(ctx); at.more(); at.next(ctx)) {
    const item x(at);
    const int kRow0 = x.k0 + aRow0 + pos.row;
    float dk[KPANELS][32], dv[VPANELS][32];
    zero_panels(dk);
    zero_panels(dv);
    float s[BQ / 2], dp[BQ / 2];
    unsigned pf[BQ / 16][4], dsf[BQ / 16][4];

    // The leading query tiles that cross the diagonal for this
    // warpgroup's keys take the mask, in a loop of their own.
    const int masked = x.masked_tiles(x.k0 + aRow0);
    tma::wait(sm.fixed_bar(), at.n & 1);
    // Query tile u, the block's used-th.
    auto tile = [&](bool mask, int u) {
      const int st = ring.stage(u), q0 = x.qBegin + u * BQ;
      tma::wait(sm.full_a(st), ring.parity(u));
      product_ss<BQ, DP, C::kind>(s, sm.fixed_a(), BK, aRow0, sm.a(st));
      tma::wait(sm.full_b(st), ring.parity(u));
      product_ss<BQ, DVP, C::kind>(dp, sm.fixed_b(), BK, aRow0, sm.b(st));
      wgmma::wait<0>();
      wgmma::fence_accumulators(s);
      wgmma::fence_accumulators(dp);
      key_probabilities<C, BQ, true>(s, dp, sm.rows(st), kRow0, q0, pos,
                                     mask);
      to_fragments<elem_t, BQ>(pf, s);
      to_fragments<elem_t, BQ>(dsf, dp);
      // This warpgroup's rows of dS^T (keys x queries, 128-byte swizzled as
      // wgmma reads it: run j of row r at run j ^ (r % 8)) for its share of
      // dQ. Its last reader, this warpgroup's previous dQ product, has
      // retired.
#pragma unroll
      for (int j = 0; j < BQ / 8; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const unsigned r = aRow0 + pos.row + 8 * h;
          mem::store_shared(dsTile + r * 128 + ((j ^ (r & 7)) << 4) +
                                pos.col * 2,
                            dsf[j / 2][(j % 2) * 2 + h]);
        }
      tma::fence_async();
      tma::named_barrier(1 + cwg, 128);
      // This warpgroup's share of dQ^T (head dim x queries) = K^T dS^T over
      // its 64 keys, K (the fixed tile) and dS^T both read with their rows
      // as the reduction. Zeroed before any product is issued: an
      // accumulator written while products are in flight would serialise
      // them.
      float dq[KPANELS][32];
      zero_panels(dq);
      fence_panels(dq);
      auto dq_product = [&] {
        wgmma::fence();
#pragma unroll
        for (int kk = 0; kk < OWN_STEPS; ++kk)
#pragma unroll
          for (int p = 0; p < KPANELS; ++p)
            wgmma::mma<kPanel, C::kind, true, true>(
                dq[p], n_major(sm.fixed_a(), BK, p, cwg * OWN_STEPS + kk),
                n_major(dsTile, BK, 0, cwg * OWN_STEPS + kk));
        wgmma::commit_group();
      };
      product_rs<BQ / 16, VPANELS, C::kind>(dv, pf, sm.b(st));
      product_rs<BQ / 16, KPANELS, C::kind>(dk, dsf, sm.a(st));
      // With head dims of 64 all three products fit in flight together;
      // larger ones take dQ's after dV's and dK's have retired (with their
      // fragments), or ptxas would serialise every product.
      if constexpr (DQ_IN_FLIGHT)
        dq_product();
      wgmma::wait<0>();
      fence_panels(dk);
      fence_panels(dv);
      wgmma::fence_fragments(pf);
      wgmma::fence_fragments(dsf);
      release_by_warpgroup(sm.empty(st), tid);
      if constexpr (!DQ_IN_FLIGHT) {
        dq_product();
        wgmma::wait<0>();
      }
      fence_panels(dq);
      // The last tile's products with K and V have retired: the next item's
      // keys and values may come.
      if (u == x.tiles - 1)
        release_by_warpgroup(sm.fixed_empty(), tid);
      // The two shares into staging tile b ([query][head dim], f32):
      // warpgroup 0 stores its share, warpgroup 1 adds its own (the same
      // elements, thread for thread) and hands the sum to the copy engine.
      const int b = used & 1;
      const unsigned phase = (used >> 1) & 1;
      const unsigned staging =
          sm.base + (unsigned)(L.staging + b * L.staging_bytes);
      auto element = [&](int p, int i) {
        // Register i = 4j + 2h + c: head-dim row pos.row + 8h of panel p,
        // query column 8j + pos.col + c.
        const int j = i / 4, h = (i / 2) % 2, c = i % 2;
        return staging + (unsigned)(((8 * j + pos.col + c) * DS + p * kPanel +
                                     pos.row + 8 * h) *
                                    4);
      };
      if (cwg == 0) {
        tma::wait(freed(b), phase ^ 1u);
#pragma unroll
        for (int p = 0; p < KPANELS; ++p)
#pragma unroll
          for (int i = 0; i < 32; ++i)
            mem::store_shared(element(p, i), dq[p][i]);
        tma::arrive(ready(b));
      } else {
        tma::wait(ready(b), phase);
#pragma unroll
        for (int p = 0; p < KPANELS; ++p)
#pragma unroll
          for (int i = 0; i < 32; ++i) {
            const unsigned at = element(p, i);
            mem::store_shared(at, mem::load_shared_f32(at) + dq[p][i]);
          }
        tma::fence_async();
        tma::named_barrier(3, 128);
        if ((tid & 127) == 0) {
          tma::reduce_add_bytes(
              dq_accum + ((long long)x.bh * C::stats_rows + q0) * DS, staging,
              (unsigned)L.staging_bytes);
          tma::bulk_commit();
          // The previous tile's reduction has read its staging tile.
          tma::bulk_wait_read<1>();
          if (used > 0)
            tma::arrive(freed(b ^ 1));
        }
      }
      ++used;
    };
    for (int u = 0; u < masked; ++u)
      tile(true, u);
    for (int u = masked; u < x.tiles; ++u)
      tile(false, u);
    if (x.tiles == 0)
      release_by_warpgroup(sm.fixed_empty(), tid);
    ring.use += x.tiles;
    store_panels<elem_t, typename C::idx_t, KPANELS, C::d,
                 C::d_key_layout::row>(d_key + C::d_key_layout::base(x.bh), dk,
                                       kRow0, TK, pos.col, C::scale);
    store_panels<elem_t, typename C::idx_t, VPANELS, C::dv,
                 C::d_value_layout::row>(d_value +
                                             C::d_value_layout::base(x.bh),
                                         dv, kRow0, TK, pos.col, 1.f);
  }
  // The reductions complete before the block's shared memory goes.
  if (tid == 128 + 128)
    tma::bulk_wait_done<0>();
}

} // namespace attention
} // namespace kiln
