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
#include "kiln/gemm_wgmma.cuh"
#include "kiln/memory.cuh"
#include "kiln/pipeline.cuh"
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

// A unit of work: one output tile of one stacked problem and K split per
// block of a cluster, CLUSTER_M tiles one above the other (the cluster's
// blocks share the rhs tile). `rank`: the block's rank in its cluster.
template <class Cfg> struct tma_work {
  typedef typename Cfg::index idx;
  typedef shape<Cfg> S;
  static constexpr int CM = Cfg::CLUSTER_M;
  // Rows of tiles of the clusters, and their group in the tile order (the
  // group_m tile rows of tile_of).
  static constexpr idx TILES_MC = (S::TILES_M + CM - 1) / CM;
  static constexpr idx GROUP_MC = (Cfg::GROUP_M + CM - 1) / CM;
  static constexpr long long TILES = (long long)TILES_MC * S::TILES_N;
  static constexpr long long COUNT =
      (long long)Cfg::GROUPS * Cfg::SPLIT * TILES;

  idx m0, n0;
  int problem, split, ktBegin, nk;
  // The block's tile lies past the rows (a cluster's last tile row when
  // TILES_M is not a multiple of CLUSTER_M): its lhs is not copied and its
  // epilogue does not run.
  bool outside;

  static __device__ __forceinline__ tma_work at(long long w, int rank = 0) {
    tma_work x;
    const long long z = w / TILES;
    idx tm, tn;
    grouped_tile<idx>((idx)(w % TILES), TILES_MC, S::TILES_N, GROUP_MC, tm,
                      tn);
    x.problem = (int)(z / Cfg::SPLIT);
    x.split = (int)(z % Cfg::SPLIT);
    x.m0 = (tm * CM + rank) * Cfg::BM;
    x.n0 = tn * Cfg::BN;
    x.outside = CM > 1 && x.m0 >= Cfg::ROWS;
    x.ktBegin = x.split * Cfg::KT_PER_SPLIT;
    const int ktEnd = S::KT_ALL < x.ktBegin + Cfg::KT_PER_SPLIT
                          ? S::KT_ALL
                          : x.ktBegin + Cfg::KT_PER_SPLIT;
    x.nk = ktEnd > x.ktBegin ? ktEnd - x.ktBegin : 0;
    return x;
  }
};

// The staged epilogue of one warp: its 16 rows (row0 .. row0 + 15 of
// problem `problem`, columns n0 ..) of a warpgroup's 64-row accumulators,
// through `staging` (wgmma_staged_warp_bytes(BN) of shared memory, 1024-byte
// aligned), CH columns at a time, laid out by wgmma_staged_offset. With
// Cfg::TMA_STORE the epilogue leaves its first result, rounded to the element
// type, in place of the product's run, and lane 0 stores the warp's 16 rows
// by TMA (Params::o_map, {64, 16} boxes): no lane waits for its global
// stores, and the copy engine drops the tile's overhang.
template <class Cfg, class Epi, class Params>
__device__ __forceinline__ void
staged_epilogue(const Params &p, typename Cfg::index problem,
                typename Cfg::index row0, typename Cfg::index n0, int lane,
                const float (&acc)[Cfg::BN / 2], unsigned staging) {
  typedef typename Cfg::index idx;
  typedef typename Cfg::element T;
  constexpr int RUN = wgmma_staged_run, CH = wgmma_staged_columns(Cfg::BN);
  constexpr int RUNS = CH / RUN, ROWS_PER_PASS = 32 / RUNS;
  static_assert(RUNS >= 8 && RUNS <= 32 && Cfg::BN % CH == 0,
                "a staged row holds 8 to 32 runs");
  static_assert(Cfg::SPLIT == 1 && Cfg::N % RUN == 0,
                "the staged epilogue stores whole runs of the output");
  static_assert(!Cfg::TMA_STORE || Cfg::GROUPS == 1,
                "a TMA store writes the output of one problem");
  constexpr bool EVEN_TILES = Cfg::ROWS % Cfg::BM == 0 && Cfg::N % Cfg::BN == 0;
  const int g = lane >> 2, q = lane & 3;
  const idx r0 = problem * Cfg::ROWS;
#pragma unroll
  for (int ch = 0; ch < Cfg::BN / CH; ++ch) {
    // The previous chunk's (or tile's) store has read the staging.
    if constexpr (Cfg::TMA_STORE) {
      if (lane == 0)
        tma::bulk_wait_read<0>();
      __syncwarp();
    }
    // Fragments: rows g and g + 8, columns 8j + 2q and 8j + 2q + 1.
#pragma unroll
    for (int j = 0; j < RUNS; ++j)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int row = g + half * 8, a = (ch * RUNS + j) * 4 + half * 2;
        const unsigned at = staging + wgmma_staged_offset(row, j) + q * 4;
        mem::store_shared(at, pack<T>(acc[a], acc[a + 1]));
      }
    __syncwarp();
    // One run at a time: unrolled, the runs' epilogues would be interleaved
    // and hold more registers than the accumulators leave.
#pragma unroll 1
    for (int pass = 0; pass < 16 / ROWS_PER_PASS; ++pass) {
      const int row = pass * ROWS_PER_PASS + lane / RUNS, run = lane % RUNS;
      const idx r = row0 + row, c = n0 + ch * CH + run * RUN;
      const unsigned slot = staging + wgmma_staged_offset(row, run);
      unsigned w[4];
      mem::load_shared(slot, w);
      float v[RUN];
#pragma unroll
      for (int e = 0; e < 4; ++e)
        unpack<T>(w[e], v[2 * e], v[2 * e + 1]);
      // N is a multiple of RUN: a run starts inside the output or past it.
      if (EVEN_TILES || (r < Cfg::ROWS && c < Cfg::N)) {
        if constexpr (Cfg::TMA_STORE)
          Epi::store_run_staged(p, r0 + r, c, v, slot);
        else
          Epi::store_run_in(p, r0 + r, c, v);
      }
    }
    if constexpr (Cfg::TMA_STORE) {
      // The runs written back reach the copy engine's reads.
      tma::fence_async();
      __syncwarp();
      if (lane == 0 && (EVEN_TILES || row0 < Cfg::ROWS)) {
#pragma unroll
        for (int box = 0; box < CH / 64; ++box) {
          const idx c = n0 + ch * CH + box * 64;
          if (EVEN_TILES || c < Cfg::N)
            tma::store_2d(*p.o_map, staging + box * wgmma_staged_box_bytes,
                          (int)c, (int)row0);
        }
        tma::bulk_commit();
      }
    } else {
      // The next chunk overwrites what the lanes have just read.
      __syncwarp();
    }
  }
}

// The tile's rows of the tensors of the product's shape that the epilogue
// reads (Epi::prefetch_row), asked of the L2 when the consumer takes the
// item, a row per thread: by the epilogue, a K loop later, their loads hit
// the L2 instead of waiting for memory (which in ping-pong would outlast
// the other consumer's products).
template <class Cfg, class Epi, class Params>
__device__ __forceinline__ void
prefetch_epilogue_inputs(const Params &p, typename Cfg::index problem,
                         typename Cfg::index row0, int rows,
                         typename Cfg::index n0, int thread) {
  typedef typename Cfg::index idx;
  const idx columns = Cfg::N - n0 < Cfg::BN ? Cfg::N - n0 : (idx)Cfg::BN;
  for (int i = thread; i < rows; i += 128) {
    const idx r = row0 + i;
    if (r < Cfg::ROWS)
      Epi::prefetch_row(p, problem * Cfg::ROWS + r, n0, columns);
  }
}

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
  // the consumer warps' staging follows the stages; full[s] at bars + 8 s,
  // empty[s] at bars + 8 (STAGES + s).
  constexpr unsigned STAGING =
      Cfg::STAGED_EPILOGUE ? wgmma_staged_warp_bytes(Cfg::BN) : 0u;
  const unsigned sA =
      ((unsigned)__cvta_generic_to_shared(gemm_smem) + 1023u) & ~1023u;
  const unsigned sB = sA + Cfg::STAGES * A_BYTES;
  const unsigned sStaging = sB + Cfg::STAGES * B_BYTES;
  const unsigned bars = sStaging + CONSUMERS * 4 * STAGING;
  auto full = [&](int s) { return bars + 8u * s; };
  auto empty = [&](int s) { return bars + 8u * (Cfg::STAGES + s); };

  // Clusters of CM blocks, one tile row each, share the rhs tile: each
  // block copies 1 / CM of it into every block's stage (TMA multicast), so
  // a stage is free only once the consumers of every block have read it.
  constexpr int CM = Cfg::CLUSTER_M;
  static_assert(CM == 1 || CM == 2, "clusters of one or two blocks");
  static_assert(CM == 1 || (Cfg::B_KMAJOR ? Cfg::BN / CM % 8 == 0
                                          : Cfg::BN / 64 % CM == 0),
                "a block's share of the rhs tile is whole swizzle atoms");
  const int rank = CM > 1 ? (int)cluster::rank() : 0;
  const long long cluster = ctx.block.x / CM, clusters = ctx.grid.x / CM;
  const int tid = ctx.thread.x, wg = tid >> 7;
  tma::init_stage_barriers(tid, Cfg::STAGES, full, empty, READERS * CM);
  // A peer's copies and arrivals reach this block's barriers only once they
  // are initialised.
  if constexpr (CM > 1)
    cluster::sync();
  else
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
    pipeline_state<Cfg::STAGES> write;
    constexpr unsigned short EVERY_BLOCK = (1u << CM) - 1;
    for (long long w = cluster; w < Work::COUNT; w += clusters) {
      const Work x = Work::at(w, rank);
      for (int kt = x.ktBegin; kt < x.ktBegin + x.nk; ++kt) {
        // K step kt of the concatenated K of summed problems reads problem
        // kt / KT; stacked problems read their own.
        const int problem = Cfg::KSUMS > 1 ? kt / S::KT : x.problem;
        const int k0 = (Cfg::KSUMS > 1 ? kt - problem * S::KT : kt) * Cfg::BK;
        const tensor_map &a = map_of(p.a_map, problem),
                         &b = map_of(p.b_map, problem);
        const int stage = write.index;
        tma::wait(empty(stage), write.phase ^ 1u);
        tma::arrive_expect_bytes(full(stage),
                                 (x.outside ? 0u : A_BYTES) + B_BYTES);
        const unsigned tA = sA + stage * A_BYTES, tB = sB + stage * B_BYTES;
        if (!x.outside) {
          if constexpr (Cfg::A_KMAJOR) {
            tma::copy_2d(tA, a, full(stage), k0, (int)x.m0);
          } else {
#pragma unroll
            for (int c = 0; c < Cfg::BM / 64; ++c)
              tma::copy_2d(tA + c * wgmma_mn_column, a, full(stage),
                           (int)x.m0 + 64 * c, k0);
          }
        }
        if constexpr (CM > 1) {
          // This block's rows (K-major) or columns of 64 of the rhs tile,
          // into every block of the cluster.
          if constexpr (Cfg::B_KMAJOR) {
            constexpr int SHARE = Cfg::BN / CM;
            tma::copy_2d_multicast(tB + rank * SHARE * 128, b, full(stage), k0,
                                   (int)x.n0 + rank * SHARE, EVERY_BLOCK);
          } else {
            constexpr int SHARE = Cfg::BN / 64 / CM;
#pragma unroll
            for (int i = 0; i < SHARE; ++i) {
              const int c = rank * SHARE + i;
              tma::copy_2d_multicast(tB + c * wgmma_mn_column, b, full(stage),
                                     (int)x.n0 + 64 * c, k0, EVERY_BLOCK);
            }
          }
        } else if constexpr (Cfg::B_KMAJOR) {
          tma::copy_2d(tB, b, full(stage), k0, (int)x.n0);
        } else {
#pragma unroll
          for (int c = 0; c < Cfg::BN / 64; ++c)
            tma::copy_2d(tB + c * wgmma_mn_column, b, full(stage),
                         (int)x.n0 + 64 * c, k0);
        }
        write.advance();
      }
    }
    return;
  }

  Regs::consumer();
  const int cwg = wg - 1;
  pipeline_state<Cfg::STAGES> read;
  // A stage read by this warpgroup's product is free for this block's
  // producer (and, in a cluster, every block's, which copy into it).
  auto release = [&](int s) {
    if ((tid & 127) != 0)
      return;
    if constexpr (CM > 1) {
#pragma unroll
      for (int r = 0; r < CM; ++r)
        tma::arrive_in_block(empty(s), r);
    } else {
      tma::arrive(empty(s));
    }
  };
  // Cooperative: every consumer takes every item. Ping-pong: consumer c
  // takes the block's items c, c + 2, ...; the other's stages in between
  // are skipped.
  const long long first =
      cluster + (Cfg::PINGPONG ? (long long)cwg * clusters : 0);
  const long long step = clusters * (Cfg::PINGPONG ? 2 : 1);
  // Ping-pong turns (tma::wait_turn): a consumer issues an item's products
  // once the other has issued its own.
  if constexpr (Cfg::PINGPONG)
    if (cwg == 1 && cluster < Work::COUNT)
      read.skip(Work::at(cluster).nk);
  for (long long w = first; w < Work::COUNT; w += step) {
    const Work x = Work::at(w, rank);
    // Every item but the block's first follows the other's.
    if constexpr (Cfg::PINGPONG)
      if (w >= cluster + clusters)
        tma::wait_turn(cwg);
    if constexpr (Epi::kPrefetch)
      if (!x.outside)
        prefetch_epilogue_inputs<Cfg, Epi>(
            p, (idx)x.problem, x.m0 + (Cfg::PINGPONG ? 0 : cwg * 64),
            Cfg::PINGPONG ? Cfg::BM : 64, x.n0, tid & 127);
    float acc[SLICES][ACC];
#pragma unroll
    for (int t = 0; t < SLICES; ++t)
#pragma unroll
      for (int i = 0; i < ACC; ++i)
        acc[t][i] = 0.0f;
    int held = -1; // the stage the product in flight reads
    for (int i = 0; i < x.nk; ++i) {
      const int stage = read.index;
      tma::wait(full(stage), read.phase);
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
              wgmma_operand(Cfg::A_KMAJOR, sA + stage * A_BYTES,
                            (Cfg::PINGPONG ? t : cwg) * 64, j),
              wgmma_operand(Cfg::B_KMAJOR, sB + stage * B_BYTES, 0, j));
      wgmma::commit_group();
      // The previous product has retired: its stage is free.
      wgmma::wait<1>();
#pragma unroll
      for (int t = 0; t < SLICES; ++t)
        wgmma::fence_accumulators(acc[t]);
      if (held >= 0)
        release(held);
      held = stage;
      // By skip's arithmetic, as over the other consumer's items: the
      // code this kernel's schedule was measured with.
      read.skip(1);
    }
    // The other consumer's next item comes between this one and ours: its
    // turn, as soon as this item's stages have all been waited for (its
    // products may join ours on the tensor cores).
    if constexpr (Cfg::PINGPONG)
      if (w + clusters < Work::COUNT) {
        tma::pass_turn(cwg);
        read.skip(Work::at(w + clusters).nk);
      }
    wgmma::wait<0>();
#pragma unroll
    for (int t = 0; t < SLICES; ++t)
      wgmma::fence_accumulators(acc[t]);
    if (held >= 0)
      release(held);
    if (x.outside)
      continue;
    // Stacked problems' outputs follow each other (r = problem * ROWS + row).
    if constexpr (Cfg::STAGED_EPILOGUE) {
      const int warp = (tid >> 5) & 3;
#pragma unroll
      for (int t = 0; t < SLICES; ++t)
        staged_epilogue<Cfg, Epi>(
            p, (idx)x.problem,
            x.m0 + (Cfg::PINGPONG ? t : cwg) * 64 + warp * 16, x.n0, tid & 31,
            acc[t], sStaging + (cwg * 4 + warp) * STAGING);
    } else {
#pragma unroll
      for (int t = 0; t < SLICES; ++t)
        wgmma_epilogue<Cfg, Epi>(p, x.split, (idx)x.problem, x.m0, x.n0,
                                 Cfg::PINGPONG ? t : cwg, tid & 127, acc[t]);
    }
  }
  // A block's shared memory lives until its stores have read it, and its
  // results are written before the grid counts as done.
  if constexpr (Cfg::TMA_STORE)
    if ((tid & 31) == 0)
      tma::bulk_wait_done<0>();
  // No block leaves while its peers may still arrive on its barriers.
  if constexpr (CM > 1)
    cluster::sync();
}

} // namespace gemm
} // namespace kiln
