//===- host_device.cuh - CUDA qualifiers for headers the host includes ----===//
//
// Layout arithmetic is written once, as constexpr functions that both the
// kernel templates (compiled by NVRTC/nvcc) and the host-side planners
// (compiled by the host compiler) include; the host compiler knows no CUDA
// qualifiers.
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
#endif
