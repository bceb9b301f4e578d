//===- welford.cuh - count, mean and squared deviations of a sample -------===//
//
// The statistics batch_norm.cuh combines: partials of a channel's values,
// written by its own statistics kernel or by a convolution's epilogue
// (tile_stats.cuh), merged by Chan's formula, which needs no cancelling
// difference of large sums.
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/prelude.cuh"

namespace kiln {
namespace bn {

// Count, mean and sum of squared deviations of the elements seen so far.
struct welford {
  float n, mean, m2;
  __device__ __forceinline__ void init() { n = 0.f, mean = 0.f, m2 = 0.f; }
  // The other of an exchange between the lanes of a warp.
  __device__ __forceinline__ welford shuffle_xor(int mask) const {
    return {__shfl_xor_sync(0xffffffffu, n, mask),
            __shfl_xor_sync(0xffffffffu, mean, mask),
            __shfl_xor_sync(0xffffffffu, m2, mask)};
  }
  __device__ __forceinline__ void merge(const welford &b) {
    if (b.n == 0.f)
      return;
    if (n == 0.f) {
      *this = b;
      return;
    }
    const float t = n + b.n, d = b.mean - mean, w = b.n / t;
    mean += d * w;
    m2 += b.m2 + d * d * n * w;
    n = t;
  }
};

} // namespace bn
} // namespace kiln
