//===- gemm_splitk.cuh - split-K: the partial products' sum and epilogue --===//
//
// The second kernel of a split-K GEMM: adds the SPLIT f32 partial products
// in split order (deterministic) and applies the epilogue. A block of 256
// threads; any grid (a strided loop over the outputs).
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/gemm_common.cuh"

namespace kiln {
namespace gemm {

template <class Cfg, class Epi, class Params>
__device__ __forceinline__ void splitk_reduce(const launch_ctx &ctx, const Params &p) {
  typedef typename Cfg::index idx;
  constexpr idx TOTAL = shape<Cfg>::TOTAL;
  if constexpr (Cfg::N % 4 == 0) {
    // Four columns of one row per thread: 16-byte partial loads, paired stores.
    for (idx i = (idx)ctx.block.x * 256 + ctx.thread.x; i < TOTAL / 4;
         i += (idx)ctx.grid.x * 256) {
      float4 acc = reinterpret_cast<const float4 *>(p.scratch)[i];
#pragma unroll
      for (int s = 1; s < Cfg::SPLIT; ++s) {
        const float4 x = reinterpret_cast<const float4 *>(p.scratch + s * TOTAL)[i];
        acc.x += x.x;
        acc.y += x.y;
        acc.z += x.z;
        acc.w += x.w;
      }
      const idx r = (4 * i) / Cfg::N, c = (4 * i) % Cfg::N;
      Epi::store_pair(p, r, c, acc.x, acc.y);
      Epi::store_pair(p, r, c + 2, acc.z, acc.w);
    }
  } else {
    for (idx i = (idx)ctx.block.x * 256 + ctx.thread.x; i < TOTAL; i += (idx)ctx.grid.x * 256) {
      float acc = p.scratch[i];
#pragma unroll
      for (int s = 1; s < Cfg::SPLIT; ++s)
        acc += p.scratch[s * TOTAL + i];
      Epi::store(p, i / Cfg::N, i % Cfg::N, acc);
    }
  }
}

} // namespace gemm
} // namespace kiln
