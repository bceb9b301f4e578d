//===- gemm_layout.cuh - GEMM tile orders and shared-memory layouts -------===//
//
// The arithmetic that both the GEMM kernel templates and the host-side
// planner need, written once: the grouped order of output tiles, the padded
// shared tiles of the mma.sync and SIMT kernels, the 128-byte-swizzled tiles
// and matrix descriptors of the wgmma kernel, and the dynamic shared memory
// each kernel takes. The planner sizes launches (and decides what fits in a
// GpuTarget's shared memory) with these functions, the kernels address their
// tiles with them, and the host replay tests call them.
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/host_device.cuh"

namespace kiln {
namespace gemm {

// Block index -> (tile row, tile column), `group_m` tile rows at a time so
// that concurrently running blocks share A and B tiles in L2.
template <typename I>
__host__ __device__ __forceinline__ constexpr void
grouped_tile(I pid, I tiles_m, I tiles_n, I group_m, I &tm, I &tn) {
  const I group = pid / (group_m * tiles_n);
  const I first = group * group_m;
  const I size = tiles_m - first < group_m ? tiles_m - first : group_m;
  const I local = pid % (group_m * tiles_n);
  tm = first + local % size;
  tn = local / size;
}

//===----------------------------------------------------------------------===//
// mma.sync (bf16/f16 m16n8k16, tf32 m16n8k8)
//===----------------------------------------------------------------------===//

// Shared tiles keep each operand's global layout (rows along its contiguous
// dimension), padded by 16 bytes per row (8 words for tf32 tiles read along
// M/N) so that ldmatrix and the fragment loads are free of bank conflicts.
// `k_major`: the operand is stored with K contiguous (A [M][K], B [N][K]);
// `mn`: the tile's M or N extent.
__host__ __device__ constexpr int mma_pad(bool k_major, bool tf32) {
  return k_major ? (tf32 ? 4 : 8) : 8;
}
__host__ __device__ constexpr int mma_tile_rows(bool k_major, int mn, int bk) {
  return k_major ? mn : bk;
}
__host__ __device__ constexpr int mma_tile_cols(bool k_major, int mn, int bk) {
  return k_major ? bk : mn;
}
__host__ __device__ constexpr int mma_tile_ld(bool k_major, int mn, int bk,
                                              bool tf32) {
  return mma_tile_cols(k_major, mn, bk) + mma_pad(k_major, tf32);
}
// Elements of one pipeline stage of an operand tile.
__host__ __device__ constexpr int mma_stage_elements(bool k_major, int mn,
                                                     int bk, bool tf32) {
  return mma_tile_rows(k_major, mn, bk) * mma_tile_ld(k_major, mn, bk, tf32);
}
// Dynamic shared memory of the mma.sync kernel: `stages` A and B tiles.
__host__ __device__ constexpr unsigned
mma_shared_bytes(int bm, int bn, int bk, int stages, bool a_k_major,
                 bool b_k_major, bool tf32, int element_bytes) {
  return (unsigned)((mma_stage_elements(a_k_major, bm, bk, tf32) +
                     mma_stage_elements(b_k_major, bn, bk, tf32)) *
                    stages * element_bytes);
}

//===----------------------------------------------------------------------===//
// SIMT (exact f32)
//===----------------------------------------------------------------------===//

// Shared tiles are [buffer][k][m or n], m/n contiguous; +4 keeps float4
// alignment and spreads the transposing stores over the banks.
__host__ __device__ constexpr int simt_ld(int mn) { return mn + 4; }
// Threads of one K slice: one per tm x tn outputs.
__host__ __device__ constexpr int simt_slice_threads(int bm, int bn, int tm,
                                                     int tn) {
  return (bm / tm) * (bn / tn);
}
// Thread ty (tx) owns rows ty*4 + {0..3} (columns likewise) of each of the
// tm/4 row groups, bm / (tm/4) apart: float4 shared reads without bank
// conflicts. Row of the thread's output i.
__host__ __device__ constexpr int simt_row_of(int bm, int tm, int ty, int i) {
  return (i / 4) * (bm / (tm / 4)) + ty * 4 + i % 4;
}
// Dynamic shared memory of the SIMT kernel: two buffers of A and B tiles,
// then the other K slices' sums.
__host__ __device__ constexpr unsigned simt_shared_bytes(int bm, int bn,
                                                         int bk, int tm,
                                                         int tn, int slices) {
  return (unsigned)((2 * bk * simt_ld(bm) + 2 * bk * simt_ld(bn) +
                     (slices - 1) * tm * tn *
                         simt_slice_threads(bm, bn, tm, tn)) *
                    4);
}

//===----------------------------------------------------------------------===//
// wgmma (sm_90a)
//===----------------------------------------------------------------------===//
//
// Every shared tile is stored as wgmma reads it with 128-byte swizzling:
// 16-byte chunks of 8 elements, rows of 128 bytes, eight rows to a 1024-byte
// atom, the chunk index XORed with the row index within the atom.
//  - K-major operand (A [M][K], B [N][K]): one row per M/N index holding the
//    tile's 64 K values; atoms stack along M/N (stride 1024 bytes, the
//    descriptor's SBO). A k16 step starts 32 bytes further into the rows.
//  - M/N-major operand (A [K][M], B [K][N]): one row per k holding 64 M/N
//    values; atoms stack along K (SBO 1024) within a column of 64 M/N
//    values, and columns are BK * 128 bytes apart (LBO). A k16 step starts
//    two atoms (2048 bytes) further; wgmma's transpose bit reads it.

// The reduction depth of one tile step (one 128-byte swizzle row of
// bf16/f16).
constexpr int wgmma_block_k = 64;
// Bytes of one stage of an operand tile of `mn` rows or columns.
__host__ __device__ constexpr unsigned wgmma_tile_bytes(int mn) {
  return (unsigned)(mn * wgmma_block_k * 2);
}
// Bytes between the 64-wide M/N columns of atoms of an M/N-major tile.
constexpr unsigned wgmma_mn_column = wgmma_block_k * 128;
// Dynamic shared memory: `stages` A (bm x 64) and B (bn x 64) tiles plus the
// slack that aligns them to the 1024-byte swizzle atoms.
__host__ __device__ constexpr unsigned wgmma_shared_bytes(int bm, int bn,
                                                          int stages) {
  return (unsigned)(stages * (bm + bn) * wgmma_block_k * 2 + 1024);
}
// The staged epilogue of the TMA kernel (gemm_tma.cuh): each consumer warp
// stages its 16 rows of the tile, up to 128 columns at a time, in the
// element type; a row holds whole 16-byte runs of 8 columns.
constexpr int wgmma_staged_run = 8;
__host__ __device__ constexpr int wgmma_staged_columns(int bn) {
  return bn < 128 ? bn : 128;
}
__host__ __device__ constexpr unsigned wgmma_staged_warp_bytes(int bn) {
  return (unsigned)(16 * wgmma_staged_columns(bn) * 2);
}
// Byte offset of run `run` of staged row `row` (0 .. 15): each 64 columns
// are a 16-row box of 128-byte rows, 128-byte swizzled (run ^ row % 8), as
// a tensor copy of a {64, 16} box leaves it, so that a TMA store takes the
// box as it stands; the fragment writes of a warp (eight rows, four lanes
// each) and the run reads of eight lanes (one row) fall into distinct banks.
constexpr unsigned wgmma_staged_box_bytes = 16 * 128;
__host__ __device__ constexpr unsigned wgmma_staged_offset(int row, int run) {
  return (unsigned)((run >> 3) * wgmma_staged_box_bytes + row * 128 +
                    (((run & 7) ^ (row & 7)) << 4));
}
// Dynamic shared memory of the TMA kernels (gemm_tma.cuh, conv_tma.cuh), as
// byte offsets from its start rounded up to the 1024-byte swizzle atoms:
// `stages` A tiles (bm x 64), as many B tiles (bn x 64), the epilogue's
// staging (`staged_units` units of `staging_unit` bytes: the GEMM's
// consumer warps, none when its epilogue stores its fragments; the
// convolution's two A tiles), then a `full` and an `empty` mbarrier per
// stage. The kernels address their stages by it and the planners size the
// launch by bytes(), which adds the rounding's slack.
struct wgmma_tma_smem {
  int stages, staged_units;
  unsigned a_tile, b_tile, staging_unit;

  __host__ __device__ constexpr wgmma_tma_smem(int bm, int bn, int stages,
                                               int staged_units,
                                               unsigned staging_unit)
      : stages(stages), staged_units(staged_units),
        a_tile(wgmma_tile_bytes(bm)), b_tile(wgmma_tile_bytes(bn)),
        staging_unit(staging_unit) {}

  __host__ __device__ constexpr unsigned a(int stage) const {
    return stage * a_tile;
  }
  __host__ __device__ constexpr unsigned b(int stage) const {
    return stages * a_tile + stage * b_tile;
  }
  __host__ __device__ constexpr unsigned staging(int unit) const {
    return b(stages) + unit * staging_unit;
  }
  __host__ __device__ constexpr unsigned full(int stage) const {
    return staging(staged_units) + 8u * stage;
  }
  __host__ __device__ constexpr unsigned empty(int stage) const {
    return full(stages + stage);
  }
  __host__ __device__ constexpr unsigned bytes() const {
    return empty(stages) + 1024u;
  }
};
// The GEMM's: the staging of `staged_warps` consumer warps.
__host__ __device__ constexpr wgmma_tma_smem tma_smem(int bm, int bn,
                                                      int stages,
                                                      int staged_warps) {
  return wgmma_tma_smem(bm, bn, stages, staged_warps,
                        wgmma_staged_warp_bytes(bn));
}
// Byte offset of the 16-byte chunk c of row r in a 128-byte-swizzled tile:
// K-major rows are M/N indices (c = k / 8), M/N-major rows are k (c = mn / 8).
__host__ __device__ constexpr unsigned wgmma_swizzle_k(int r, int c) {
  return r * 128 + ((c ^ (r & 7)) << 4);
}
__host__ __device__ constexpr unsigned wgmma_swizzle_mn(int k, int c) {
  return (c >> 3) * wgmma_mn_column + k * 128 + (((c & 7) ^ (k & 7)) << 4);
}
// Shared-memory matrix descriptor: start address, leading and stride byte
// offsets (16-byte units), 128-byte swizzle.
__host__ __device__ constexpr unsigned long long
wgmma_descriptor(unsigned addr, unsigned lbo, unsigned sbo) {
  return (unsigned long long)((addr & 0x3FFFF) >> 4) |
         ((unsigned long long)(lbo >> 4) << 16) |
         ((unsigned long long)(sbo >> 4) << 32) | (1ull << 62);
}
// The operand at M/N offset mn (a multiple of 64) of the tile at shared
// address s, k16 step j.
__host__ __device__ constexpr unsigned long long
wgmma_operand(bool k_major, unsigned s, int mn, int j) {
  return k_major ? wgmma_descriptor(s + mn * 128 + j * 32, 16, 1024)
                 : wgmma_descriptor(s + (mn >> 6) * wgmma_mn_column + j * 2048,
                                    wgmma_mn_column, 1024);
}

} // namespace gemm
} // namespace kiln
