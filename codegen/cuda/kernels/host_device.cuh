//===- host_device.cuh - CUDA function qualifiers for host compilers ------===//
//
// Layout helpers are `__host__ __device__ constexpr` functions that kernel
// templates and host-side planners share. CUDA compilers (nvcc, NVRTC)
// define __CUDACC__ and know the qualifiers; a host C++ compiler gets them
// as nothing, so the same header compiles on both sides.
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
