//===- attention_wgmma_layout.cuh - tiles of the Hopper attention kernels -===//
//
// The shared-memory layout of attention_wgmma_fwd.cuh and
// attention_wgmma_bwd.cuh, written once for the kernels and the planner.
// Every [rows][head dim] tile is stored as the tensor memory accelerator
// writes it with 128-byte swizzling and wgmma reads it: panels of 64 head
// dim elements (one 128-byte swizzle row per tile row), `rows * 128` bytes
// each, one after another. A block has one producer warpgroup and
// `consumers` warpgroups of 64 rows each.
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/host_device.cuh"

namespace kiln {
namespace attention {

// Head-dim elements of one panel (128 bytes of bf16/f16).
constexpr int kPanel = 64;
// Rows of one consumer warpgroup's slice of a tile.
constexpr int kWarpgroupRows = 64;
// The head dims the kernels take, padded to whole panels.
constexpr int kMaxWgmmaHeadDim = 256;

__host__ __device__ constexpr long long pad_panel(long long d) {
  return (d + kPanel - 1) / kPanel * kPanel;
}
// Bytes of a [rows][pad_panel(d)] tile of 2-byte elements.
__host__ __device__ constexpr long long panel_tile_bytes(long long rows,
                                                         long long d) {
  return rows * pad_panel(d) * 2;
}

// Byte offsets from the 1024-byte-aligned base of one kernel's shared
// buffers: the work item's own tiles (`fixed_a`, `fixed_b`), `stages`
// pipeline stages of the streamed tiles (`stream_a`, `stream_b` and, for the
// backward, the row statistics `stream_rows`), then the mbarriers.
struct wgmma_smem {
  long long fixed_a = 0, fixed_b = 0;
  long long stream_a = 0, stream_b = 0, stream_rows = 0;
  long long stage_bytes = 0, stage_a_bytes = 0, stage_b_bytes = 0;
  // The one-pass backward's score-gradient tile and dQ staging buffers.
  long long ds = 0, staging = 0, staging_bytes = 0;
  long long bars = 0, end = 0;
  // With the slack that aligns the base.
  __host__ __device__ constexpr long long bytes() const { return end + 1024; }
};

// Forward: Q [bm][d] fixed; K [bn][d] and V [bn][dv] streamed. Barriers:
// Q's, then full-K, full-V and empty per stage, then Q's empty.
__host__ __device__ constexpr wgmma_smem
wgmma_forward_smem(long long bm, long long bn, long long d, long long dv,
                   long long stages) {
  wgmma_smem l;
  l.fixed_a = 0;
  l.stream_a = panel_tile_bytes(bm, d);
  l.stage_a_bytes = panel_tile_bytes(bn, d);
  l.stage_b_bytes = panel_tile_bytes(bn, dv);
  l.stage_bytes = l.stage_a_bytes + l.stage_b_bytes;
  l.stream_b = l.stream_a + stages * l.stage_a_bytes;
  l.bars = l.stream_b + stages * l.stage_b_bytes;
  l.end = l.bars + 8 * (2 + 3 * stages);
  return l;
}

// Backward over `fixed` rows of one tensor pair with `streamed` rows of the
// other pair per stage: dq keeps Q [fixed][d] and dO [fixed][dv] and
// streams K [streamed][d] and V [streamed][dv]; dk/dv keeps K and V and
// streams Q, dO and the rows' log-sum-exp and delta (2 x streamed floats).
// Barriers: the fixed tiles', then full-A, full-B and empty per stage, then
// the fixed tiles' empty.
__host__ __device__ constexpr wgmma_smem
wgmma_backward_smem(long long fixed, long long streamed, long long d,
                    long long dv, long long stages, bool row_stats) {
  wgmma_smem l;
  l.fixed_a = 0;
  l.fixed_b = panel_tile_bytes(fixed, d);
  l.stream_a = l.fixed_b + panel_tile_bytes(fixed, dv);
  l.stage_a_bytes = panel_tile_bytes(streamed, d);
  l.stage_b_bytes = panel_tile_bytes(streamed, dv);
  l.stream_b = l.stream_a + stages * l.stage_a_bytes;
  l.stream_rows = l.stream_b + stages * l.stage_b_bytes;
  l.bars = l.stream_rows + (row_stats ? stages * streamed * 8 : 0);
  l.end = l.bars + 8 * (2 + 3 * stages);
  return l;
}

// f32 elements per row of the one-pass backward's dQ accumulator (and of
// its staging tiles): the padded head dim and four more, so that the
// quads of a warp's accumulator rows fall into distinct banks.
__host__ __device__ constexpr long long dq_accum_stride(long long d) {
  return pad_panel(d) + 4;
}

// The one-pass backward (attention_wgmma_bwd_fused.cuh): the dk/dv layout,
// then dS^T of the fixed keys for the streamed queries ([fixed][64], one
// swizzled panel), then two staging tiles of dQ in f32 ([streamed]
// [dq_accum_stride(d)]); barriers: the dk/dv kernel's, then the staging
// tiles' `ready` and `free` pairs.
__host__ __device__ constexpr wgmma_smem
wgmma_fused_backward_smem(long long fixed, long long streamed, long long d,
                          long long dv, long long stages) {
  wgmma_smem l = wgmma_backward_smem(fixed, streamed, d, dv, stages, true);
  l.ds = (l.bars + 1023) / 1024 * 1024;
  l.staging = l.ds + panel_tile_bytes(fixed, streamed);
  l.staging_bytes = streamed * dq_accum_stride(d) * 4;
  l.bars = l.staging + 2 * l.staging_bytes;
  l.end = l.bars + 8 * (2 + 3 * stages + 4);
  return l;
}

// The order of a kernel's work items, `tiles` of them per batch * head
// (query or key tiles), ranked longest first when causal: rank r is the
// item with the r-th most tiles to stream. Blocks take units b, b + grid,
// ... (persistent: one block per SM; else a block per unit), and the items
// of a unit one after the other.
//  - Not causal: a unit is one item, and a head's items are neighbours, so
//    the items in flight share its tiles in L2.
//  - Causal: a unit is the pair of ranks r and tiles - 1 - r, longer
//    first, and a head's pairs are neighbours, as above. Every pair streams
//    about the same number of tiles (tiles + 1 when the queries and keys
//    are as long), so blocks that take as many pairs finish together. When
//    `tiles` is odd, the middle items (half as long) come alone after all
//    pairs, and fill in the last wave. (Every head's longest item first,
//    then every head's second, balances as well, but streams every head's
//    tiles through L2 again for each rank.)
struct work_order {
  long long batch_heads;
  int tiles;
  bool causal;
  __host__ __device__ constexpr long long pairs() const {
    return causal ? batch_heads * (tiles / 2) : 0;
  }
  __host__ __device__ constexpr long long units() const {
    return causal ? pairs() + (tiles % 2 ? batch_heads : 0)
                  : batch_heads * tiles;
  }
  // The items of unit u: 1 or 2.
  __host__ __device__ constexpr int items(long long u) const {
    return u < pairs() ? 2 : 1;
  }
  __host__ __device__ constexpr int batch_head(long long u) const {
    if (!causal)
      return int(u / tiles);
    return int(u < pairs() ? u / (tiles / 2) : u - pairs());
  }
  // The rank of item `half` (0 or 1) of unit u.
  __host__ __device__ constexpr int rank(long long u, int half) const {
    if (!causal)
      return int(u % tiles);
    if (u >= pairs())
      return tiles / 2;
    const int r = int(u % (tiles / 2));
    return half ? tiles - 1 - r : r;
  }
};

// Which tiles of a work item need the mask. Key j is visible to query i
// when j < tk and, causal, j <= i + tk - tq. Only the tiles that cross the
// diagonal or the end of the keys hide any key; the kernels run the others
// in loops of their own without a mask, since a compare and a select per
// score on the ALU pipe (which the softmax's maxima also take) would slow
// every tile of a causal item.
//
// Queries from q0 on (a warpgroup's slice) against key tiles of bn from key
// 0: how many leading tiles every one of those queries sees whole.
__host__ __device__ constexpr long long whole_key_tiles(long long tq,
                                                        long long tk,
                                                        bool causal,
                                                        long long q0,
                                                        long long bn) {
  // Keys [0, end) are visible to query q0 and every later query.
  const long long end =
      causal && q0 + (tk - tq) + 1 < tk ? q0 + (tk - tq) + 1 : tk;
  return end > 0 ? end / bn : 0;
}

// Keys k0 .. k0 + rows - 1 (a warpgroup's slice) against query tiles of bq
// from q_begin: how many leading tiles hide some of those keys from some
// of their queries (none but causal ones: the kernels over key tiles keep
// keys past tk out of what they store, and rows past tq have no
// probabilities).
__host__ __device__ constexpr long long masked_query_tiles(
    long long tq, long long tk, bool causal, long long k0, long long rows,
    long long q_begin, long long bq) {
  // The first query that sees the slice's last key, and every key before.
  const long long sees_all = k0 + rows - 1 - (tk - tq);
  return causal && sees_all > q_begin ? (sees_all - q_begin + bq - 1) / bq
                                      : 0;
}

// Rows per (batch, head) of the backward's row statistics in scratch:
// whole streamed tiles, so that a stage's copy never leaves them.
__host__ __device__ constexpr long long stats_rows(long long tq,
                                                   long long tile) {
  return (tq + tile - 1) / tile * tile;
}

} // namespace attention
} // namespace kiln
