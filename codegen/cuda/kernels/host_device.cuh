//===- host_device.cuh - CUDA qualifiers for the host compiler ------------===//
//
// Layout arithmetic lives in `__host__ __device__ constexpr` functions that
// kernel templates and host-side planners share; the host compiler knows no
// CUDA qualifiers, so they expand to nothing there.
//
//===----------------------------------------------------------------------===//
#pragma once

#ifndef __CUDACC__
#define __host__
#define __device__
#endif
