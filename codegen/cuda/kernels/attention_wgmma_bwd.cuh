//===- attention_wgmma_bwd.cuh - flash-attention backward on Hopper -------===//
//
// The backward of attention_bwd.cuh on tensor cores (sm_90a), for bf16/f16
// with head dims of at most 256, in the same two deterministic kernels (no
// atomics: every gradient element is summed by one thread in a fixed
// order), each warp-specialised and persistent as attention_wgmma_fwd.cuh:
// a producer warpgroup copies each work item's own tiles once and streams
// the others by TMA through STAGES stages; consumer warpgroups own 64 rows
// each.
//  1. backward_dq_wgmma, over tiles of BM queries, keeping Q and dO:
//     delta = rowsum(dO * O) from global memory (16-byte loads issued
//     before the item's tiles are waited for); a first sweep over the key
//     tiles computes each row's log-sum-exp (log2 domain; +inf for a row
//     that sees no key, so that its probabilities are 0), unless the
//     forward's is given (C::has_row_lse, `given_lse` in natural log); both
//     go to scratch for kernel 2. A second sweep recomputes S = Q K^T and
//     dP = dO V^T, forms dS = P (dP - delta) in registers and accumulates
//     dQ += dS K (K read N-major); dQ is written times the scale.
//  2. backward_dkdv_wgmma, over tiles of BN keys, keeping K and V: every
//     tile of BM queries that sees them is streamed with its rows'
//     statistics; S^T = K Q^T and dP^T = V dO^T give P^T and dS^T in
//     registers, and dV += P^T dO, dK += dS^T Q (times the scale at the
//     end). With has_dk or has_dv false the kernel computes the other one
//     alone (what head dims of 256 need: both would not fit in registers).
//
// C: as attention_wgmma_fwd.cuh (bm and bn are this kernel's fixed and
// streamed tile rows), with out_layout, d_out_layout, d_query_layout,
// d_key_layout, d_value_layout, has_row_lse, has_dq, has_dk, has_dv, scale and
// stats_rows (rows per batch * head of the statistics in scratch). The maps
// are as the forward's, with boxes of the fixed tile's or the streamed
// tile's rows.
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/attention_wgmma.cuh"

namespace kiln {
namespace attention {

// rowsum(dO * O) of row `row` (of a tile's rows, `qi` < TQ) over the DV
// columns, the quad's lanes taking every fourth 16-byte run of 8 columns
// (DV is a multiple of 8, the rows are 16-byte aligned): a partial sum per
// lane, which quad_sum completes.
template <class C>
__device__ __forceinline__ float
row_delta_part(const typename C::elem_t *__restrict__ out,
               const typename C::elem_t *__restrict__ d_out, int bh, int qi,
               int quad) {
  typedef typename C::elem_t elem_t;
  typedef typename C::idx_t idx_t;
  constexpr int RUN = 8, RUNS = C::dv / RUN;
  static_assert(C::dv % RUN == 0, "rows of whole 16-byte runs");
  const elem_t *o = out + C::out_layout::base(bh) + (idx_t)qi * C::out_layout::row;
  const elem_t *g =
      d_out + C::d_out_layout::base(bh) + (idx_t)qi * C::d_out_layout::row;
  float acc = 0.f;
#pragma unroll
  for (int r = quad; r < RUNS; r += 4) {
    const uint4 ov = *reinterpret_cast<const uint4 *>(o + r * RUN);
    const uint4 gv = *reinterpret_cast<const uint4 *>(g + r * RUN);
    const unsigned ow[4] = {ov.x, ov.y, ov.z, ov.w};
    const unsigned gw[4] = {gv.x, gv.y, gv.z, gv.w};
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      float o0, o1, g0, g1;
      gemm::unpack<elem_t>(ow[e], o0, o1);
      gemm::unpack<elem_t>(gw[e], g0, g1);
      acc = fmaf(o0, g0, fmaf(o1, g1, acc));
    }
  }
  return acc;
}

template <class C>
__device__ __forceinline__ void backward_dq_wgmma(
    const launch_ctx &ctx, const tensor_map &q_map, const tensor_map &k_map,
    const tensor_map &v_map, const tensor_map &d_out_map,
    const typename C::elem_t *__restrict__ out,
    const typename C::elem_t *__restrict__ d_out,
    const float *__restrict__ given_lse, float *__restrict__ row_lse,
    float *__restrict__ row_delta, typename C::elem_t *__restrict__ d_query) {
  typedef typename C::elem_t elem_t;
  typedef typename C::idx_t idx_t;
  constexpr wgmma_smem L =
      wgmma_backward_smem(C::bm, C::bn, C::d, C::dv, C::stages, false);
  constexpr int TQ = C::tq;
  constexpr int BM = C::bm, BN = C::bn, STAGES = C::stages;
  constexpr int DP = pad_panel(C::d), DVP = pad_panel(C::dv);
  constexpr int CONSUMERS = BM / kWarpgroupRows;
  typedef tma::register_split<CONSUMERS> Regs;
  static_assert(BM % 64 == 0 && (BN == 64 || BN == 128) && DP <= 256 &&
                    DVP <= 256,
                "64-row warpgroup slices, 64- or 128-key tiles, head dims of "
                "at most 256");
  const pipeline_smem<C::stages> sm(L, C::bn);
  // The item's query tile and its key tiles. Sweep 1 (statistics, unless
  // the forward's are given) streams K; sweep 2 (dq) K and V.
  struct item : query_item<C, BM, BN> {
    int sweep1, uses;
    __device__ __forceinline__ explicit item(
        const typename query_item<C, BM, BN>::walk &at)
        : query_item<C, BM, BN>(at) {
      sweep1 = C::has_row_lse ? 0 : this->tiles;
      uses = sweep1 + (C::has_dq ? this->tiles : 0);
    }
  };
  const int tid = ctx.thread.x, wg = tid >> 7;
  sm.init(tid, CONSUMERS);

  if (wg == 0) {
    Regs::producer();
    if (tid != 0)
      return;
    tma::prefetch(q_map);
    tma::prefetch(k_map);
    tma::prefetch(v_map);
    tma::prefetch(d_out_map);
    stream_ring<STAGES> ring;
    for (typename item::walk at(ctx); at.more(); at.next(ctx)) {
      const item x(at);
      tma::wait(sm.fixed_empty(), (at.n & 1) ^ 1u);
      tma::arrive_expect_bytes(sm.fixed_bar(),
                               (unsigned)(L.fixed_b - L.fixed_a +
                                          panel_tile_bytes(BM, C::dv)));
      copy_tile<BM, DP / kPanel, C::q_layout::heads>(sm.fixed_a(), q_map,
                                                     sm.fixed_bar(), x.q0, x.bh);
      copy_tile<BM, DVP / kPanel, C::d_out_layout::heads>(
          sm.fixed_b(), d_out_map, sm.fixed_bar(), x.q0, x.bh);
      for (int u = 0; u < x.uses; ++u) {
        const int s = ring.stage(u),
                  k0 = (u < x.sweep1 ? u : u - x.sweep1) * BN;
        tma::wait(sm.empty(s), ring.parity(u) ^ 1u);
        tma::arrive_expect_bytes(sm.full_a(s), (unsigned)L.stage_a_bytes);
        copy_tile<BN, DP / kPanel, C::k_layout::heads>(sm.a(s), k_map,
                                                       sm.full_a(s), k0, x.bh);
        if (u >= x.sweep1) {
          tma::arrive_expect_bytes(sm.full_b(s), (unsigned)L.stage_b_bytes);
          copy_tile<BN, DVP / kPanel, C::v_layout::heads>(
              sm.b(s), v_map, sm.full_b(s), k0, x.bh);
        }
      }
      ring.use += x.uses;
    }
    return;
  }

  Regs::consumer();
  const int cwg = wg - 1;
  const lane_pos pos(tid);
  const int quad = tid & 3;
  const unsigned aRow0 = cwg * kWarpgroupRows;
  stream_ring<STAGES> ring;
  // Per stage, the parity of its V copies so far (V fills a stage only in
  // sweep 2).
  unsigned vPhase = 0;
  for (typename item::walk at(ctx); at.more(); at.next(ctx)) {
    const item x(at);
    const int bh = x.bh, q0 = x.q0, tiles = x.tiles, sweep1 = x.sweep1;
    const int row0 = q0 + cwg * kWarpgroupRows + pos.row;
    // delta = rowsum(dO * O), loaded while the item's tiles arrive.
    float delta[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int qi = row0 + 8 * h;
      delta[h] = quad_sum(qi < TQ ? row_delta_part<C>(out, d_out, bh, qi, quad)
                                  : 0.f);
    }
    // The leading key tiles this warpgroup's queries see whole go without
    // the mask, in loops of their own (as the forward's). Head dims past 128
    // keep one loop per sweep, the mask a run-time choice per tile: with
    // 128 registers of dQ, the second copy of each loop body made ptxas
    // spill.
    const int whole = x.whole_tiles(q0 + cwg * kWarpgroupRows);
    constexpr bool kOneLoopPerSweep = DP > 128;
    float s[BN / 2];

    tma::wait(sm.fixed_bar(), at.n & 1);
    // Sweep 1: the rows' maxima and sums of exp2(S * qscale).
    float m[2] = {-inf(), -inf()}, l[2] = {0.f, 0.f};
    auto statistics = [&](bool mask, int u) {
      const int st = ring.stage(u), k0 = u * BN;
      tma::wait(sm.full_a(st), ring.parity(u));
      product_ss<BN, DP, C::kind>(s, sm.fixed_a(), BM, aRow0, sm.a(st));
      wgmma::wait<0>();
      wgmma::fence_accumulators(s);
      release_by_warpgroup(sm.empty(st), tid);
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float mx = -inf();
#pragma unroll
        for (int j = 0; j < BN / 8; ++j)
#pragma unroll
          for (int c = 0; c < 2; ++c) {
            float &v = s[4 * j + 2 * h + c];
            if (mask && !visible<C>(row0 + 8 * h, k0 + 8 * j + pos.col + c))
              v = -inf();
            mx = fmaxf(mx, v);
          }
        // As the forward's softmax (the scale is positive).
        const float mNew = fmaxf(m[h], quad_max(mx) * C::qscale);
        const float ms = mNew == -inf() ? 0.f : mNew;
        float sum = 0.f;
#pragma unroll
        for (int i = 0; i < BN / 2; ++i)
          if ((i >> 1 & 1) == h)
            sum += fast_exp2(fmaf(s[i], C::qscale, -ms));
        l[h] = l[h] * fast_exp2(m[h] - ms) + sum;
        m[h] = mNew;
      }
    };
    if constexpr (kOneLoopPerSweep) {
      for (int u = 0; u < sweep1; ++u)
        statistics(u >= whole, u);
    } else {
      for (int u = 0; u < min(whole, sweep1); ++u)
        statistics(false, u);
      for (int u = whole; u < sweep1; ++u)
        statistics(true, u);
    }
    float lse[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int qi = row0 + 8 * h;
      // Rows past the queries (zeros, which would see every key) get 0 too.
      if constexpr (C::has_row_lse) {
        lse[h] = qi < TQ ? given_lse[(idx_t)bh * TQ + qi] * 1.4426950408889634f
                         : inf();
        // A row that saw no key (-inf) has no probabilities either.
        if (lse[h] == -inf())
          lse[h] = inf();
      } else {
        const float total = quad_sum(l[h]);
        lse[h] = total > 0.f && qi < TQ ? m[h] + log2f(total) : inf();
      }
      if (quad == 0) {
        row_lse[(idx_t)bh * C::stats_rows + qi] = lse[h];
        row_delta[(idx_t)bh * C::stats_rows + qi] = qi < TQ ? delta[h] : 0.f;
      }
    }
    // Without a dQ the statistics are all this kernel computes: sweep 2,
    // which stores through C::d_query_layout, is then not instantiated.
    if constexpr (!C::has_dq) {
      release_by_warpgroup(sm.fixed_empty(), tid);
      ring.use += x.uses;
    } else {
      // Sweep 2: dQ += (P * (dP - delta)) K.
      constexpr int PANELS = DP / kPanel;
      float dq[PANELS][32];
      zero_panels(dq);
      float dp[BN / 2];
      unsigned ds[BN / 16][4];
      auto gradient = [&](bool mask, int j) {
        const int u = sweep1 + j, st = ring.stage(u), k0 = j * BN;
        tma::wait(sm.full_a(st), ring.parity(u));
        tma::wait(sm.full_b(st), (vPhase >> st) & 1u);
        vPhase ^= 1u << st;
        product_ss<BN, DP, C::kind>(s, sm.fixed_a(), BM, aRow0, sm.a(st));
        product_ss<BN, DVP, C::kind>(dp, sm.fixed_b(), BM, aRow0, sm.b(st));
        wgmma::wait<0>();
        wgmma::fence_accumulators(s);
        wgmma::fence_accumulators(dp);
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
          for (int j8 = 0; j8 < BN / 8; ++j8)
#pragma unroll
            for (int c = 0; c < 2; ++c) {
              const int i = 4 * j8 + 2 * h + c;
              const bool hidden =
                  mask && !visible<C>(row0 + 8 * h, k0 + 8 * j8 + pos.col + c);
              const float p =
                  hidden ? 0.f : fast_exp2(fmaf(s[i], C::qscale, -lse[h]));
              s[i] = p * (dp[i] - delta[h]);
            }
        to_fragments<elem_t, BN>(ds, s);
        product_rs<BN / 16, PANELS, C::kind>(dq, ds, sm.a(st));
        // Retired before the next scores are issued, as in backward_dkdv_wgmma.
        wgmma::wait<0>();
        fence_panels(dq);
        wgmma::fence_fragments(ds);
        release_by_warpgroup(sm.empty(st), tid);
      };
      if constexpr (kOneLoopPerSweep) {
        for (int j = 0; j < tiles; ++j)
          gradient(j >= whole, j);
      } else {
        for (int j = 0; j < whole; ++j)
          gradient(false, j);
        for (int j = whole; j < tiles; ++j)
          gradient(true, j);
      }
      // Every product has retired: the next item's Q and dO may come while
      // this one's epilogue runs. (Freed at the last tile's scores instead,
      // ptxas serialises the head dim 256 kernel's products.)
      release_by_warpgroup(sm.fixed_empty(), tid);
      ring.use += x.uses;
      elem_t *dqb = d_query + C::d_query_layout::base(bh);
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int qi = row0 + 8 * h;
        if (qi >= TQ)
          continue;
#pragma unroll
        for (int p = 0; p < PANELS; ++p)
#pragma unroll
          for (int j8 = 0; j8 < 8; ++j8) {
            const int e = p * kPanel + 8 * j8 + pos.col;
            if (e < C::d)
              *reinterpret_cast<unsigned *>(
                  dqb + (idx_t)qi * C::d_query_layout::row + e) =
                  pack<elem_t>(dq[p][4 * j8 + 2 * h] * C::scale,
                               dq[p][4 * j8 + 2 * h + 1] * C::scale);
          }
      }
    }
  }
}

// Writes a 64-row slice of a gradient held as accumulator panels, times
// `mul`, to rows row0 + (0, 8) of a [T, W] matrix with rows RS apart.
template <class E, class Idx, int PANELS, int W, long long RS>
__device__ __forceinline__ void
store_panels(E *dst, const float (&acc)[PANELS][32], int row0, int t, int col,
             float mul) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int r = row0 + 8 * h;
    if (r >= t)
      continue;
#pragma unroll
    for (int p = 0; p < PANELS; ++p)
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        const int e = p * kPanel + 8 * j + col;
        if (e < W)
          *reinterpret_cast<unsigned *>(dst + (Idx)r * RS + e) = pack<E>(
              acc[p][4 * j + 2 * h] * mul, acc[p][4 * j + 2 * h + 1] * mul);
      }
  }
}

// A work item of the kernels over key tiles: BK keys (and values) and the
// tiles of BQ queries that see them. Rank r is the r-th longest: causal,
// the first key tiles see the most queries.
template <class C, int BK, int BQ> struct key_item {
  static constexpr int TILES = (C::tk + BK - 1) / BK;
  typedef work_walk<C, TILES> walk;
  int bh, k0, qBegin, tiles;
  __device__ __forceinline__ explicit key_item(const walk &at) {
    constexpr int TQ = C::tq, TK = C::tk;
    bh = at.bh();
    k0 = at.rank() * BK;
    // Query i sees key j when j <= i + TK - TQ: queries from k0 - (TK - TQ).
    qBegin = C::causal ? max(0, k0 - (TK - TQ)) / BQ * BQ : 0;
    tiles = qBegin < TQ ? (TQ - qBegin + BQ - 1) / BQ : 0;
  }
  // The leading query tiles that hide some of the keys from `row0` (a
  // warpgroup's 64) from some of their queries: those take the mask.
  __device__ __forceinline__ int masked_tiles(int row0) const {
    return min(tiles,
               (int)masked_query_tiles(C::tq, C::tk, C::causal, row0,
                                       kWarpgroupRows, qBegin, BQ));
  }
};

// The producer thread of the kernels over key tiles: for each of the
// block's work items, the keys and values into the fixed tiles once the
// last item's are free, then every query tile that sees them, with its
// rows' log-sum-exp and delta and its dO, through the stages.
template <class C, int BK, int BQ, int STAGES>
__device__ __forceinline__ void
produce_key_items(const launch_ctx &ctx, const pipeline_smem<STAGES> &sm,
                  const tensor_map &q_map, const tensor_map &k_map,
                  const tensor_map &v_map, const tensor_map &d_out_map,
                  const float *__restrict__ row_lse,
                  const float *__restrict__ row_delta) {
  typedef typename C::idx_t idx_t;
  constexpr int KPANELS = pad_panel(C::d) / kPanel,
                VPANELS = pad_panel(C::dv) / kPanel;
  tma::prefetch(q_map);
  tma::prefetch(k_map);
  tma::prefetch(v_map);
  tma::prefetch(d_out_map);
  stream_ring<STAGES> ring;
  typedef key_item<C, BK, BQ> item;
  for (typename item::walk at(ctx); at.more(); at.next(ctx)) {
    const item x(at);
    tma::wait(sm.fixed_empty(), (at.n & 1) ^ 1u);
    tma::arrive_expect_bytes(sm.fixed_bar(),
                             (unsigned)(panel_tile_bytes(BK, C::d) +
                                        panel_tile_bytes(BK, C::dv)));
    copy_tile<BK, KPANELS, C::k_layout::heads>(sm.fixed_a(), k_map,
                                               sm.fixed_bar(), x.k0, x.bh);
    copy_tile<BK, VPANELS, C::v_layout::heads>(sm.fixed_b(), v_map,
                                               sm.fixed_bar(), x.k0, x.bh);
    const float *lse = row_lse + (idx_t)x.bh * C::stats_rows;
    const float *delta = row_delta + (idx_t)x.bh * C::stats_rows;
    for (int u = 0; u < x.tiles; ++u) {
      const int s = ring.stage(u), q0 = x.qBegin + u * BQ;
      tma::wait(sm.empty(s), ring.parity(u) ^ 1u);
      tma::arrive_expect_bytes(sm.full_a(s),
                               (unsigned)(sm.L.stage_a_bytes + BQ * 8));
      copy_tile<BQ, KPANELS, C::q_layout::heads>(sm.a(s), q_map, sm.full_a(s),
                                                 q0, x.bh);
      tma::copy_bytes(sm.rows(s), lse + q0, BQ * 4, sm.full_a(s));
      tma::copy_bytes(sm.rows(s) + BQ * 4, delta + q0, BQ * 4, sm.full_a(s));
      tma::arrive_expect_bytes(sm.full_b(s), (unsigned)sm.L.stage_b_bytes);
      copy_tile<BQ, VPANELS, C::d_out_layout::heads>(sm.b(s), d_out_map,
                                                     sm.full_b(s), q0, x.bh);
    }
    ring.use += x.tiles;
  }
}

// P^T (into s, the scores S^T) and, with DK, dS^T = P^T (dP^T - delta)
// (into dp, dP^T) of a consumer warpgroup's keys (this lane's rows kRow0
// and kRow0 + 8) and the BQ queries from q0, whose log-sum-exp and delta
// lie at shared address `rows`. Causal, with `mask` (a tile that crosses
// the diagonal, masked_query_tiles): key row r sees the queries from
// r - (TK - TQ) on; the tile's columns before `first[h]` are hidden from
// row h.
template <class C, int BQ, bool DK>
__device__ __forceinline__ void
key_probabilities(float (&s)[BQ / 2], float (&dp)[BQ / 2], unsigned rows,
                  int kRow0, int q0, const lane_pos &pos, bool mask) {
  int first[2] = {0, 0};
  if (C::causal && mask)
    for (int h = 0; h < 2; ++h)
      first[h] = kRow0 + 8 * h - (C::tk - C::tq) - q0;
#pragma unroll
  for (int j = 0; j < BQ / 8; ++j)
#pragma unroll
    for (int c = 0; c < 2; ++c) {
      const int col = 8 * j + pos.col + c;
      const float lse = mem::load_shared_f32(rows + 4 * col);
      const float delta = DK ? mem::load_shared_f32(rows + 4 * (BQ + col)) : 0.f;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int i = 4 * j + 2 * h + c;
        const bool hidden = C::causal && mask && col < first[h];
        const float p = hidden ? 0.f : fast_exp2(fmaf(s[i], C::qscale, -lse));
        if constexpr (DK)
          dp[i] = p * (dp[i] - delta);
        s[i] = p;
      }
    }
}

template <class C>
__device__ __forceinline__ void backward_dkdv_wgmma(
    const launch_ctx &ctx, const tensor_map &q_map, const tensor_map &k_map,
    const tensor_map &v_map, const tensor_map &d_out_map,
    const float *__restrict__ row_lse, const float *__restrict__ row_delta,
    typename C::elem_t *__restrict__ d_key,
    typename C::elem_t *__restrict__ d_value) {
  typedef typename C::elem_t elem_t;
  typedef typename C::idx_t idx_t;
  constexpr wgmma_smem L =
      wgmma_backward_smem(C::bm, C::bn, C::d, C::dv, C::stages, true);
  constexpr int TK = C::tk;
  // Fixed: BK keys; streamed: BQ queries.
  constexpr int BK = C::bm, BQ = C::bn, STAGES = C::stages;
  constexpr int DP = pad_panel(C::d), DVP = pad_panel(C::dv);
  constexpr int KPANELS = DP / kPanel, VPANELS = DVP / kPanel;
  constexpr int CONSUMERS = BK / kWarpgroupRows;
  constexpr bool DK = C::has_dk, DV = C::has_dv;
  typedef tma::register_split<CONSUMERS> Regs;
  static_assert(BK % 64 == 0 && BQ == 64 && DP <= 256 && DVP <= 256,
                "64-row warpgroup slices of keys, 64-query tiles, head dims "
                "of at most 256");
  static_assert(DK || DV, "the kernel computes dk, dv or both");
  typedef key_item<C, BK, BQ> item;
  const pipeline_smem<C::stages> sm(L, C::bn);
  const int tid = ctx.thread.x, wg = tid >> 7;
  sm.init(tid, CONSUMERS);

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
  stream_ring<STAGES> ring;
  for (typename item::walk at(ctx); at.more(); at.next(ctx)) {
    const item x(at);
    const int kRow0 = x.k0 + cwg * kWarpgroupRows + pos.row;
    float dk[DK ? KPANELS : 1][32], dv[DV ? VPANELS : 1][32];
    zero_panels(dk);
    zero_panels(dv);
    float s[BQ / 2], dp[BQ / 2];
    unsigned pf[BQ / 16][4], dsf[BQ / 16][4];

    // The leading query tiles that cross the diagonal for this
    // warpgroup's keys take the mask, in a loop of their own.
    const int masked = x.masked_tiles(x.k0 + aRow0);
    tma::wait(sm.fixed_bar(), at.n & 1);
    auto tile = [&](bool mask, int u) {
      const int st = ring.stage(u), q0 = x.qBegin + u * BQ;
      tma::wait(sm.full_a(st), ring.parity(u));
      product_ss<BQ, DP, C::kind>(s, sm.fixed_a(), BK, aRow0, sm.a(st));
      if constexpr (DK) {
        tma::wait(sm.full_b(st), ring.parity(u));
        product_ss<BQ, DVP, C::kind>(dp, sm.fixed_b(), BK, aRow0, sm.b(st));
      }
      wgmma::wait<0>();
      wgmma::fence_accumulators(s);
      if constexpr (DK)
        wgmma::fence_accumulators(dp);
      // The last tile's products with K and V have retired: the next item's
      // keys and values may come.
      if (u == x.tiles - 1)
        release_by_warpgroup(sm.fixed_empty(), tid);
      key_probabilities<C, BQ, DK>(s, dp, sm.rows(st), kRow0, q0, pos, mask);
      if constexpr (DV) {
        to_fragments<elem_t, BQ>(pf, s);
        if constexpr (!DK)
          tma::wait(sm.full_b(st), ring.parity(u));
        product_rs<BQ / 16, VPANELS, C::kind>(dv, pf, sm.b(st));
      }
      if constexpr (DK) {
        to_fragments<elem_t, BQ>(dsf, dp);
        product_rs<BQ / 16, KPANELS, C::kind>(dk, dsf, sm.a(st));
      }
      // Both products retire before the next scores are issued: with them
      // in flight too, the accumulators and fragments the tensor cores hold
      // would exceed the registers, and ptxas would serialise every wgmma.
      wgmma::wait<0>();
      if constexpr (DK) {
        fence_panels(dk);
        wgmma::fence_fragments(dsf);
      }
      if constexpr (DV) {
        fence_panels(dv);
        wgmma::fence_fragments(pf);
      }
      release_by_warpgroup(sm.empty(st), tid);
    };
    for (int u = 0; u < masked; ++u)
      tile(true, u);
    for (int u = masked; u < x.tiles; ++u)
      tile(false, u);
    if (x.tiles == 0)
      release_by_warpgroup(sm.fixed_empty(), tid);
    ring.use += x.tiles;
    if constexpr (DK) {
      store_panels<elem_t, idx_t, KPANELS, C::d, C::d_key_layout::row>(
          d_key + C::d_key_layout::base(x.bh), dk, kRow0, TK, pos.col,
          C::scale);
    }
    if constexpr (DV) {
      store_panels<elem_t, idx_t, VPANELS, C::dv, C::d_value_layout::row>(
          d_value + C::d_value_layout::base(x.bh), dv, kRow0, TK, pos.col,
          1.f);
    }
  }
}

} // namespace attention
} // namespace kiln
