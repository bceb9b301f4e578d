//===- rnn_layout.cuh - shapes and resources of the recurrent kernels -----===//
//
// Shared by the planner (RnnEmitter.cpp), the kernel template (rnn.cuh) and
// the tests. A recurrent layer of NH heads of D units runs as persistent
// kernels: the (head, batch tile) pairs are independent "groups", and each
// group is K blocks that split the head's units, U per block, each block
// holding its units' rows of every gate's R in registers as tensor-core
// fragments for all T steps. Per step a block's warps multiply the whole
// previous h of its batch tile (shared memory) by its rows into partial
// products, and then every thread runs the cells it takes (cells_per_thread)
// on their sums. The K blocks of a group meet once per step:
//
// - kSyncBlock: K = 1, the block owns the head; a block barrier.
// - kSyncCluster: the group is a thread-block cluster (sm_90); h (forward)
//   and the partial R^T products (backward) go straight into the peers'
//   shared memory, then a cluster barrier.
// - kSyncGrid: the group spans SMs beyond a cluster; h and the partials go
//   through global memory (L2) and the blocks meet at a counter in global
//   memory, in a cooperative launch (every block resident). Groups that do
//   not fit the GPU at once run as several such launches.
//
// Warps: U / 8 unit groups of 8 units (one mma n-tile per gate) times KS
// splits of the D reduction.
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/host_device.cuh"

namespace kiln {
namespace rnn {

using ::kiln::ceil_div;
using ::kiln::clamp;

// kiln.rnn's functions, in the dialect's order.
enum function_kind { kLstm = 0, kGru = 1, kElman = 2, kSlstm = 3 };

__host__ __device__ constexpr int gates_w(int f) {
  return f == kElman ? 1 : f == kGru ? 3 : 4;
}
__host__ __device__ constexpr int gates_r(int f) { return gates_w(f); }
__host__ __device__ constexpr int gates_b(int f) { return f == kElman ? 1 : 4; }
__host__ __device__ constexpr int num_states(int f) {
  return f == kLstm ? 2 : f == kSlstm ? 4 : 1;
}

enum sync_kind { kSyncBlock = 0, kSyncCluster = 1, kSyncGrid = 2 };

// Tensor-core operand kinds: bf16 and f16 m16n8k16; f32 as tf32 m16n8k8,
// once (kTf32) or split into a high and a low part that recover f32's
// accuracy (kTf32x3: three products).
enum mma_kind { kBf16 = 0, kF16 = 1, kTf32 = 2, kTf32x3 = 3 };

__host__ __device__ constexpr int mma_k(int kind) { return kind < 2 ? 16 : 8; }
__host__ __device__ constexpr int element_bytes(int kind) {
  return kind < 2 ? 2 : 4;
}

// The reduction dimension padded to whole mma k-steps (16 for every kind,
// so that both kinds tile the same shared rows).
__host__ __device__ constexpr long long padded(long long d) {
  return ceil_div(d, 16) * 16;
}

// Units per block must be a multiple of the 8 columns of an mma n-tile.
constexpr int kUnitGroup = 8;
constexpr int kMmaRows = 16;

__host__ __device__ constexpr int unit_groups(int u) { return u / kUnitGroup; }
__host__ __device__ constexpr int warps(int u, int ks) {
  return unit_groups(u) * ks;
}
// k-steps of the D reduction that one of KS warps takes.
__host__ __device__ constexpr int ksteps_per_warp(long long d, int kind,
                                                  int ks) {
  return (int)ceil_div(padded(d) / mma_k(kind), ks);
}

// Registers (32-bit) per thread that hold the forward fragments of R: per
// gate, per k-step, two (the n-tile's b0..b3 of 16-bit kinds, b0 b1 of tf32).
__host__ __device__ constexpr int forward_fragment_registers(int f, long long d,
                                                             int kind, int ks) {
  return gates_r(f) * ksteps_per_warp(d, kind, ks) * 2;
}

// The cells (batch row, unit) of a block, spread over its threads for the
// pointwise phase: cell c is taken by thread c % threads, row c / U, unit
// c % U (consecutive threads, consecutive units: coalesced rows).
__host__ __device__ constexpr int cells_per_thread(int bt, int u, int threads) {
  return (int)ceil_div((long long)bt * u, threads);
}

// Backward: the transposed product dh_prev[b, p] += sum over the block's
// (gate, unit) rows a[b, (g, u)] R[g, d, p] runs over every p of the head,
// n-tiles of 8 p. With at least as many warps as n-tiles, each warp takes
// one n-tile and one of `transposed_groups` ranges of the k-steps over the
// block's G * U rows (partial sums that the cells add); with fewer, each
// warp takes several n-tiles and every k-step.
__host__ __device__ constexpr int transposed_k(int f, int u) {
  return gates_r(f) * u;
}
__host__ __device__ constexpr int transposed_ksteps(int f, int u, int kind) {
  return (int)ceil_div(transposed_k(f, u), mma_k(kind));
}
__host__ __device__ constexpr int ntiles(long long d) {
  return (int)(padded(d) / 8);
}
__host__ __device__ constexpr int transposed_groups(int f, long long d, int u,
                                                    int ks, int kind) {
  return warps(u, ks) >= ntiles(d) ? (int)clamp(warps(u, ks) / ntiles(d), 1,
                                                transposed_ksteps(f, u, kind))
                                   : 1;
}
__host__ __device__ constexpr int transposed_ntiles(long long d, int u,
                                                    int ks) {
  return warps(u, ks) >= ntiles(d) ? 1 : (int)ceil_div(ntiles(d), warps(u, ks));
}
__host__ __device__ constexpr int
transposed_ksteps_per_warp(int f, long long d, int u, int ks, int kind) {
  return (int)ceil_div(transposed_ksteps(f, u, kind),
                       transposed_groups(f, d, u, ks, kind));
}
__host__ __device__ constexpr int
transposed_fragment_registers(int f, long long d, int u, int ks, int kind) {
  return transposed_ntiles(d, u, ks) *
         transposed_ksteps_per_warp(f, d, u, ks, kind) * 2;
}

// Shared rows: 16-bit rows padded by 8 elements and f32 rows by 4, so that
// the 32-bit fragment loads of one mma hit 32 distinct banks.
__host__ __device__ constexpr long long row_pitch(long long columns, int kind) {
  return columns + (element_bytes(kind) == 2 ? 8 : 4);
}
// The warps' f32 partial products [KS][G][BT][U + 8].
__host__ __device__ constexpr long long partial_pitch(int u) { return u + 8; }
__host__ __device__ constexpr long long products_bytes(int f, int bt, int u,
                                                       int ks) {
  return 4LL * ks * gates_r(f) * bt * partial_pitch(u);
}

// Shared memory of a forward block: two h buffers [BT][pitch] and the
// partial products.
__host__ __device__ constexpr long long
forward_shared_bytes(int f, long long d, int bt, int u, int ks, int kind) {
  return 2LL * bt * row_pitch(padded(d), kind) * element_bytes(kind) +
         products_bytes(f, bt, u, ks);
}

// Backward block: one h buffer, the gate gradients a [BT][pitch(G*U)], the
// partial products, and the incoming partial sums of dh_prev for its units:
// [2 parities][K][groups][BT][U] f32 in a cluster, [groups][BT][padded D]
// f32 in a single block, none in a grid group (they are in global memory).
__host__ __device__ constexpr long long
backward_shared_bytes(int f, long long d, int bt, int u, int k, int ks,
                      int kind, int sync) {
  const long long tg = transposed_groups(f, d, u, ks, kind);
  return 1LL * bt * row_pitch(padded(d), kind) * element_bytes(kind) +
         1LL * bt * row_pitch(padded(transposed_k(f, u)), kind) *
             element_bytes(kind) +
         products_bytes(f, bt, u, ks) +
         (sync == kSyncCluster ? 2LL * k * tg * bt * u * 4
          : sync == kSyncBlock ? tg * bt * padded(d) * 4
                               : 0LL);
}

// Global scratch of a grid group: one arrival counter per group (zeroed
// before the launch), and in the backward pass the partial sums
// [groups][2 parities][K][transposed groups][BT][padded D] f32.
__host__ __device__ constexpr long long counter_bytes(long long groups) {
  return groups * 4;
}
__host__ __device__ constexpr long long
partial_bytes(long long groups, int k, int tg, int bt, long long d) {
  return groups * 2LL * k * tg * bt * padded(d) * 4;
}

// The weight gradient dR[g, n] = sum over (b, t) of a_g[b, t]^T h_{t-1}[b]
// as a GEMM per (gate, head): 64 x 64 output tiles of (d, p), 4 warps of
// 32 x 32, the (b, t) reduction in chunks of 32 rows, split over
// `weight_splits` blocks whose f32 partials a second kernel sums in order.
constexpr int kWeightTile = 64;
constexpr int kWeightChunk = 32;
constexpr int kWeightThreads = 128;
__host__ __device__ constexpr long long weight_tiles(long long d) {
  return ceil_div(d, kWeightTile);
}
// Splits of the B * T rows: enough blocks to fill `sms` SMs about twice,
// each split at least 512 rows.
__host__ __device__ constexpr int weight_splits(long long rows, long long tiles,
                                                int sms) {
  long long want = ceil_div(2LL * sms, tiles);
  long long most = ceil_div(rows, 512);
  long long s = want < most ? want : most;
  return (int)(s < 1 ? 1 : s > 64 ? 64 : s);
}
__host__ __device__ constexpr long long weight_split_rows(long long rows,
                                                          int splits) {
  return ceil_div(ceil_div(rows, splits), kWeightChunk) * kWeightChunk;
}

// The bias gradient: column sums over the B * T rows in chunks of
// kBiasChunk rows (f32 partials), then summed in order.
constexpr int kBiasChunk = 256;
constexpr int kBiasThreads = 128;
__host__ __device__ constexpr long long bias_chunks(long long rows) {
  return ceil_div(rows, kBiasChunk);
}

// Partial sums: a second kernel adds `parts` f32 slices of `n` elements in
// order and stores the sum in the result type.
constexpr int kSumThreads = 256;

} // namespace rnn
} // namespace kiln
