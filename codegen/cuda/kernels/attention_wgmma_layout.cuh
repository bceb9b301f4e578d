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

// Rows per (batch, head) of the backward's row statistics in scratch:
// whole streamed tiles, so that a stage's copy never leaves them.
__host__ __device__ constexpr long long stats_rows(long long tq,
                                                   long long tile) {
  return (tq + tile - 1) / tile * tile;
}

} // namespace attention
} // namespace kiln
