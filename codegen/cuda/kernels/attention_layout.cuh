//===- attention_layout.cuh - shared-memory layout of attention kernels ---===//
//
// Padded head dims, shared row strides and the shared buffers of the
// flash-attention kernels (attention_fwd.cuh, attention_bwd.cuh). The
// planner sizes the dynamic shared memory and chooses tiles with the same
// functions the kernels place their buffers with.
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/host_device.cuh"

namespace kiln {
namespace attention {

// Where one [B, H, T, D] tensor lies in its buffer: element (b, h, t, e) at
// base(b * Heads + h) + t * row + e (the head dim is contiguous). A fusion
// may hold head-dim-keeping transposes between the buffers and the op.
template <class Idx, long long Heads, long long BatchStride,
          long long HeadStride, long long RowStride>
struct strided {
  static constexpr long long heads = Heads, row = RowStride;
  static __host__ __device__ constexpr Idx base(int bh) {
    if constexpr (BatchStride == Heads * HeadStride)
      return (Idx)bh * (Idx)HeadStride;
    else
      return (Idx)(bh / (int)Heads) * (Idx)BatchStride +
             (Idx)(bh % (int)Heads) * (Idx)HeadStride;
  }
};

// Threads form a 16x16 grid: thread (ty, tx) owns rows ty + 16 i and
// columns tx + 16 j of every tile product.
constexpr int kThreads = 256;
constexpr int kGrid = 16;

// Head dims are padded to multiples of 16 in shared memory (zeros).
__host__ __device__ constexpr long long pad16(long long d) {
  return d < 16 ? 16 : (d + 15) / 16 * 16;
}

// Shared row strides in floats, padded against bank conflicts: rows of a
// (padded) head dim, and rows of a tile of scores.
__host__ __device__ constexpr long long head_ld(long long padded) {
  return padded + 1;
}
__host__ __device__ constexpr long long score_ld(long long tile) {
  return tile % 32 == 0 ? tile + 16 : tile;
}

// Offsets in floats of the shared buffers of one kernel, and their total.
struct smem_layout {
  long long q = 0, k = 0, v = 0, o = 0, p = 0, s = 0, lse = 0, delta = 0;
  long long floats = 0;
  __host__ __device__ constexpr long long bytes() const { return 4 * floats; }
};

// Forward: Q [tile][dp], K [tile][dp], V [tile][dvp], P [tile][tile].
__host__ __device__ constexpr smem_layout
forward_smem(long long tile, long long dp, long long dvp) {
  smem_layout l;
  l.q = 0;
  l.k = l.q + tile * head_ld(dp);
  l.v = l.k + tile * head_ld(dp);
  l.p = l.v + tile * head_ld(dvp);
  l.floats = l.p + tile * score_ld(tile);
  return l;
}

// dq: Q and dO of the query tile, K and V of a key tile, dS.
__host__ __device__ constexpr smem_layout
backward_dq_smem(long long tile, long long dp, long long dvp) {
  smem_layout l;
  l.q = 0;
  l.o = l.q + tile * head_ld(dp);
  l.k = l.o + tile * head_ld(dvp);
  l.v = l.k + tile * head_ld(dp);
  l.s = l.v + tile * head_ld(dvp);
  l.floats = l.s + tile * score_ld(tile);
  return l;
}

// dk/dv: K and V of the key tile, Q and dO of a query tile, P, dS and the
// tile's row statistics.
__host__ __device__ constexpr smem_layout
backward_dkdv_smem(long long tile, long long dp, long long dvp) {
  smem_layout l;
  l.k = 0;
  l.v = l.k + tile * head_ld(dp);
  l.q = l.v + tile * head_ld(dvp);
  l.o = l.q + tile * head_ld(dp);
  l.p = l.o + tile * head_ld(dvp);
  l.s = l.p + tile * score_ld(tile);
  l.lse = l.s + tile * score_ld(tile);
  l.delta = l.lse + tile;
  l.floats = l.delta + tile;
  return l;
}

} // namespace attention
} // namespace kiln
