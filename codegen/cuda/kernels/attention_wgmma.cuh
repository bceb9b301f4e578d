//===- attention_wgmma.cuh - pieces of the Hopper attention kernels -------===//
//
// What attention_wgmma_fwd.cuh and attention_wgmma_bwd.cuh share: products
// with the A operand in registers (wgmma::mma_rs: a softmax's probabilities
// or a score gradient, converted from the accumulators that computed them),
// the matrix descriptors of the panel tiles of attention_wgmma_layout.cuh,
// the accumulator fragment arithmetic and TMA copies of whole tiles.
//
// Fragments. A consumer warpgroup computes 64 rows of a product; in it warp
// v, lane (g = lane / 4, c = lane % 4) holds rows 16v + g and 16v + g + 8 at
// columns 8j + 2c and 8j + 2c + 1 of every 8-column block j: accumulator
// registers 4j + {0, 1} (row g) and 4j + {2, 3} (row g + 8). A row's values
// lie in the four lanes of a quad. The A fragment of a k16 step kk (four
// 32-bit registers of element pairs) is the accumulators of blocks 2kk and
// 2kk + 1 in order, so a product's result becomes the next product's
// operand without leaving the registers.
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/attention_common.cuh"
#include "kiln/attention_wgmma_layout.cuh"
#include "kiln/fast_math.cuh"
#include "kiln/gemm_wgmma.cuh"
#include "kiln/memory.cuh"
#include "kiln/tma.cuh"
#include "kiln/wgmma.cuh"

namespace kiln {
namespace attention {

// Descriptors of panel tiles (attention_wgmma_layout.cuh) at shared address
// `tile` with `rows` rows:
//  - K-major (the head dim is the reduction): rows row0 .. row0 + 63 (or
//    the whole N extent), k16 step kk of the head dim;
//  - N-major (the rows are the reduction, the head dim the output
//    columns): head-dim panel `panel`, k16 step kk of the rows.
__device__ __forceinline__ unsigned long long k_major(unsigned tile, int rows,
                                                      int row0, int kk) {
  return gemm::wgmma_descriptor(
      tile + (kk / 4) * rows * 128 + row0 * 128 + (kk % 4) * 32, 16, 1024);
}
__device__ __forceinline__ unsigned long long n_major(unsigned tile, int rows,
                                                      int panel, int kk) {
  return gemm::wgmma_descriptor(tile + panel * rows * 128 + kk * 2048,
                                rows * 128, 1024);
}

// acc (64 x N) = A (rows row0.. of a K-major tile) * B^T (a K-major tile of
// N rows), both over a head dim of DP: one commit group. No other group
// may be in flight: ptxas serialises the wgmmas of a pipeline stage in
// which other instructions (the zeroing) define accumulators.
template <int N, int DP, int KIND>
__device__ __forceinline__ void product_ss(float (&acc)[N / 2], unsigned a,
                                           int a_rows, int row0, unsigned b) {
#pragma unroll
  for (int i = 0; i < N / 2; ++i)
    acc[i] = 0.f;
  wgmma::fence_accumulators(acc);
  wgmma::fence();
#pragma unroll
  for (int kk = 0; kk < DP / 16; ++kk)
    wgmma::mma<N, KIND, false, false>(acc, k_major(a, a_rows, row0, kk),
                                      k_major(b, N, 0, kk));
  wgmma::commit_group();
}

// acc (64 x PANELS*64) += A (fragments of K = 16 * STEPS) * B (an N-major
// tile of 16 * STEPS rows, its panels LBO apart): one commit group.
template <int STEPS, int PANELS, int KIND>
__device__ __forceinline__ void product_rs(float (&acc)[PANELS][32],
                                           const unsigned (&a)[STEPS][4],
                                           unsigned b) {
#pragma unroll
  for (int p = 0; p < PANELS; ++p)
    wgmma::fence_accumulators(acc[p]);
  wgmma::fence();
#pragma unroll
  for (int kk = 0; kk < STEPS; ++kk)
    wgmma::mma_rs<KIND, true>(acc, a[kk], n_major(b, STEPS * 16, 0, kk));
  wgmma::commit_group();
}

template <int PANELS>
__device__ __forceinline__ void zero_panels(float (&acc)[PANELS][32]) {
#pragma unroll
  for (int p = 0; p < PANELS; ++p)
#pragma unroll
    for (int i = 0; i < 32; ++i)
      acc[p][i] = 0.f;
}
template <int PANELS>
__device__ __forceinline__ void fence_panels(float (&acc)[PANELS][32]) {
#pragma unroll
  for (int p = 0; p < PANELS; ++p)
    wgmma::fence_accumulators(acc[p]);
}

using gemm::pack;

// The A fragments of the 64 x N accumulators `acc`.
template <class E, int N>
__device__ __forceinline__ void to_fragments(unsigned (&a)[N / 16][4],
                                             const float (&acc)[N / 2]) {
#pragma unroll
  for (int kk = 0; kk < N / 16; ++kk)
#pragma unroll
    for (int i = 0; i < 4; ++i)
      a[kk][i] = pack<E>(acc[8 * kk + 2 * i], acc[8 * kk + 2 * i + 1]);
}

// Max and sum over the four lanes of a quad (one accumulator row).
__device__ __forceinline__ float quad_max(float v) {
  v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 1));
  return fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 2));
}
__device__ __forceinline__ float quad_sum(float v) {
  v += __shfl_xor_sync(0xffffffffu, v, 1);
  return v + __shfl_xor_sync(0xffffffffu, v, 2);
}

// Where this lane's accumulators lie in a 64-row slice: the first row and
// column; register 4j + 2h + c is (row + 8h, column + 8j + c).
struct lane_pos {
  int row, col;
  __device__ __forceinline__ explicit lane_pos(int thread) {
    const int lane = thread & 31, warp = (thread >> 5) & 3;
    row = warp * 16 + (lane >> 2);
    col = (lane & 3) * 2;
  }
};

// The head-dim panels of rows row0 .. row0 + ROWS - 1 of (batch * heads +
// head) bh of a tensor map {head dim, T, heads, batch} into a panel tile;
// completes on `bar`.
template <int ROWS, int PANELS, long long HEADS>
__device__ __forceinline__ void copy_tile(unsigned dst, const tensor_map &m,
                                          unsigned bar, int row0, int bh) {
  const int h = bh % (int)HEADS, b = bh / (int)HEADS;
#pragma unroll
  for (int p = 0; p < PANELS; ++p)
    tma::copy_4d(dst + p * ROWS * 128, m, bar, p * kPanel, row0, h, b);
}

// The shared buffers and mbarriers of a warp-specialised kernel, laid out
// by L (attention_wgmma_layout.cuh) from the 1024-byte-aligned start of the
// dynamic shared memory: the work item's own tiles (fixed_a, fixed_b, their
// barriers fixed_bar, full, and fixed_empty, free again), STAGES stages of
// the streamed tiles (a, b and the rows' statistics of `streamed` rows)
// with full_a, full_b and empty barriers each.
template <int STAGES> struct pipeline_smem {
  wgmma_smem L;
  unsigned base, streamed;
  __device__ __forceinline__ pipeline_smem(const wgmma_smem &layout,
                                           int streamed_rows)
      : L(layout), streamed((unsigned)streamed_rows) {
    extern __shared__ __align__(16) unsigned char kiln_attention_smem[];
    base = ((unsigned)__cvta_generic_to_shared(kiln_attention_smem) + 1023u) &
           ~1023u;
  }
  __device__ __forceinline__ unsigned fixed_a() const {
    return base + L.fixed_a;
  }
  __device__ __forceinline__ unsigned fixed_b() const {
    return base + L.fixed_b;
  }
  __device__ __forceinline__ unsigned a(int s) const {
    return base + L.stream_a + s * L.stage_a_bytes;
  }
  __device__ __forceinline__ unsigned b(int s) const {
    return base + L.stream_b + s * L.stage_b_bytes;
  }
  // The stage's log-sum-exp, then its delta (`streamed` floats each).
  __device__ __forceinline__ unsigned rows(int s) const {
    return base + L.stream_rows + s * streamed * 8;
  }
  __device__ __forceinline__ unsigned fixed_bar() const {
    return base + L.bars;
  }
  __device__ __forceinline__ unsigned full_a(int s) const {
    return base + L.bars + 8u * (1 + s);
  }
  __device__ __forceinline__ unsigned full_b(int s) const {
    return base + L.bars + 8u * (1 + STAGES + s);
  }
  __device__ __forceinline__ unsigned empty(int s) const {
    return base + L.bars + 8u * (1 + 2 * STAGES + s);
  }
  __device__ __forceinline__ unsigned fixed_empty() const {
    return base + L.bars + 8u * (1 + 3 * STAGES);
  }
  // Thread 0 initialises the barriers (a stage and the fixed tiles are
  // freed by one arrival per consumer warpgroup); every thread waits for it.
  __device__ __forceinline__ void init(int tid, int consumers) const {
    if (tid == 0) {
      tma::barrier_init(fixed_bar(), 1);
      tma::barrier_init(fixed_empty(), consumers);
      for (int s = 0; s < STAGES; ++s) {
        tma::barrier_init(full_a(s), 1);
        tma::barrier_init(full_b(s), 1);
        tma::barrier_init(empty(s), consumers);
      }
      tma::barrier_init_fence();
    }
    __syncthreads();
  }
};

// The work items of this block in work_order (attention_wgmma_layout.cuh)
// over TILES items per batch * head: the walk's batch * head and rank.
template <class C, int TILES> struct work_walk {
  long long unit;
  int half = 0;
  // The items walked before this one.
  int n = 0;
  __device__ __forceinline__ explicit work_walk(const launch_ctx &ctx)
      : unit(ctx.block.x) {}
  static __device__ __forceinline__ constexpr work_order order() {
    return work_order{C::batch_heads, TILES, C::causal};
  }
  __device__ __forceinline__ bool more() const {
    return unit < order().units();
  }
  __device__ __forceinline__ void next(const launch_ctx &ctx) {
    ++n;
    if (half == 0 && order().items(unit) == 2) {
      half = 1;
    } else {
      half = 0;
      unit += ctx.grid.x;
    }
  }
  __device__ __forceinline__ int bh() const { return order().batch_head(unit); }
  __device__ __forceinline__ int rank() const {
    return order().rank(unit, half);
  }
};

// A work item of BM queries: its batch * head, first query and the key
// tiles of BN it reads (causal: up to the last one it sees). Rank r is the
// r-th longest: the query tiles from the last.
template <class C, int BM, int BN> struct query_item {
  static constexpr int TILES = (C::tq + BM - 1) / BM;
  typedef work_walk<C, TILES> walk;
  int bh, q0, tiles;
  __device__ __forceinline__ explicit query_item(const walk &at) {
    bh = at.bh();
    q0 = (TILES - 1 - at.rank()) * BM;
    const int kEnd =
        C::causal ? min(C::tk, min(q0 + BM, C::tq) + (C::tk - C::tq)) : C::tk;
    tiles = kEnd > 0 ? (kEnd + BN - 1) / BN : 0;
  }
  // The leading key tiles that the queries from `row0` (a warpgroup's
  // slice) see whole: those need no mask.
  __device__ __forceinline__ int whole_tiles(int row0) const {
    return min(tiles,
               (int)whole_key_tiles(C::tq, C::tk, C::causal, row0, BN));
  }
};

// The kernels are persistent: block b walks its work items (work_walk; the
// planner launches at most one block per SM), the n-th of them with the
// fixed tiles' barriers in phase n. The producer copies an item's fixed
// tiles once the consumers have freed the last item's (fixed_empty), and
// streams its tiles through the same ring of stages, so that the next
// item's copies run under this item's last products and its epilogue.
// A stream_ring counts the uses of the ring by the items before: the stage
// of use j of this item and the phase it waits for.
template <int STAGES> struct stream_ring {
  int use = 0;
  __device__ __forceinline__ int stage(int j = 0) const {
    return (use + j) % STAGES;
  }
  __device__ __forceinline__ unsigned parity(int j = 0) const {
    return ((use + j) / STAGES) & 1;
  }
};

// One consumer warpgroup's arrival on `bar` (a stage or the fixed tiles
// read by products that have retired).
__device__ __forceinline__ void release_by_warpgroup(unsigned bar, int tid) {
  if ((tid & 127) == 0)
    tma::arrive(bar);
}

} // namespace attention
} // namespace kiln
