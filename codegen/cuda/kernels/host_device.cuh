//===- host_device.cuh - CUDA function qualifiers for host compilers ------===//
//
// Layout helpers are `__host__ __device__ constexpr` functions that kernel
// templates and host-side planners share. CUDA compilers (nvcc, NVRTC)
// define __CUDACC__ and know the qualifiers; a host C++ compiler gets them
// as nothing, so the same header compiles on both sides. The integer helpers
// below are the ones every family's layout arithmetic uses.
//
//===----------------------------------------------------------------------===//
#pragma once

#ifndef __CUDACC__
#ifndef __host__
#define __host__
#endif
#ifndef __device__
#define __device__
#endif
#ifndef __forceinline__
#define __forceinline__ inline
#endif
#endif

namespace kiln {

__host__ __device__ constexpr long long ceil_div(long long a, long long b) {
  return (a + b - 1) / b;
}
__host__ __device__ constexpr long long next_pow2(long long v) {
  long long p = 1;
  while (p < v)
    p *= 2;
  return p;
}
__host__ __device__ constexpr long long clamp(long long v, long long lo,
                                              long long hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

} // namespace kiln
