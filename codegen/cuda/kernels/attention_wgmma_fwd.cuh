//===- attention_wgmma_fwd.cuh - flash-attention forward on Hopper --------===//
//
// The forward of attention_fwd.cuh on tensor cores (sm_90a), for bf16/f16
// with head dims of at most 256: a work item per (batch * head, tile of BM
// queries), warp-specialised, in persistent blocks of at most one per SM
// (attention_wgmma.cuh): an item's query tile and first key tiles are
// copied while the last item's final products and epilogue run.
//  - Warpgroup 0 is the producer: its one thread copies the query tile once
//    (once the consumers have freed the last item's) and then the key and
//    value tiles of BN keys into STAGES shared stages by TMA, each
//    completing on its own mbarrier (full-K, full-V), as the consumers free
//    them (empty). It gives its registers to the consumers.
//  - Warpgroups 1 .. BM / 64 are consumers of 64 query rows each. Scores
//    S = Q K^T are a wgmma on the shared tiles; the probabilities P stay in
//    registers as the A operand of O += P V (V read N-major). The softmax of
//    tile j runs while the tensor cores multiply P V of tile j - 1: each
//    iteration issues S_j and P_{j-1} V_{j-1}, waits for S_j only, computes
//    its online softmax (running maximum and sum in the log2 domain), then
//    waits for the product and rescales O. With C::pingpong the two
//    consumer warpgroups take turns (named barriers 1 and 2) to issue an
//    iteration's products, as FlashAttention-3 schedules them, so that one
//    warpgroup's softmax runs while the tensor cores multiply the other's.
//  - Causal items stop at their last visible key tile and mask only the
//    tiles that cross the diagonal or the end of the keys, in a loop of
//    their own after the unmasked ones (whole_key_tiles). A block takes
//    them in pairs of a long and a short one of the same head (work_order),
//    so that blocks finish together and the items in flight share their
//    heads' keys and values in L2.
//
// C: elem_t, idx_t, tq, tk, d, dv, causal, qscale, kind (0 bf16, 1 f16), bm,
// bn, stages, batch_heads, pingpong, and q_layout, k_layout, v_layout,
// out_layout (strided<> of attention_common.cuh). The maps: q, k and v as
// tiled maps {head dim, T, heads, batch} with boxes {64, BM or BN, 1, 1},
// 128-byte swizzled. The block is 128 * (BM / 64 + 1) threads. A non-null
// `row_lse` ([B * H][Tq] f32) receives each row's log-sum-exp (natural
// log).
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/attention_wgmma.cuh"

namespace kiln {
namespace attention {

template <class C>
__device__ __forceinline__ void
forward_wgmma(const launch_ctx &ctx, const tensor_map &q_map,
              const tensor_map &k_map, const tensor_map &v_map,
              typename C::elem_t *__restrict__ out,
              float *__restrict__ row_lse) {
  typedef typename C::elem_t elem_t;
  typedef typename C::idx_t idx_t;
  constexpr int TQ = C::tq, TK = C::tk, DV = C::dv;
  constexpr int BM = C::bm, BN = C::bn, STAGES = C::stages;
  constexpr int DP = pad_panel(C::d), DVP = pad_panel(C::dv);
  constexpr int VPANELS = DVP / kPanel;
  constexpr int CONSUMERS = BM / kWarpgroupRows;
  constexpr wgmma_smem L = wgmma_forward_smem(BM, BN, C::d, C::dv, STAGES);
  typedef tma::register_split<CONSUMERS> Regs;
  static_assert(BM % 64 == 0 && (BN == 64 || BN == 128) && DVP <= 256 &&
                    DP <= 256,
                "64-row warpgroup slices, 64- or 128-key tiles, head dims of "
                "at most 256");
  static_assert(!C::pingpong || CONSUMERS == 2,
                "turns are taken by two consumer warpgroups");

  const pipeline_smem<STAGES> sm(L, BN);
  typedef query_item<C, BM, BN> item;

  const int tid = ctx.thread.x, wg = tid >> 7;
  sm.init(tid, CONSUMERS);

  if (wg == 0) {
    Regs::producer();
    if (tid != 0)
      return;
    tma::prefetch(q_map);
    tma::prefetch(k_map);
    tma::prefetch(v_map);
    stream_ring<STAGES> ring;
    for (typename item::walk at(ctx); at.more(); at.next(ctx)) {
      const item x(at);
      tma::wait(sm.fixed_empty(), (at.n & 1) ^ 1u);
      tma::arrive_expect_bytes(sm.fixed_bar(),
                               (unsigned)panel_tile_bytes(BM, C::d));
      copy_tile<BM, DP / kPanel, C::q_layout::heads>(
          sm.fixed_a(), q_map, sm.fixed_bar(), x.q0, x.bh);
      for (int j = 0; j < x.tiles; ++j) {
        const int s = ring.stage(j);
        tma::wait(sm.empty(s), ring.parity(j) ^ 1u);
        tma::arrive_expect_bytes(sm.full_a(s), (unsigned)L.stage_a_bytes);
        copy_tile<BN, DP / kPanel, C::k_layout::heads>(sm.a(s), k_map,
                                                       sm.full_a(s), j * BN,
                                                       x.bh);
        tma::arrive_expect_bytes(sm.full_b(s), (unsigned)L.stage_b_bytes);
        copy_tile<BN, VPANELS, C::v_layout::heads>(sm.b(s), v_map,
                                                   sm.full_b(s), j * BN, x.bh);
      }
      ring.use += x.tiles;
    }
    return;
  }

  Regs::consumer();
  const int cwg = wg - 1;
  const lane_pos pos(tid);
  const unsigned aRow0 = cwg * kWarpgroupRows;
  // Turns (C::pingpong, tma::wait_turn): a warpgroup waits for its turn
  // before it issues an iteration's products and passes it once they are
  // issued. Both take the same number of turns per item, so the turns run
  // on across items; warpgroup 0 takes the first.
  auto wait_turn = [&] {
    if constexpr (C::pingpong)
      tma::wait_turn(cwg);
  };
  auto pass_turn = [&] {
    if constexpr (C::pingpong)
      tma::pass_turn(cwg);
  };
  if (cwg == 1)
    pass_turn();
  stream_ring<STAGES> ring;
  for (typename item::walk at(ctx); at.more(); at.next(ctx)) {
    const item x(at);
    const int q0 = x.q0, tiles = x.tiles;
    const int row0 = q0 + cwg * kWarpgroupRows + pos.row;
    float m[2] = {-inf(), -inf()}, l[2] = {0.f, 0.f};
    float o[VPANELS][32];
#pragma unroll
    for (int p = 0; p < VPANELS; ++p)
#pragma unroll
      for (int i = 0; i < 32; ++i)
        o[p][i] = 0.f;
    float s[BN / 2];
    unsigned pf[BN / 16][4];

    // Masks and exponentiates the scores of the key tile at k0 in place
    // (m: the running maxima of the scaled scores, log2 domain); alpha: the
    // factors for what was summed against the old maxima. The scale is
    // positive, so the maximum of the raw scores gives the scaled one; a
    // row that has seen only masked keys subtracts 0 instead of -inf.
    auto softmax = [&](bool mask, int k0, float(&alpha)[2]) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int qi = row0 + 8 * h;
        float mx = -inf();
#pragma unroll
        for (int j = 0; j < BN / 8; ++j)
#pragma unroll
          for (int c = 0; c < 2; ++c) {
            float &v = s[4 * j + 2 * h + c];
            if (mask && !visible<C>(qi, k0 + 8 * j + pos.col + c))
              v = -inf();
            mx = fmaxf(mx, v);
          }
        const float mNew = fmaxf(m[h], quad_max(mx) * C::qscale);
        const float ms = mNew == -inf() ? 0.f : mNew;
        alpha[h] = fast_exp2(m[h] - ms);
        m[h] = mNew;
        float sum = 0.f;
#pragma unroll
        for (int j = 0; j < BN / 8; ++j)
#pragma unroll
          for (int c = 0; c < 2; ++c) {
            float &v = s[4 * j + 2 * h + c];
            v = fast_exp2(fmaf(v, C::qscale, -ms));
            sum += v;
          }
        l[h] = l[h] * alpha[h] + sum;
      }
    };
    auto rescale = [&](const float(&alpha)[2]) {
#pragma unroll
      for (int p = 0; p < VPANELS; ++p)
#pragma unroll
        for (int i = 0; i < 32; ++i)
          o[p][i] *= alpha[(i >> 1) & 1];
    };

    // The leading key tiles this warpgroup's queries see whole go without
    // the mask.
    const int whole = x.whole_tiles(q0 + cwg * kWarpgroupRows);
    tma::wait(sm.fixed_bar(), at.n & 1);
    if (tiles > 0) {
      tma::wait(sm.full_a(ring.stage()), ring.parity());
      product_ss<BN, DP, C::kind>(s, sm.fixed_a(), BM, aRow0,
                                  sm.a(ring.stage()));
      wgmma::wait<0>();
      wgmma::fence_accumulators(s);
      float alpha[2];
      if (whole > 0)
        softmax(false, 0, alpha);
      else
        softmax(true, 0, alpha);
      to_fragments<elem_t, BN>(pf, s);
    }
    auto step = [&](bool mask, int j) {
      const int stage = ring.stage(j), prev = ring.stage(j - 1);
      tma::wait(sm.full_a(stage), ring.parity(j));
      wait_turn();
      product_ss<BN, DP, C::kind>(s, sm.fixed_a(), BM, aRow0, sm.a(stage));
      tma::wait(sm.full_b(prev), ring.parity(j - 1));
      product_rs<BN / 16, VPANELS, C::kind>(o, pf, sm.b(prev));
      pass_turn();
      wgmma::wait<1>();
      wgmma::fence_accumulators(s);
      float alpha[2];
      softmax(mask, j * BN, alpha);
      wgmma::wait<0>();
      fence_panels(o);
      wgmma::fence_fragments(pf);
      release_by_warpgroup(sm.empty(prev), tid);
      rescale(alpha);
      to_fragments<elem_t, BN>(pf, s);
    };
    int j = 1;
    for (; j < whole; ++j)
      step(false, j);
    for (; j < tiles; ++j)
      step(true, j);
    // Every score product has retired: the next item's queries may come.
    release_by_warpgroup(sm.fixed_empty(), tid);
    if (tiles > 0) {
      const int last = ring.stage(tiles - 1);
      tma::wait(sm.full_b(last), ring.parity(tiles - 1));
      product_rs<BN / 16, VPANELS, C::kind>(o, pf, sm.b(last));
      wgmma::wait<0>();
      fence_panels(o);
      release_by_warpgroup(sm.empty(last), tid);
    }
    ring.use += tiles;

    elem_t *ob = out + C::out_layout::base(x.bh);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int qi = row0 + 8 * h;
      const float total = quad_sum(l[h]);
      if (qi >= TQ)
        continue;
      if (row_lse && (tid & 3) == 0)
        row_lse[(idx_t)x.bh * TQ + qi] = natural_lse(m[h], total);
      const float inv = total > 0.f ? 1.f / total : 0.f;
#pragma unroll
      for (int p = 0; p < VPANELS; ++p)
#pragma unroll
        for (int j = 0; j < 8; ++j) {
          const int e = p * kPanel + 8 * j + pos.col;
          if (e < DV)
            *reinterpret_cast<unsigned *>(ob + (idx_t)qi * C::out_layout::row +
                                          e) =
                pack<elem_t>(o[p][4 * j + 2 * h] * inv,
                             o[p][4 * j + 2 * h + 1] * inv);
        }
    }
  }
}

} // namespace attention
} // namespace kiln
