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
//  - A consumer that takes an item asks the L2 for the item's rows of the
//    tensors of the product's shape its epilogue reads (Epi::kPrefetch,
//    Epi::prefetch_row), so that they arrive during the K loop.
//  - The epilogue (STAGED_EPILOGUE): each consumer warp writes its 16 rows
//    of the product, rounded to the element type (which the epilogue rounds
//    it to first anyway), into a shared staging area of its own, 128
//    columns at a time, and reads them back as 16-byte runs of 8
//    consecutive columns, a row's runs by consecutive lanes: the fused
//    epilogue then reads its operands and stores its results in whole
//    sectors (Epi::store_run_in), where the accumulator fragments would
//    touch eight rows with 4-byte pieces per instruction. A warp needs no
//    other warp's staging, so the ping-pong consumers never wait for each
//    other's epilogue.
//  - TMA stores (TMA_STORE, with the staged epilogue): the epilogue writes
//    its first result back over the run it read (Epi::store_run_staged;
//    any further results are stored as runs), and one lane of the warp
//    hands the 16 staged rows to the copy engine, which writes them while
//    the warp goes on to its next chunk or item.
//
// Roles, as CUTLASS names them: the tile scheduler (gemm_tma_schedule.cuh:
// the work items and which role takes which), the producer's loads
// (tma_load), the consumers' main loop (tma_mma, tma_mma_tail), the
// epilogue (gemm_tma_epilogue.cuh) and the shared memory they meet in
// (gemm_tma_roles.cuh and tma_shared.cuh, over gemm_layout.cuh's
// wgmma_tma_smem, by which the planner sizes the launch); tma_gemm sets up the
// barriers and runs each warpgroup's role, and pipeline_state (pipeline.cuh)
// tracks each side's stage and phase.
//
// Cfg: as gemm_wgmma.cuh (GEMM_BATCH == 1: a batch that shares the rhs is
// folded into the rows), A_VEC and B_VEC, PINGPONG, STAGED_EPILOGUE
// (SPLIT == 1 and N a multiple of 8) and TMA_STORE (GROUPS == 1). Params: as
// gemm_common.cuh's and `a_map[P]`, `b_map[P]` (P = GROUPS * KSUMS), pointers
// to the kernel's tensor maps: 2-D tiled maps of each problem's operand, dims
// {contiguous, outer}, 128-byte swizzle, boxes {64, BM or BN} (K-major) or {64,
// 64} (M/N-major); with TMA_STORE also `o_map`, the first result's map,
// dims {N, OUT_ROWS}, boxes {64, 16}, 128-byte swizzle.
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/cluster.cuh"
#include "kiln/gemm_tma_epilogue.cuh"
#include "kiln/gemm_tma_roles.cuh"
#include "kiln/gemm_tma_schedule.cuh"
#include "kiln/gemm_wgmma.cuh"
#include "kiln/pipeline.cuh"
#include "kiln/tma.cuh"
#include "kiln/tma_shared.cuh"

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

// The producer (one thread of warpgroup 0): the K steps of the cluster's
// items into the stages as they come free. Clusters of CM blocks, one tile
// row each, share the rhs tile: each block copies 1 / CM of it into every
// block's stage (TMA multicast), so a stage is free only once the
// consumers of every block have read it.
template <class Cfg, class Params>
__device__ __forceinline__ void tma_load(const Params &p,
                                         const tma_scheduler<Cfg> &tiles,
                                         const tma_memory<Cfg> &sm, int rank) {
  typedef shape<Cfg> S;
  typedef tma_work<Cfg> Work;
  constexpr int CM = Cfg::CLUSTER_M;
  constexpr unsigned A_BYTES = wgmma_tile_bytes(Cfg::BM),
                     B_BYTES = wgmma_tile_bytes(Cfg::BN);
#pragma unroll
  for (int i = 0; i < tma_roles<Cfg>::PROBLEMS; ++i) {
    tma::prefetch(*p.a_map[i]);
    tma::prefetch(*p.b_map[i]);
  }
  pipeline_state<Cfg::STAGES> write;
  constexpr unsigned short EVERY_BLOCK = (1u << CM) - 1;
  for (long long w = tiles.producer_first(); w < Work::COUNT;
       w += tiles.producer_step()) {
    const Work x = Work::at(w, rank);
    for (int kt = x.ktBegin; kt < x.ktBegin + x.nk; ++kt) {
      // K step kt of the concatenated K of summed problems reads problem
      // kt / KT; stacked problems read their own.
      const int problem = Cfg::KSUMS > 1 ? kt / S::KT : x.problem;
      const int k0 = (Cfg::KSUMS > 1 ? kt - problem * S::KT : kt) * Cfg::BK;
      const tensor_map &a = map_of(p.a_map, problem),
                       &b = map_of(p.b_map, problem);
      const int stage = write.index;
      tma::wait(sm.empty(stage), write.phase ^ 1u);
      const unsigned full = sm.full(stage);
      tma::arrive_expect_bytes(full, (x.outside ? 0u : A_BYTES) + B_BYTES);
      const unsigned tA = sm.a(stage), tB = sm.b(stage);
      if (!x.outside) {
        if constexpr (Cfg::A_KMAJOR) {
          tma::copy_2d(tA, a, full, k0, (int)x.m0);
        } else {
#pragma unroll
          for (int c = 0; c < Cfg::BM / 64; ++c)
            tma::copy_2d(tA + c * wgmma_mn_column, a, full, (int)x.m0 + 64 * c,
                         k0);
        }
      }
      if constexpr (CM > 1) {
        // This block's rows (K-major) or columns of 64 of the rhs tile,
        // into every block of the cluster.
        if constexpr (Cfg::B_KMAJOR) {
          constexpr int SHARE = Cfg::BN / CM;
          tma::copy_2d_multicast(tB + rank * SHARE * 128, b, full, k0,
                                 (int)x.n0 + rank * SHARE, EVERY_BLOCK);
        } else {
          constexpr int SHARE = Cfg::BN / 64 / CM;
#pragma unroll
          for (int i = 0; i < SHARE; ++i) {
            const int c = rank * SHARE + i;
            tma::copy_2d_multicast(tB + c * wgmma_mn_column, b, full,
                                   (int)x.n0 + 64 * c, k0, EVERY_BLOCK);
          }
        }
      } else if constexpr (Cfg::B_KMAJOR) {
        tma::copy_2d(tB, b, full, k0, (int)x.n0);
      } else {
#pragma unroll
        for (int c = 0; c < Cfg::BN / 64; ++c)
          tma::copy_2d(tB + c * wgmma_mn_column, b, full, (int)x.n0 + 64 * c,
                       k0);
      }
      write.advance();
    }
  }
}

// A stage read by a consumer warpgroup's products is free for this block's
// producer (and, in a cluster, every block's, which copy into it): one
// arrival per warpgroup, by its first thread.
template <class Cfg>
__device__ __forceinline__ void tma_release(const tma_memory<Cfg> &sm,
                                            int stage, int tid) {
  if ((tid & 127) != 0)
    return;
  if constexpr (Cfg::CLUSTER_M > 1) {
#pragma unroll
    for (int r = 0; r < Cfg::CLUSTER_M; ++r)
      tma::arrive_in_block(sm.empty(stage), r);
  } else {
    tma::arrive(sm.empty(stage));
  }
}

// The consumer's main loop over an item's `nk` K steps: each stage's
// products once its copies have landed, one commit group in flight, a
// stage freed once the group that read it has retired. Returns the stage
// the last group reads (-1 for none), which tma_mma_tail frees.
template <class Cfg>
__device__ __forceinline__ int
tma_mma(float (&acc)[tma_roles<Cfg>::SLICES][tma_roles<Cfg>::ACC],
        pipeline_state<Cfg::STAGES> &read, int nk, const tma_memory<Cfg> &sm,
        int cwg, int tid) {
  constexpr int SLICES = tma_roles<Cfg>::SLICES;
  int held = -1; // the stage the product in flight reads
  for (int i = 0; i < nk; ++i) {
    const int stage = read.index;
    tma::wait(sm.full(stage), read.phase);
#pragma unroll
    for (int t = 0; t < SLICES; ++t)
      wgmma::fence_accumulators(acc[t]);
    wgmma::fence();
#pragma unroll
    for (int j = 0; j < Cfg::BK / 16; ++j)
#pragma unroll
      for (int t = 0; t < SLICES; ++t)
        wgmma::mma<Cfg::BN, Cfg::KIND, !Cfg::A_KMAJOR, !Cfg::B_KMAJOR>(
            acc[t],
            wgmma_operand(Cfg::A_KMAJOR, sm.a(stage),
                          (Cfg::PINGPONG ? t : cwg) * 64, j),
            wgmma_operand(Cfg::B_KMAJOR, sm.b(stage), 0, j));
    wgmma::commit_group();
    // The previous product has retired: its stage is free.
    wgmma::wait<1>();
#pragma unroll
    for (int t = 0; t < SLICES; ++t)
      wgmma::fence_accumulators(acc[t]);
    if (held >= 0)
      tma_release(sm, held, tid);
    held = stage;
    // By skip's arithmetic, as over the other consumer's items: the code
    // this kernel's schedule was measured with.
    read.skip(1);
  }
  return held;
}

// The end of an item's products: the last group retires and frees its
// stage.
template <class Cfg>
__device__ __forceinline__ void
tma_mma_tail(float (&acc)[tma_roles<Cfg>::SLICES][tma_roles<Cfg>::ACC],
             int held, const tma_memory<Cfg> &sm, int tid) {
  wgmma::wait<0>();
#pragma unroll
  for (int t = 0; t < tma_roles<Cfg>::SLICES; ++t)
    wgmma::fence_accumulators(acc[t]);
  if (held >= 0)
    tma_release(sm, held, tid);
}

// Consumer warpgroup cwg (warpgroup cwg + 1): its items' products and
// epilogues.
template <class Cfg, class Epi, class Params>
__device__ __forceinline__ void
tma_consume(const Params &p, const tma_scheduler<Cfg> &tiles,
            const tma_memory<Cfg> &sm, int rank, int cwg, int tid) {
  typedef typename Cfg::index idx;
  typedef tma_work<Cfg> Work;
  typedef tma_roles<Cfg> R;
  const long long first = tiles.consumer_first(cwg),
                  step = tiles.consumer_step();
  pipeline_state<Cfg::STAGES> read;
  // Ping-pong turns (tma::wait_turn): a consumer issues an item's products
  // once the other has issued its own.
  if constexpr (Cfg::PINGPONG)
    if (cwg == 1 && tiles.cluster < Work::COUNT)
      read.skip(Work::at(tiles.cluster).nk);
  for (long long w = first; w < Work::COUNT; w += step) {
    const Work x = Work::at(w, rank);
    // Every item but the block's first follows the other's.
    if constexpr (Cfg::PINGPONG)
      if (w >= tiles.second_item())
        tma::wait_turn(cwg);
    if constexpr (Epi::kPrefetch)
      if (!x.outside)
        prefetch_epilogue_inputs<Cfg, Epi>(
            p, (idx)x.problem, x.m0 + (Cfg::PINGPONG ? 0 : cwg * 64),
            Cfg::PINGPONG ? Cfg::BM : 64, x.n0, tid & 127);
    float acc[R::SLICES][R::ACC];
#pragma unroll
    for (int t = 0; t < R::SLICES; ++t)
#pragma unroll
      for (int i = 0; i < R::ACC; ++i)
        acc[t][i] = 0.0f;
    const int held = tma_mma<Cfg>(acc, read, x.nk, sm, cwg, tid);
    // The other consumer's next item comes between this one and ours: its
    // turn, as soon as this item's stages have all been waited for (its
    // products may join ours on the tensor cores).
    if constexpr (Cfg::PINGPONG)
      if (tiles.other_follows(w)) {
        tma::pass_turn(cwg);
        read.skip(tiles.other_after(w).nk);
      }
    tma_mma_tail<Cfg>(acc, held, sm, tid);
    if (x.outside)
      continue;
    tma_epilogue<Cfg, Epi>(p, x, acc, sm, cwg, tid);
  }
  // A block's shared memory lives until its stores have read it, and its
  // results are written before the grid counts as done.
  if constexpr (Cfg::TMA_STORE)
    if ((tid & 31) == 0)
      tma::bulk_wait_done<0>();
}

template <class Cfg, class Ops, class Epi, class Params>
__device__ __forceinline__ void tma_gemm(const launch_ctx &ctx,
                                         const Params &p) {
  typedef tma_roles<Cfg> R;
  typedef tma::register_split<R::CONSUMERS> Regs;
  static_assert(Cfg::KIND == 0 || Cfg::KIND == 1,
                "wgmma multiplies bf16 or f16");
  static_assert(Cfg::BK == wgmma_block_k && Cfg::BM % 64 == 0 &&
                    Cfg::BN % 64 == 0 && Cfg::BM <= 256 && Cfg::BN <= 256,
                "wgmma tiles are 64-row warpgroup slices of 64-column swizzle "
                "rows; a box holds at most 256 rows");
  static_assert(Cfg::A_VEC && Cfg::B_VEC,
                "tensor maps take strides of whole 16 bytes");
  static_assert(Cfg::GEMM_BATCH == 1, "a batch of GEMMs takes gemm_wgmma.cuh");
  static_assert(Cfg::GROUPS == 1 || Cfg::KSUMS == 1,
                "problems are stacked or summed");
  static_assert(Cfg::STAGES >= 2, "the producer copies ahead of the product");
  constexpr int CM = Cfg::CLUSTER_M;
  static_assert(CM == 1 || CM == 2, "clusters of one or two blocks");
  static_assert(CM == 1 || (Cfg::B_KMAJOR ? Cfg::BN / CM % 8 == 0
                                          : Cfg::BN / 64 % CM == 0),
                "a block's share of the rhs tile is whole swizzle atoms");

  extern __shared__ __align__(16) unsigned char gemm_smem[];
  // Swizzle atoms start on 1024-byte boundaries (the launch adds the slack).
  const tma_memory<Cfg> sm(
      ((unsigned)__cvta_generic_to_shared(gemm_smem) + 1023u) & ~1023u);
  const int rank = CM > 1 ? (int)cluster::rank() : 0;
  const tma_scheduler<Cfg> tiles(ctx);
  const int tid = ctx.thread.x, wg = tid >> 7;
  tma::init_stage_barriers(
      tid, Cfg::STAGES, [&](int s) { return sm.full(s); },
      [&](int s) { return sm.empty(s); }, R::READERS * CM);
  // A peer's copies and arrivals reach this block's barriers only once they
  // are initialised.
  if constexpr (CM > 1)
    cluster::sync();
  else
    __syncthreads();

  if (wg == 0) {
    Regs::producer();
    if (tid == 0)
      tma_load<Cfg>(p, tiles, sm, rank);
    return;
  }
  Regs::consumer();
  tma_consume<Cfg, Epi>(p, tiles, sm, rank, wg - 1, tid);
  // No block leaves while its peers may still arrive on its barriers.
  if constexpr (CM > 1)
    cluster::sync();
}

} // namespace gemm
} // namespace kiln
