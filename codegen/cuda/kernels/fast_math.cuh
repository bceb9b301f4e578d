//===- fast_math.cuh - special-function unit approximations ---------------===//
//
// Thin wrappers of the approximate transcendental instructions that CUDA's
// math library reaches only through global flags: for kernels whose
// storage rounds more coarsely than the approximation errs.
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/host_device.cuh"

namespace kiln {

// 2^x on the special-function unit (flushing subnormals; 2^-inf = 0).
__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}
// tanh(x), 2^-11 relative error.
__device__ __forceinline__ float fast_tanh(float x) {
  float y;
  asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

} // namespace kiln
