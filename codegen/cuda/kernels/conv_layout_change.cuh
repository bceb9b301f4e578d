//===- conv_layout_change.cuh - channels-last copies of conv operands -----===//
//
// A channels-first convolution whose windows the implicit GEMM would have to
// gather element by element runs as the channels-last one instead: its
// activation and filter operands are first copied channels last (this
// kernel), and the GEMM's epilogue stores the result channels first, so the
// output needs no second pass. Each copy is BATCH matrices [ROWS][COLS] ->
// [COLS][ROWS]: an activation [N][C][H*W] -> [N][H*W][C], a filter
// [O][C/GROUPS][KH*KW] -> [O][KH*KW][C/GROUPS]. 32x32 tiles pass through
// shared memory (padded against bank conflicts) so that both the loads and
// the stores coalesce; blocks of 256 threads walk the tiles in a strided
// loop.
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/prelude.cuh"

namespace kiln {
namespace conv {

template <class T, long long BATCH, long long ROWS, long long COLS>
__device__ __forceinline__ void to_channels_last(const launch_ctx &ctx,
                                                 const T *__restrict__ src,
                                                 T *__restrict__ dst) {
  constexpr long long TILES_R = (ROWS + 31) / 32, TILES_C = (COLS + 31) / 32;
  __shared__ T tile[32][33];
  const int tx = ctx.thread.x % 32, ty = ctx.thread.x / 32;
  for (long long t = ctx.block.x; t < BATCH * TILES_R * TILES_C;
       t += ctx.grid.x) {
    const long long b = t / (TILES_R * TILES_C);
    const long long r0 = (t / TILES_C) % TILES_R * 32, c0 = t % TILES_C * 32;
#pragma unroll
    for (int i = 0; i < 32; i += 8) {
      const long long r = r0 + ty + i, c = c0 + tx;
      if (r < ROWS && c < COLS)
        tile[ty + i][tx] = src[(b * ROWS + r) * COLS + c];
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < 32; i += 8) {
      const long long c = c0 + ty + i, r = r0 + tx;
      if (r < ROWS && c < COLS)
        dst[(b * COLS + c) * ROWS + r] = tile[tx][ty + i];
    }
    __syncthreads();
  }
}

} // namespace conv
} // namespace kiln
