//===- scalar_ops.cuh - kiln's element-wise ops on one element ------------===//
//
// The device form of the ops the ScalarEmitter writes as one call (its table
// of device functions, codegen/cuda/scalar/ScalarEmitter.cpp): the element of
// the result from the elements of the operands, in compute type (float for
// f32/bf16/f16, int for i32). Float arithmetic is IEEE f32 as written (no
// fast math); i32 arithmetic wraps modulo 2^32. A bf16 or f16 result is
// rounded by the caller, once, after the call (kiln_round_bf16/f16), where
// the reference interpreter rounds it; the ops whose result is always
// representable in the operands' type (neg, abs, sign, relu, floor, ceil,
// round, max, min) are not rounded.
//
// The functions live in kiln::op rather than kiln: names such as max, round
// and exp there would hide the global math functions from the kernel
// templates in namespace kiln.
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/prelude.cuh"
#include "kiln/resize_layout.cuh"

namespace kiln {
namespace op {

// kiln.neg, abs, sign, relu: f32 and i32.
__device__ __forceinline__ float neg(float x) { return -x; }
__device__ __forceinline__ int neg(int x) { return kiln_neg_i32(x); }
__device__ __forceinline__ float abs(float x) { return fabsf(x); }
__device__ __forceinline__ int abs(int x) { return kiln_abs_i32(x); }
__device__ __forceinline__ float sign(float x) { return kiln_sign(x); }
__device__ __forceinline__ int sign(int x) { return kiln_sign(x); }
__device__ __forceinline__ float relu(float x) { return kiln_relu(x); }
__device__ __forceinline__ int relu(int x) { return kiln_relu(x); }

// Unary float ops.
__device__ __forceinline__ float exp(float x) { return expf(x); }
__device__ __forceinline__ float log(float x) { return logf(x); }
__device__ __forceinline__ float sqrt(float x) { return sqrtf(x); }
// A correctly rounded division of a correctly rounded square root (not
// rsqrtf, which is approximate).
__device__ __forceinline__ float rsqrt(float x) { return 1.0f / sqrtf(x); }
__device__ __forceinline__ float sin(float x) { return sinf(x); }
__device__ __forceinline__ float cos(float x) { return cosf(x); }
__device__ __forceinline__ float tanh(float x) { return tanhf(x); }
__device__ __forceinline__ float erf(float x) { return erff(x); }
__device__ __forceinline__ float sigmoid(float x) { return kiln_sigmoid(x); }
__device__ __forceinline__ float silu(float x) { return kiln_silu(x); }
// kiln.gelu with approximate = none and approximate = tanh.
__device__ __forceinline__ float gelu(float x) { return kiln_gelu(x); }
__device__ __forceinline__ float gelu_tanh(float x) { return kiln_gelu_tanh(x); }
// `alpha` is the op's f64 attribute rounded to f32.
__device__ __forceinline__ float leaky_relu(float x, float alpha) {
  return kiln_leaky_relu(x, alpha);
}
// floor, ceil and round of a bf16/f16 value are representable in it.
__device__ __forceinline__ float floor(float x) { return floorf(x); }
__device__ __forceinline__ float ceil(float x) { return ceilf(x); }
// Nearest integer, ties to even.
__device__ __forceinline__ float round(float x) { return kiln_round_half_even(x); }

// Binary ops: both operands of the op's element type (numpy broadcasting
// happens in the indices, not here).
__device__ __forceinline__ float add(float a, float b) { return a + b; }
__device__ __forceinline__ int add(int a, int b) { return kiln_add_i32(a, b); }
__device__ __forceinline__ float sub(float a, float b) { return a - b; }
__device__ __forceinline__ int sub(int a, int b) { return kiln_sub_i32(a, b); }
__device__ __forceinline__ float mul(float a, float b) { return a * b; }
__device__ __forceinline__ int mul(int a, int b) { return kiln_mul_i32(a, b); }
__device__ __forceinline__ float div(float a, float b) { return a / b; }
// Truncating, with x / 0 = 0 and -2^31 / -1 = -2^31.
__device__ __forceinline__ int div(int a, int b) { return kiln_div_i32(a, b); }
__device__ __forceinline__ float pow(float a, float b) { return powf(a, b); }
// A NaN in either operand gives NaN.
__device__ __forceinline__ float max(float a, float b) { return kiln_max(a, b); }
__device__ __forceinline__ int max(int a, int b) { return a > b ? a : b; }
__device__ __forceinline__ float min(float a, float b) { return kiln_min(a, b); }
__device__ __forceinline__ int min(int a, int b) { return a < b ? a : b; }

// kiln.dropout: element `index` of the Philox stream (seed, stream, offset)
// keeps `x` when its uniform draw is >= rate, scaled by `scale` = 1 / (1 -
// rate); the product is formed in f64 and rounded once to f32, as the
// reference does.
__device__ __forceinline__ float dropout(float x, unsigned long long seed,
                                         unsigned stream, unsigned offset,
                                         unsigned long long index, double rate,
                                         double scale) {
  return kiln_dropout_keep(seed, stream, offset, index, rate)
             ? (float)((double)x * scale)
             : 0.0f;
}

} // namespace op
} // namespace kiln
