//===- conv_wgmma.cuh - convolution passes on warpgroup MMA (sm_90a) ------===//
//
// The implicit GEMMs of conv_layout.cuh on Hopper's wgmma.mma_async, for
// bf16/f16 convolutions whose two operands both come in 16-byte runs
// (conv_layout.cuh's a_vector / b_vector: channels last with multiples of 8
// channels, the filter's rows). Each run is gathered by cp.async straight
// into the 128-byte-swizzled shared tiles wgmma reads (gemm_layout.cuh),
// zero-filled in the padding, so the tensor cores read the operands from
// shared memory without fragments in registers and the threads' issue
// slots go to the gathers' address arithmetic alone.
//
// Pipeline and grid as gemm_wgmma.cuh: STAGES shared stages with
// STAGES - 2 tiles copied ahead of the one multiplied and one wgmma group
// in flight; persistent blocks (as many as fit the SMs) walk the work items
// (output tile, group, split of the reduction) and copy the next item's
// first tiles before this item's epilogue, which then hides their latency.
// BM / 64 warpgroups compute 64 x BN each.
//
// Cfg: the geometry of conv_layout.cuh and `element`, `index`, KIND (0 bf16,
// 1 f16), BM (a multiple of 64), BN (64, 128 or 256), BK (wgmma_block_k),
// STAGES, A_KMAJOR, B_KMAJOR, SPLIT and KT_PER_SPLIT. Params and Epi as for
// conv_igemm.cuh, whose igemm_split_sum adds the partials of a split
// reduction; Epi also gives RUN, the elements of a 16-byte run of its one
// result along the columns (0: no such runs), run_t, the result's type,
// value(p, g, r, c, acc), the result of one element in that type, and
// store_run(p, g, r, c, run) / store_value(p, g, r, c, v): a tile whose
// results fit the free stages is staged there and stored in runs. With
// Epi::STATS (staged tiles only), the epilogue also writes the batch-norm
// partials of every column of the stored tile to Epi::stats(p) (a
// kiln::bn::welford per row tile and channel, tile_stats.cuh).
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/conv_igemm.cuh"
#include "kiln/gemm_wgmma.cuh"
#include "kiln/tile_stats.cuh"

namespace kiln {
namespace conv {

// One thread's share of the copies of an operand's tile: COUNT 16-byte
// runs, STEP swizzle rows apart (a multiple of 8, so every run has the
// first one's swizzle and its shared offset is the first one's plus a
// constant). K-major tiles have a row per GEMM row (A) or column (B) and
// 8 runs along K; M/N-major tiles a row per k and MN / 8 runs. A thread's
// runs of a K-major tile share their k: where A's rows are pixels
// (a_rows_are_pixels), each row's image and window origin are computed
// once per work item (begin) and only the tap once per K step.
template <class Cfg, bool IS_A> struct wgmma_operand_copy {
  typedef typename Cfg::index idx;
  typedef typename Cfg::element T;
  static constexpr int THREADS = Cfg::BM / 64 * 128;
  static constexpr bool KMAJOR = IS_A ? Cfg::A_KMAJOR : Cfg::B_KMAJOR;
  static constexpr bool PIXEL_ROWS = IS_A && KMAJOR && a_rows_are_pixels(Cfg{});
  static constexpr int MN = IS_A ? Cfg::BM : Cfg::BN;
  static constexpr int PER_ROW = (KMAJOR ? Cfg::BK : MN) / 8;
  static constexpr int ROWS = KMAJOR ? MN : Cfg::BK;
  static constexpr int STEP = THREADS / PER_ROW;
  static constexpr int COUNT = ROWS / STEP;
  static_assert(THREADS % PER_ROW == 0 && STEP % 8 == 0 && COUNT * STEP == ROWS,
                "runs must divide among threads in whole swizzle rows");

  int row, col;
  unsigned offset;
  a_row<idx> rows[PIXEL_ROWS ? COUNT : 1];

  __device__ __forceinline__ explicit wgmma_operand_copy(int tid)
      : row(tid / PER_ROW), col(tid % PER_ROW),
        offset(KMAJOR ? gemm::wgmma_swizzle_k(tid / PER_ROW, tid % PER_ROW)
                      : gemm::wgmma_swizzle_mn(tid / PER_ROW, tid % PER_ROW)) {}

  // The rows of the tile at GEMM offset mn0 (before its first copy).
  __device__ __forceinline__ void begin(idx mn0) {
    if constexpr (PIXEL_ROWS)
#pragma unroll
      for (int i = 0; i < COUNT; ++i)
        rows[i] = a_row_of(Cfg{}, mn0 + row + i * STEP);
  }

  // The tile at GEMM offset mn0 (rows of A, columns of B) and k0 of
  // `group` into the shared tile at s. Through L1 (.ca): the windows of
  // neighbouring pixels overlap, so a tile's taps mostly hit lines its
  // other taps brought in.
  __device__ __forceinline__ void operator()(unsigned s,
                                             const T *__restrict__ g, idx group,
                                             idx mn0, idx k0) const {
    if constexpr (PIXEL_ROWS) {
      const idx k = k0 + col * 8;
      const tap<idx> tp = a_tap_of(Cfg{}, k);
      const bool inside = k < igemm_shape<Cfg>::K;
#pragma unroll
      for (int i = 0; i < COUNT; ++i) {
        const idx off = inside ? a_at_row(Cfg{}, group, rows[i], tp) : -1;
        copy(s + offset + i * STEP * 128, off >= 0 ? g + off : g, off >= 0);
      }
    } else {
#pragma unroll
      for (int i = 0; i < COUNT; ++i) {
        const int r = row + i * STEP;
        const idx mn = mn0 + (KMAJOR ? r : col * 8),
                  k = k0 + (KMAJOR ? col * 8 : r);
        const idx off = operand_at<IS_A>(Cfg{}, group, mn, k);
        copy(s + offset + i * STEP * 128, off >= 0 ? g + off : g, off >= 0);
      }
    }
  }

  // 16 bytes from src to shared address dst, or zeros.
  static __device__ __forceinline__ void copy(unsigned dst, const T *src,
                                              bool valid) {
    cp_async::cache_all<16>(dst, src, valid ? 16 : 0);
  }
};

// A unit of work: one output tile of one group and split.
template <class Cfg> struct wgmma_item {
  typedef typename Cfg::index idx;
  typedef igemm_shape<Cfg> S;
  static constexpr long long TILES = (long long)S::TILES_M * S::TILES_N;
  static constexpr long long COUNT = TILES * Cfg::GROUPS * Cfg::SPLIT;

  idx group, m0, n0;
  int split, kt_begin, nk;

  // Consecutive items are tiles of one (group, split), in the GEMM's
  // grouped order, so that the blocks running together share their
  // operands' rows in L2.
  static __device__ __forceinline__ wgmma_item at(long long w) {
    wgmma_item x;
    idx tm, tn;
    gemm::grouped_tile<idx>((idx)(w % TILES), S::TILES_M, S::TILES_N, (idx)8,
                            tm, tn);
    const long long z = w / TILES;
    x.group = (idx)(z / Cfg::SPLIT);
    x.split = (int)(z % Cfg::SPLIT);
    x.m0 = tm * Cfg::BM;
    x.n0 = tn * Cfg::BN;
    x.kt_begin = x.split * Cfg::KT_PER_SPLIT;
    const int kt_end = S::KT < x.kt_begin + Cfg::KT_PER_SPLIT
                           ? S::KT
                           : x.kt_begin + Cfg::KT_PER_SPLIT;
    x.nk = kt_end > x.kt_begin ? kt_end - x.kt_begin : 0;
    return x;
  }
};

// The epilogue of work item `done` from the accumulators of its BM / 64
// warpgroups (64 x BN each). Where STAGED, the results in their storage type
// go through `staged` (BM x BN of them in shared memory) and are stored in
// 16-byte runs of consecutive columns, a row's runs by consecutive threads,
// with Epi::STATS' batch-norm partials taken of the staged tile; a row's runs
// are staged in the order run ^ (row % 8), so that the pairs the lanes of a
// warp store fall into distinct banks. Otherwise each thread stores its
// fragments. `tid` numbers the BM / 64 * 128 threads that hold the tile and
// `sync` is a barrier of exactly them; `staged` may be refilled once the
// function returns.
template <class Cfg, class Epi, bool STAGED, class Params, class Item,
          class Sync>
__device__ __forceinline__ void
wgmma_epilogue(const Params &p, const Item &done,
               const float (&acc)[Cfg::BN / 2], typename Epi::run_t *staged,
               int tid, Sync sync) {
  typedef typename Cfg::index idx;
  typedef igemm_shape<Cfg> S;
  typedef typename Epi::run_t R;
  constexpr int THREADS = Cfg::BM / 64 * 128;
  constexpr int RUN = Epi::RUN > 0 ? Epi::RUN : 1;
  // Batch-norm statistics of the stored tile (tile_stats.cuh) need it
  // staged.
  static_assert(!Epi::STATS || STAGED,
                "column statistics are taken of a staged tile");
  auto staged_at = [](int lr, int lc) {
    return lr * Cfg::BN + ((lc / RUN) ^ (lr & 7)) * RUN + lc % RUN;
  };
  // Warpgroup wg holds rows [64 wg, 64 wg + 64) of the tile: warp v, lane
  // (g, q) rows 16v + g and 16v + g + 8 at columns 8j + 2q and 8j + 2q + 1
  // (registers 4j + {0, 1} and 4j + {2, 3}).
  const int wg = tid >> 7, lane = tid & 31, warp = (tid >> 5) & 3,
            g = lane >> 2, q = lane & 3;
  const int local = wg * 64 + warp * 16 + g;
  if constexpr (STAGED) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int lr = local + half * 8;
      const idx r = done.m0 + lr;
#pragma unroll
      for (int j = 0; j < Cfg::BN / 8; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int lc = j * 8 + q * 2 + e;
          const idx c = done.n0 + lc;
          staged[staged_at(lr, lc)] =
              r < S::ROWS && c < S::COLS
                  ? Epi::value(p, done.group, r, c, acc[j * 4 + half * 2 + e])
                  : R(0.0f);
        }
    }
    sync();
    constexpr int RUNS = Cfg::BN / RUN;
    for (int u = tid; u < Cfg::BM * RUNS; u += THREADS) {
      const int lr = u / RUNS, lc = u % RUNS * RUN;
      const idx r = done.m0 + lr, c = done.n0 + lc;
      if (r >= S::ROWS || c >= S::COLS)
        continue;
      const R(&v)[RUN] =
          *reinterpret_cast<const R(*)[RUN]>(staged + staged_at(lr, lc));
      if (c + RUN <= S::COLS) {
        Epi::store_run(p, done.group, r, c, v);
      } else {
        for (int e = 0; c + e < S::COLS; ++e)
          Epi::store_value(p, done.group, r, c + e, v[e]);
      }
    }
    if constexpr (Epi::STATS) {
      // Partials [row tile][channel] of the result's GROUPS * COLS
      // channels.
      const idx rows = S::ROWS - done.m0, cols = S::COLS - done.n0;
      bn::tile_column_stats<Cfg::BM, Cfg::BN, THREADS>(
          tid, staged, staged_at, rows < Cfg::BM ? (int)rows : Cfg::BM,
          cols < Cfg::BN ? (int)cols : Cfg::BN,
          Epi::stats(p) +
              (long long)(done.m0 / Cfg::BM) * Cfg::GROUPS * S::COLS +
              done.group * S::COLS + done.n0,
          sync);
    }
    // The staged tile is read before anything refills it.
    sync();
  } else {
    const idx row = done.m0 + local;
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      if (row + half * 8 >= S::ROWS)
        continue;
#pragma unroll
      for (int j = 0; j < Cfg::BN / 8; ++j)
        store_result<Cfg, Epi>(p, done.group, done.split, row + half * 8,
                               done.n0 + j * 8 + q * 2, acc[j * 4 + half * 2],
                               acc[j * 4 + half * 2 + 1]);
    }
  }
}

template <class Cfg, class Epi, class Params>
__device__ __forceinline__ void wgmma_igemm(const launch_ctx &ctx,
                                            const Params &p) {
  typedef typename Cfg::index idx;
  typedef igemm_shape<Cfg> S;
  typedef wgmma_item<Cfg> Item;
  constexpr unsigned A_BYTES = gemm::wgmma_tile_bytes(Cfg::BM),
                     B_BYTES = gemm::wgmma_tile_bytes(Cfg::BN);
  constexpr int AHEAD =
      Cfg::STAGES - 2; // tiles copied ahead of the multiplied one
  constexpr int ACC = Cfg::BN / 2;
  static_assert(Cfg::KIND == 0 || Cfg::KIND == 1,
                "wgmma multiplies bf16 or f16");
  static_assert(
      Cfg::BK == gemm::wgmma_block_k && Cfg::BM % 64 == 0,
      "wgmma tiles are 64-row warpgroup slices of 64-deep swizzle rows");
  static_assert(Cfg::STAGES >= 3,
                "the pipeline keeps one group in flight and one tile ahead");
  constexpr int THREADS = Cfg::BM / 64 * 128;
  // The free stages hold the staged tile (wgmma_epilogue): the next item's
  // first tiles go to the stages before, and its first refill waits for a
  // barrier the epilogue passes first.
  constexpr bool STAGED = wgmma_stages_results(
      Cfg::BM, Cfg::BN, Cfg::SPLIT, Epi::RUN, (int)sizeof(typename Epi::run_t));
  static_assert(Cfg::STAGES - AHEAD == 2, "two stages are free");

  extern __shared__ __align__(16) unsigned char conv_smem[];
  // Swizzle atoms start on 1024-byte boundaries (the launch adds the slack).
  const unsigned sA =
      ((unsigned)__cvta_generic_to_shared(conv_smem) + 1023u) & ~1023u;
  const unsigned sB = sA + Cfg::STAGES * A_BYTES;
  const int tid = ctx.thread.x, wg = tid >> 7;

  wgmma_operand_copy<Cfg, true> copyA(tid);
  const wgmma_operand_copy<Cfg, false> copyB(tid);
  auto load_stage = [&](const Item &x, int stage, int kt) {
    const idx k0 = (idx)kt * Cfg::BK;
    copyA(sA + stage * A_BYTES, p.a, x.group, x.m0, k0);
    copyB(sB + stage * B_BYTES, p.b, x.group, x.n0, k0);
  };
  // The first AHEAD tiles of an item; one commit group per tile (empty
  // groups past its end).
  auto prologue = [&](const Item &x) {
    copyA.begin(x.m0);
#pragma unroll
    for (int s = 0; s < AHEAD; ++s) {
      if (s < x.nk)
        load_stage(x, s, x.kt_begin + s);
      cp_async::commit();
    }
  };

  long long w = ctx.block.x;
  if (w >= Item::COUNT)
    return;
  Item cur = Item::at(w);
  prologue(cur);
  for (; w < Item::COUNT; w += ctx.grid.x) {
    float acc[ACC];
#pragma unroll
    for (int i = 0; i < ACC; ++i)
      acc[i] = 0.0f;

    for (int i = 0; i < cur.nk; ++i) {
      cp_async::wait<AHEAD - 1>();
      // cp.async wrote through the generic proxy; wgmma reads through the
      // async proxy.
      tma::fence_async();
      __syncthreads();
      const int stage = i % Cfg::STAGES;
      wgmma::fence_accumulators(acc);
      wgmma::fence();
#pragma unroll
      for (int j = 0; j < Cfg::BK / 16; ++j)
        wgmma::mma<Cfg::BN, Cfg::KIND, !Cfg::A_KMAJOR, !Cfg::B_KMAJOR>(
            acc,
            gemm::wgmma_operand(Cfg::A_KMAJOR, sA + stage * A_BYTES, wg * 64,
                                j),
            gemm::wgmma_operand(Cfg::B_KMAJOR, sB + stage * B_BYTES, 0, j));
      wgmma::commit_group();
      // Refill the stage that group i - 2 read: each warpgroup waited for it
      // before the barrier above.
      const int next = i + AHEAD;
      if (next < cur.nk)
        load_stage(cur, next % Cfg::STAGES, cur.kt_begin + next);
      cp_async::commit();
      wgmma::wait<1>();
      wgmma::fence_accumulators(acc);
    }
    wgmma::wait<0>();
    wgmma::fence_accumulators(acc);
    cp_async::wait<0>();
    // Every warpgroup is done with every stage before they are refilled.
    __syncthreads();
    const Item done = cur;
    if (w + ctx.grid.x < Item::COUNT) {
      cur = Item::at(w + ctx.grid.x);
      prologue(cur);
    }

    typedef typename Epi::run_t R;
    R *staged = reinterpret_cast<R *>(
        conv_smem + (sA - (unsigned)__cvta_generic_to_shared(conv_smem)) +
        AHEAD * A_BYTES);
    wgmma_epilogue<Cfg, Epi, STAGED>(p, done, acc, staged, tid,
                                     [] { __syncthreads(); });
  }
}

} // namespace conv
} // namespace kiln
