//===- prelude.cuh - device helpers of every kiln kernel ------------------===//
//
// Included first by every generated kernel and every kernel template:
// the launch context, waiting for the predecessor kernel, storage <-> compute
// conversions, NaN-propagating max/min, Philox4x32-10 as in
// runtime/random/philox.h, activations and 16-byte vector access.
//
//===----------------------------------------------------------------------===//
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kiln/griddepcontrol.cuh"

namespace kiln {

// Where a thread runs: its block's index in the grid, the grid, its index in
// the block and the block's size. Kernel templates take their position from a
// context instead of CUDA's built-in variables, so that one kernel can run
// several of them side by side, each in its own part of the grid
// (merged.cuh). this_launch() is the context of a kernel that runs alone.
struct launch_ctx {
  uint3 block;
  uint3 grid;
  uint3 thread;
  uint3 block_dim;

  __device__ __forceinline__ unsigned thread_rank() const {
    return (thread.z * block_dim.y + thread.y) * block_dim.x + thread.x;
  }
  __device__ __forceinline__ unsigned block_threads() const {
    return block_dim.x * block_dim.y * block_dim.z;
  }
};

// A TMA tensor map (tma.cuh), declared here so that parameter structs can
// point to one in every kernel that shares them.
struct tensor_map;

__device__ __forceinline__ launch_ctx this_launch() {
  return launch_ctx{blockIdx, make_uint3(gridDim.x, gridDim.y, gridDim.z), threadIdx,
                    make_uint3(blockDim.x, blockDim.y, blockDim.z)};
}

} // namespace kiln

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
// Rounding of a compute (f32) value to what a bf16/f16 element holds, kept in
// f32: every op with a bf16 or f16 result rounds once, as the reference does.
__device__ __forceinline__ float kiln_round_bf16(float x) { return __bfloat162float(__float2bfloat16_rn(x)); }
__device__ __forceinline__ float kiln_round_f16(float x) { return __half2float(__float2half_rn(x)); }

// Activations, in f32. gelu uses erfc and the tanh form x * sigmoid(2u), so
// that large negative inputs keep their relative accuracy (1 + erf and
// 1 + tanh cancel there).
// The logistic sigmoid; exp of a non-positive number only, so it neither
// overflows nor loses the tiny values of large negative inputs.
__device__ __forceinline__ float kiln_sigmoid(float x) {
  float z = expf(-fabsf(x));
  return x >= 0.f ? 1.f / (1.f + z) : z / (1.f + z);
}
__device__ __forceinline__ float kiln_silu(float x) { return x / (1.0f + expf(-x)); }
__device__ __forceinline__ float kiln_gelu(float x) {
  return 0.5f * x * erfcf(-x * 0.707106781186547524f);
}
__device__ __forceinline__ float kiln_gelu_tanh(float x) {
  // 0.5 x (1 + tanh(u)) = x / (1 + exp(-2u)), u = sqrt(2/pi) (x + 0.044715 x^3).
  // The fast division (2 ulp; 0 once the denominator passes 2^126, where the
  // result is below 1e-36 anyway) has no slow-path call: GEMM epilogues run
  // this between warpgroup MMAs, which ptxas serialises around any call.
  float u = 0.797884560802865356f * (x + 0.044715f * x * x * x);
  return __fdividef(x, 1.0f + expf(-2.0f * u));
}
// max(x, 0) with NaN passing through; sign keeps zeros and NaN.
__device__ __forceinline__ float kiln_relu(float x) { return (x > 0.0f || x != x) ? x : 0.0f; }
__device__ __forceinline__ int kiln_relu(int x) { return x > 0 ? x : 0; }
__device__ __forceinline__ float kiln_sign(float x) { return x < 0.0f ? -1.0f : x > 0.0f ? 1.0f : x; }
__device__ __forceinline__ int kiln_sign(int x) { return x < 0 ? -1 : x > 0 ? 1 : 0; }
__device__ __forceinline__ float kiln_leaky_relu(float x, float alpha) { return x > 0.0f ? x : alpha * x; }
// Nearest integer, ties to even (rint in the default rounding mode).
__device__ __forceinline__ float kiln_round_half_even(float x) { return rintf(x); }

// i32 arithmetic wraps modulo 2^32 (through unsigned: no signed overflow).
__device__ __forceinline__ int kiln_add_i32(int a, int b) { return (int)((unsigned)a + (unsigned)b); }
__device__ __forceinline__ int kiln_sub_i32(int a, int b) { return (int)((unsigned)a - (unsigned)b); }
__device__ __forceinline__ int kiln_mul_i32(int a, int b) { return (int)((unsigned)a * (unsigned)b); }
__device__ __forceinline__ int kiln_neg_i32(int a) { return (int)(0u - (unsigned)a); }
__device__ __forceinline__ int kiln_abs_i32(int a) { return a < 0 ? kiln_neg_i32(a) : a; }
// Truncating division with x / 0 = 0 and -2^31 / -1 = -2^31.
__device__ __forceinline__ int kiln_div_i32(int a, int b) {
  if (b == 0) return 0;
  if (b == -1) return kiln_neg_i32(a);
  return a / b;
}
// float -> i32: truncate toward zero, NaN -> 0, saturate at the i32 range.
__device__ __forceinline__ int kiln_float_to_i32(float x) {
  if (x != x) return 0;
  if (x >= 2147483648.0f) return 2147483647;
  if (x <= -2147483648.0f) return (-2147483647 - 1);
  return (int)x;
}
// Integers to a float type, rounded once to nearest even, as f32 values.
__device__ __forceinline__ float kiln_i64_to_f32(long long x) { return __ll2float_rn(x); }
__device__ __forceinline__ float kiln_i64_to_bf16(long long x) { return __bfloat162float(__ll2bfloat16_rn(x)); }
__device__ __forceinline__ float kiln_i64_to_f16(long long x) { return __half2float(__ll2half_rn(x)); }

// kiln.random_uniform: f = (u >> 8) * 2^-24, r = lo + (hi - lo) * f in f32
// with each operation rounded (no FMA); r >= hi becomes the float below hi.
__device__ __forceinline__ float kiln_random_uniform(unsigned long long seed, unsigned stream,
                                                     unsigned offset, unsigned long long index,
                                                     float lo, float hi) {
  float f = kiln_uniform01(seed, stream, offset, index);
  float r = __fadd_rn(lo, __fmul_rn(__fsub_rn(hi, lo), f));
  return r >= hi ? nextafterf(hi, -__int_as_float(0x7f800000)) : r;
}
// kiln.random_normal: mean + std * z in f64 (no FMA), z from Box-Muller; the
// caller rounds once to the element type.
__device__ __forceinline__ double kiln_random_normal(unsigned long long seed, unsigned stream,
                                                     unsigned offset, unsigned long long index,
                                                     double mean, double stddev) {
  return __dadd_rn(mean, __dmul_rn(stddev, kiln_normal(seed, stream, offset, index)));
}
// kiln.dropout keeps element i when its uniform draw is >= rate.
__device__ __forceinline__ bool kiln_dropout_keep(unsigned long long seed, unsigned stream,
                                                  unsigned offset, unsigned long long index,
                                                  double rate) {
  return (double)kiln_uniform01(seed, stream, offset, index) >= rate;
}
// Rotary embedding angle p * freq (f64), reduced to [-pi, pi] in f64 before
// the f32 sine and cosine, so that large positions keep f32 accuracy.
__device__ __forceinline__ float kiln_rope_reduced_angle(long long position, double freq) {
  double a = (double)position * freq;
  double k = rint(a * 0.15915494309189535);
  double r = fma(-k, 6.283185307179586, a);
  r = fma(-k, 2.4492935982947064e-16, r);
  return (float)r;
}
__device__ __forceinline__ void kiln_rope_sincos(long long position, double freq, float *s, float *c) {
  sincosf(kiln_rope_reduced_angle(position, freq), s, c);
}
// The same with the multi-function unit's sine and cosine (absolute error
// at most 2^-21.4 on [-pi, pi]), for bf16 and f16 results.
__device__ __forceinline__ void kiln_rope_sincos_approx(long long position, double freq, float *s,
                                                        float *c) {
  const float r = kiln_rope_reduced_angle(position, freq);
  *s = __sinf(r);
  *c = __cosf(r);
}

// 16-byte vector access: V consecutive elements of T moved in chunks of up
// to 16 bytes (the pointer must be aligned to the chunk size; the register
// array is declared alignas(16)).
template <int Bytes> struct kiln_chunk;
template <> struct kiln_chunk<16> { typedef uint4 type; };
template <> struct kiln_chunk<8> { typedef uint2 type; };
template <> struct kiln_chunk<4> { typedef unsigned type; };
template <> struct kiln_chunk<2> { typedef unsigned short type; };
template <> struct kiln_chunk<1> { typedef unsigned char type; };
template <int V, typename T> struct kiln_vec_traits {
  static constexpr int bytes = V * (int)sizeof(T);
  static constexpr int chunk = bytes < 16 ? bytes : 16;
  typedef typename kiln_chunk<chunk>::type type;
};
template <int V, typename T>
__device__ __forceinline__ void kiln_load_vec(T (&dst)[V], const T *src) {
  typedef kiln_vec_traits<V, T> traits;
#pragma unroll
  for (int k = 0; k < traits::bytes / traits::chunk; ++k)
    reinterpret_cast<typename traits::type *>(dst)[k] =
        reinterpret_cast<const typename traits::type *>(src)[k];
}
template <int V, typename T>
__device__ __forceinline__ void kiln_store_vec(T *dst, const T (&src)[V]) {
  typedef kiln_vec_traits<V, T> traits;
#pragma unroll
  for (int k = 0; k < traits::bytes / traits::chunk; ++k)
    reinterpret_cast<typename traits::type *>(dst)[k] =
        reinterpret_cast<const typename traits::type *>(src)[k];
}
template <int V, typename T>
__device__ __forceinline__ bool kiln_vec_aligned(const T *p) {
  return ((unsigned long long)p % kiln_vec_traits<V, T>::chunk) == 0;
}
