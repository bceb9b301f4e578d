//===- KernelPrelude.cpp - device helpers shared by generated kernels -----===//

#include "codegen/cuda/KernelEmitter.h"

namespace mlir::kiln::codegen {

llvm::StringRef kernelPrelude() {
  return R"cuda(
// kiln_prelude.cuh: device helpers of kiln's generated kernels.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

// Storage <-> compute (f32) conversions, round to nearest even.
__device__ __forceinline__ float kiln_load(float x) { return x; }
__device__ __forceinline__ float kiln_load(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float kiln_load(__half x) { return __half2float(x); }
__device__ __forceinline__ int kiln_load(int x) { return x; }
__device__ __forceinline__ bool kiln_load(bool x) { return x; }
__device__ __forceinline__ void kiln_store(float *p, float x) { *p = x; }
__device__ __forceinline__ void kiln_store(__nv_bfloat16 *p, float x) { *p = __float2bfloat16_rn(x); }
__device__ __forceinline__ void kiln_store(__half *p, float x) { *p = __float2half_rn(x); }
__device__ __forceinline__ void kiln_store(int *p, int x) { *p = x; }
__device__ __forceinline__ void kiln_store(bool *p, bool x) { *p = x; }

// max/min that propagate NaN (IEEE fmaxf/fminf drop it).
__device__ __forceinline__ float kiln_max(float a, float b) {
  return (a != a || b != b) ? __int_as_float(0x7fc00000) : fmaxf(a, b);
}
__device__ __forceinline__ float kiln_min(float a, float b) {
  return (a != a || b != b) ? __int_as_float(0x7fc00000) : fminf(a, b);
}

// Philox4x32-10 and the random-number scheme of runtime/random/philox.h.
struct kiln_uint4 { unsigned x, y, z, w; };
__device__ __forceinline__ kiln_uint4 kiln_philox(kiln_uint4 c, unsigned k0, unsigned k1) {
#pragma unroll
  for (int round = 0; round < 10; ++round) {
    unsigned hi0 = __umulhi(0xD2511F53u, c.x), lo0 = 0xD2511F53u * c.x;
    unsigned hi1 = __umulhi(0xCD9E8D57u, c.z), lo1 = 0xCD9E8D57u * c.z;
    c = kiln_uint4{hi1 ^ c.y ^ k0, lo1, hi0 ^ c.w ^ k1, lo0};
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return c;
}
__device__ __forceinline__ kiln_uint4 kiln_philox_block(unsigned long long seed, unsigned stream,
                                                        unsigned offset, unsigned long long index) {
  unsigned long long block = index / 4;
  return kiln_philox(kiln_uint4{(unsigned)block, stream, offset, (unsigned)(block >> 32)},
                     (unsigned)seed, (unsigned)(seed >> 32));
}
__device__ __forceinline__ unsigned kiln_lane(kiln_uint4 b, unsigned lane) {
  return lane == 0 ? b.x : lane == 1 ? b.y : lane == 2 ? b.z : b.w;
}
// Uniform in [0, 1), exact in f32.
__device__ __forceinline__ float kiln_uniform01(unsigned long long seed, unsigned stream,
                                                unsigned offset, unsigned long long index) {
  return (float)(kiln_lane(kiln_philox_block(seed, stream, offset, index), index % 4) >> 8) *
         5.9604644775390625e-8f;
}
// Standard normal by Box-Muller on a lane pair, computed in f64.
__device__ __forceinline__ double kiln_normal(unsigned long long seed, unsigned stream,
                                             unsigned offset, unsigned long long index) {
  kiln_uint4 b = kiln_philox_block(seed, stream, offset, index);
  unsigned pair = (unsigned)(index % 4) / 2;
  unsigned a = pair ? b.z : b.x, c = pair ? b.w : b.y;
  double u1 = (double)((a >> 8) + 1) * 5.9604644775390625e-8;
  double u2 = (double)(c >> 8) * 5.9604644775390625e-8;
  double r = sqrt(-2.0 * log(u1)), t = 6.283185307179586 * u2;
  return (index % 2 == 0) ? r * cos(t) : r * sin(t);
}
)cuda";
}

} // namespace mlir::kiln::codegen
