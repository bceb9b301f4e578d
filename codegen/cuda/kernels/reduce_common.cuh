//===- reduce_common.cuh - combiners and group reductions -----------------===//
//
// What every reduction kernel builds on: the accumulator combiners (sum,
// NaN-propagating max/min, argmax), warp shuffles of every accumulator type,
// and the reduction of a value over the threads that own one row. Every
// reduction accumulates in f32 (i32 sums in unsigned arithmetic, which
// wraps) with a fixed combination tree: results are deterministic run to
// run, and no atomics are used.
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/prelude.cuh"

__device__ __forceinline__ float kiln_inf() { return __int_as_float(0x7f800000); }
__device__ __forceinline__ float kiln_nan() { return __int_as_float(0x7fc00000); }

// A value with the index it came from (argmax).
template <class V> struct kiln_arg { V v; int i; };

__device__ __forceinline__ bool kiln_isnan(float x) { return x != x; }
__device__ __forceinline__ bool kiln_isnan(int) { return false; }

__device__ __forceinline__ float kiln_shfl_xor(float v, int o) { return __shfl_xor_sync(0xffffffffu, v, o); }
__device__ __forceinline__ int kiln_shfl_xor(int v, int o) { return __shfl_xor_sync(0xffffffffu, v, o); }
__device__ __forceinline__ unsigned kiln_shfl_xor(unsigned v, int o) { return __shfl_xor_sync(0xffffffffu, v, o); }
template <class V>
__device__ __forceinline__ kiln_arg<V> kiln_shfl_xor(kiln_arg<V> a, int o) {
  return kiln_arg<V>{kiln_shfl_xor(a.v, o), kiln_shfl_xor(a.i, o)};
}

struct kiln_sum_op {
  template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return a + b; }
};
struct kiln_max_op {
  __device__ __forceinline__ float operator()(float a, float b) const { return kiln_max(a, b); }
  __device__ __forceinline__ int operator()(int a, int b) const { return a > b ? a : b; }
};
struct kiln_min_op {
  __device__ __forceinline__ float operator()(float a, float b) const { return kiln_min(a, b); }
  __device__ __forceinline__ int operator()(int a, int b) const { return a < b ? a : b; }
};
// The first NaN wins, then the larger value, then the smaller index. The
// rule is symmetric and associative, so every combination order gives the
// answer of a sequential scan.
struct kiln_argmax_op {
  template <class V>
  __device__ __forceinline__ kiln_arg<V> operator()(kiln_arg<V> a, kiln_arg<V> b) const {
    bool an = kiln_isnan(a.v), bn = kiln_isnan(b.v);
    if (an != bn) return an ? a : b;
    if (!an && a.v != b.v) return a.v > b.v ? a : b;
    return a.i <= b.i ? a : b;
  }
};

// Combines `v` over the GROUP threads (a power of two) that own one row:
// consecutive lanes when GROUP <= 32, else the whole (one-dimensional)
// block, GROUP == its size. Butterfly shuffles leave the same value, rounded
// the same way, in every thread. `scratch` holds 32 values.
template <int GROUP, class T, class Op>
__device__ __forceinline__ T kiln_group_reduce(const kiln::launch_ctx &ctx, T v, Op op,
                                               T identity, T *scratch) {
#pragma unroll
  for (int o = (GROUP < 32 ? GROUP : 32) / 2; o > 0; o /= 2)
    v = op(v, kiln_shfl_xor(v, o));
  if constexpr (GROUP > 32) {
    const int lane = ctx.thread.x & 31, warp = ctx.thread.x >> 5;
    __syncthreads();  // earlier readers of scratch are done
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    v = lane < GROUP / 32 ? scratch[lane] : identity;
#pragma unroll
    for (int o = 16; o > 0; o /= 2)
      v = op(v, kiln_shfl_xor(v, o));
  }
  return v;
}

__device__ __forceinline__ float kiln_square(float x) { return x * x; }
// max(x, 0) - x t + log(1 + exp(-|x|)): binary cross entropy with logits.
__device__ __forceinline__ float kiln_bce(float x, float t) {
  return fmaxf(x, 0.f) - x * t + log1pf(expf(-fabsf(x)));
}
