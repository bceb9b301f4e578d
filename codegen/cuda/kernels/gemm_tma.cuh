//===- gemm_tma.cuh - bf16/f16 GEMM on TMA and warpgroup MMA (sm_90a) -----===//
//
// The GEMM of gemm_wgmma.cuh with both operands copied by the tensor memory
// accelerator (tma.cuh) into the same 128-byte-swizzled stages
// (gemm_layout.cuh), so that no consumer thread spends an issue slot on an
// address or a copy:
//  - K-major operands ([rows][K]) in one box of 64 k by BM (BN) rows per
//    stage; M/N-major operands ([K][rows]) in boxes of 64 rows by 64 k, one
//    per 64-wide column of atoms. The copy engine zero-fills what lies past
//    the matrix (the tile overhang in M, N and K).
//  - Warp-specialised and persistent: warpgroup 0 is the producer, whose one
//    thread walks the block's work items and copies their K steps into
//    STAGES stages as they come free (a `full` and an `empty` mbarrier per
//    stage). The consumers multiply a stage once it is full, free it once
//    the product that read it has retired (one wgmma group in flight) and
//    run the epilogue while the producer already fills the stages of their
//    next item. The producer gives its registers to the consumers
//    (setmaxnreg). Two schedules of the consumers:
//     - cooperative: warpgroups 1 .. BM / 64 share every item, 64 rows x BN
//       each; the tensor cores wait while they run the epilogue;
//     - ping-pong (Cfg::PINGPONG): two consumer warpgroups take the block's
//       items in turn, each a whole BM x BN tile (BM / 64 products of 64
//       rows per K step), so that one's epilogue runs while the other's
//       products keep the tensor cores busy. A consumer skips the stages of
//       the other's items, and starts an item's products only once the
//       other has waited for every stage of the item before (two named
//       barriers hand the turn over): a stage's barrier is then never more
//       than one phase ahead of the parity its consumer waits for.
//  - Grouped and summed problems (GemmPlan.h): a tensor map per problem and
//    operand. A work item is a tile of one stacked problem (GROUPS) and K
//    split; with KSUMS, K step kt of the concatenated K reads problem
//    kt / KT's maps.
//
// Cfg: as gemm_wgmma.cuh (GEMM_BATCH == 1: a batch that shares the rhs is
// folded into the rows), A_VEC and B_VEC, and PINGPONG. Params: as
// gemm_common.cuh's and `a_map[P]`, `b_map[P]` (P = GROUPS * KSUMS), pointers
// to the kernel's tensor maps: 2-D tiled maps of each problem's operand, dims
// {contiguous, outer}, 128-byte swizzle, boxes {64, BM or BN} (K-major) or {64,
// 64} (M/N-major).
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/gemm_wgmma.cuh"
#include "kiln/tma.cuh"

namespace kiln {
namespace gemm {

// One of a kernel's tensor maps by a run-time index, without indexing the
// parameter array (which would copy it to local memory).
template <int P>
__device__ __forceinline__ const tensor_map &
map_of(const tensor_map *const (&maps)[P], int i) {
  const tensor_map *m = maps[0];
#pragma unroll
  for (int j = 1; j < P; ++j)
    if (i == j)
      m = maps[j];
  return *m;
}

// A unit of work: one output tile of one stacked problem and K split.
template <class Cfg> struct tma_work {
  typedef typename Cfg::index idx;
  typedef shape<Cfg> S;
  static constexpr long long TILES = (long long)S::TILES_M * S::TILES_N;
  static constexpr long long COUNT =
      (long long)Cfg::GROUPS * Cfg::SPLIT * TILES;

  idx m0, n0;
  int problem, split, ktBegin, nk;

  static __device__ __forceinline__ tma_work at(long long w) {
    tma_work x;
    const long long z = w / TILES;
    idx tm, tn;
    tile_of<Cfg>((idx)(w % TILES), tm, tn);
    x.problem = (int)(z / Cfg::SPLIT);
    x.split = (int)(z % Cfg::SPLIT);
    x.m0 = tm * Cfg::BM;
    x.n0 = tn * Cfg::BN;
    x.ktBegin = x.split * Cfg::KT_PER_SPLIT;
    const int ktEnd = S::KT_ALL < x.ktBegin + Cfg::KT_PER_SPLIT
                          ? S::KT_ALL
                          : x.ktBegin + Cfg::KT_PER_SPLIT;
    x.nk = ktEnd > x.ktBegin ? ktEnd - x.ktBegin : 0;
    return x;
  }
};

template <class Cfg, class Ops, class Epi, class Params>
__device__ __forceinline__ void tma_gemm(const launch_ctx &ctx,
                                         const Params &p) {
  typedef typename Cfg::index idx;
  typedef shape<Cfg> S;
  typedef tma_work<Cfg> Work;
  constexpr unsigned A_BYTES = wgmma_tile_bytes(Cfg::BM),
                     B_BYTES = wgmma_tile_bytes(Cfg::BN);
  constexpr int ACC = Cfg::BN / 2;
  // 64-row slices of a tile each consumer multiplies.
  constexpr int SLICES = Cfg::PINGPONG ? Cfg::BM / 64 : 1;
  constexpr int CONSUMERS = Cfg::PINGPONG ? 2 : Cfg::BM / 64;
  // Consumer warpgroups that read each stage (and free it).
  constexpr int READERS = Cfg::PINGPONG ? 1 : CONSUMERS;
  constexpr int PROBLEMS = Cfg::GROUPS * Cfg::KSUMS;
  typedef tma::register_split<CONSUMERS> Regs;
  static_assert(Cfg::KIND == 0 || Cfg::KIND == 1,
                "wgmma multiplies bf16 or f16");
  static_assert(Cfg::BK == wgmma_block_k && Cfg::BM % 64 == 0 &&
                    Cfg::BN % 64 == 0 && Cfg::BM <= 256 && Cfg::BN <= 256,
                "wgmma tiles are 64-row warpgroup slices of 64-column swizzle "
                "rows; a box "
                "holds at most 256 rows");
  static_assert(Cfg::A_VEC && Cfg::B_VEC,
                "tensor maps take strides of whole 16 bytes");
  static_assert(Cfg::GEMM_BATCH == 1, "a batch of GEMMs takes gemm_wgmma.cuh");
  static_assert(Cfg::GROUPS == 1 || Cfg::KSUMS == 1,
                "problems are stacked or summed");
  static_assert(Cfg::STAGES >= 2, "the producer copies ahead of the product");

  extern __shared__ __align__(16) unsigned char gemm_smem[];
  // Swizzle atoms start on 1024-byte boundaries (the launch adds the slack);
  // full[s] at bars + 8 s, empty[s] at bars + 8 (STAGES + s).
  const unsigned sA =
      ((unsigned)__cvta_generic_to_shared(gemm_smem) + 1023u) & ~1023u;
  const unsigned sB = sA + Cfg::STAGES * A_BYTES;
  const unsigned bars = sB + Cfg::STAGES * B_BYTES;
  auto full = [&](int s) { return bars + 8u * s; };
  auto empty = [&](int s) { return bars + 8u * (Cfg::STAGES + s); };

  const int tid = ctx.thread.x, wg = tid >> 7;
  tma::init_stage_barriers(tid, Cfg::STAGES, full, empty, READERS);
  __syncthreads();

  if (wg == 0) {
    Regs::producer();
    if (tid != 0)
      return;
#pragma unroll
    for (int i = 0; i < PROBLEMS; ++i) {
      tma::prefetch(*p.a_map[i]);
      tma::prefetch(*p.b_map[i]);
    }
    int stage = 0;
    unsigned phase = 0;
    for (long long w = ctx.block.x; w < Work::COUNT; w += ctx.grid.x) {
      const Work x = Work::at(w);
      for (int kt = x.ktBegin; kt < x.ktBegin + x.nk; ++kt) {
        // K step kt of the concatenated K of summed problems reads problem
        // kt / KT; stacked problems read their own.
        const int problem = Cfg::KSUMS > 1 ? kt / S::KT : x.problem;
        const int k0 = (Cfg::KSUMS > 1 ? kt - problem * S::KT : kt) * Cfg::BK;
        const tensor_map &a = map_of(p.a_map, problem),
                         &b = map_of(p.b_map, problem);
        tma::wait(empty(stage), phase ^ 1u);
        tma::arrive_expect_bytes(full(stage), A_BYTES + B_BYTES);
        const unsigned tA = sA + stage * A_BYTES, tB = sB + stage * B_BYTES;
        if constexpr (Cfg::A_KMAJOR) {
          tma::copy_2d(tA, a, full(stage), k0, (int)x.m0);
        } else {
#pragma unroll
          for (int c = 0; c < Cfg::BM / 64; ++c)
            tma::copy_2d(tA + c * wgmma_mn_column, a, full(stage),
                         (int)x.m0 + 64 * c, k0);
        }
        if constexpr (Cfg::B_KMAJOR) {
          tma::copy_2d(tB, b, full(stage), k0, (int)x.n0);
        } else {
#pragma unroll
          for (int c = 0; c < Cfg::BN / 64; ++c)
            tma::copy_2d(tB + c * wgmma_mn_column, b, full(stage),
                         (int)x.n0 + 64 * c, k0);
        }
        if (++stage == Cfg::STAGES) {
          stage = 0;
          phase ^= 1u;
        }
      }
    }
    return;
  }

  Regs::consumer();
  const int cwg = wg - 1;
  int stage = 0;
  unsigned phase = 0;
  auto advance = [&](int steps) {
    stage += steps;
    phase ^= (unsigned)(stage / Cfg::STAGES) & 1u;
    stage %= Cfg::STAGES;
  };
  // Cooperative: every consumer takes every item. Ping-pong: consumer c
  // takes the block's items c, c + 2, ...; the other's stages in between
  // are skipped.
  const long long first =
      ctx.block.x + (Cfg::PINGPONG ? (long long)cwg * ctx.grid.x : 0);
  const long long step = (long long)ctx.grid.x * (Cfg::PINGPONG ? 2 : 1);
  // Ping-pong turns: consumer c waits at barrier 1 + c for the other to
  // have issued its products (bar.sync of 128 threads meeting the other's
  // bar.arrive of 128).
  auto wait_turn = [&] { tma::named_barrier(1 + cwg, 256); };
  auto pass_turn = [&] {
    asm volatile("bar.arrive %0, 256;\n" ::"r"(2 - cwg) : "memory");
  };
  if constexpr (Cfg::PINGPONG)
    if (cwg == 1 && ctx.block.x < Work::COUNT)
      advance(Work::at(ctx.block.x).nk);
  for (long long w = first; w < Work::COUNT; w += step) {
    const Work x = Work::at(w);
    if constexpr (Cfg::PINGPONG)
      if (w >= (long long)ctx.block.x + ctx.grid.x)
        wait_turn(); // every item but the block's first follows the other's
    float acc[SLICES][ACC];
#pragma unroll
    for (int t = 0; t < SLICES; ++t)
#pragma unroll
      for (int i = 0; i < ACC; ++i)
        acc[t][i] = 0.0f;
    int held = -1; // the stage the product in flight reads
    for (int i = 0; i < x.nk; ++i) {
      tma::wait(full(stage), phase);
#pragma unroll
      for (int t = 0; t < SLICES; ++t)
        fence_accumulators(acc[t]);
      asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
      for (int j = 0; j < Cfg::BK / 16; ++j)
#pragma unroll
        for (int t = 0; t < SLICES; ++t)
          wgmma<Cfg::BN, Cfg::KIND, !Cfg::A_KMAJOR, !Cfg::B_KMAJOR>(
              acc[t],
              wgmma_operand(Cfg::A_KMAJOR, sA + stage * A_BYTES,
                            (Cfg::PINGPONG ? t : cwg) * 64, j),
              wgmma_operand(Cfg::B_KMAJOR, sB + stage * B_BYTES, 0, j));
      asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
      // The previous product has retired: its stage is free.
      asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
#pragma unroll
      for (int t = 0; t < SLICES; ++t)
        fence_accumulators(acc[t]);
      if (held >= 0 && (tid & 127) == 0)
        tma::arrive(empty(held));
      held = stage;
      advance(1);
    }
    // The other consumer's next item comes between this one and ours: its
    // turn, as soon as this item's stages have all been waited for (its
    // products may join ours on the tensor cores).
    if constexpr (Cfg::PINGPONG)
      if (w + ctx.grid.x < Work::COUNT) {
        pass_turn();
        advance(Work::at(w + ctx.grid.x).nk);
      }
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
#pragma unroll
    for (int t = 0; t < SLICES; ++t)
      fence_accumulators(acc[t]);
    if (held >= 0 && (tid & 127) == 0)
      tma::arrive(empty(held));
      // Stacked problems' outputs follow each other (r = problem * ROWS + row).
#pragma unroll
    for (int t = 0; t < SLICES; ++t)
      wgmma_epilogue<Cfg, Epi>(p, x.split, (idx)x.problem, x.m0, x.n0,
                               Cfg::PINGPONG ? t : cwg, tid & 127, acc[t]);
  }
}

} // namespace gemm
} // namespace kiln
