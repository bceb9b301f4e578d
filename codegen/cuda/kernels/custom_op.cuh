//===- custom_op.cuh - the ABI of user kernels (kiln.custom) --------------===//
//
// The header a user's kernel file includes. The file defines a device
// function template per entry,
//
//   template <class Args> __device__ void my_forward(const Args &args);
//
// and kilnc generates the rest: the `__global__` kernel, the `Args` struct
// of the op and the launch. `Args` (generated per op; members, not layout,
// are the stable interface) has
//
//   kiln::launch_ctx ctx;                   block/thread position, grid and
//                                           block sizes (ctx.block.x,
//                                           ctx.thread.x, ctx.grid.x,
//                                           ctx.block_dim.x): a custom kernel
//                                           uses these, never CUDA's built-in
//                                           position variables.
//   kiln::custom::tensor<const T> in0, ...;  the op's inputs
//   kiln::custom::tensor<T> out0, ...;       its results (forward)
//   static constexpr int num_inputs, num_outputs, block_size;
//   struct params { static constexpr ... };  the op's `params`: an integer
//                                           as long long, an f32 as float,
//                                           an f64 as double
//
// and, for the backward entry (kiln.custom_backward), `out<i>` read-only
// (the forward results), `grad_out<i>` (their gradients, read-only) and
// `grad_in<i>` for every floating-point input i (written). T is the
// tensor's element type as the IR has it: float, __nv_bfloat16, __half or
// int. Every tensor is a dense row-major buffer of its own (outputs never
// alias inputs). The kernel writes every element of every output.
//
// The launch is one-dimensional: `block_size` threads per block and a grid
// that custom_layout.cuh sizes by the largest tensor written but caps at a
// few waves, so kernels cover their work with the grid-stride loops below
// (for_each: one index per thread; for_each_block: one index per block, for
// row-wise work with block_sum) and never rely on the number of blocks.
//
// The file is compiled with the built-in templates by NVRTC (C++17, no host
// code) and may include "kiln/..." headers and CUDA's own; its text is part
// of the kernel's source, so an edit recompiles it.
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/custom_layout.cuh"
#include "kiln/prelude.cuh"

namespace kiln {
namespace custom {

// One tensor of a custom kernel: `numel` elements of type T at `data`,
// row-major over shape[0..rank) (a rank-0 tensor has one element).
template <class T> struct tensor {
  T *data;
  long long numel;
  int rank;
  long long shape[max_rank];

  __device__ __forceinline__ T &operator[](long long i) const {
    return data[i];
  }
  // The size of dimension d (negative d counts from the back).
  __device__ __forceinline__ long long size(int d) const {
    return shape[d < 0 ? d + rank : d];
  }
  // The last dimension's size and the number of such rows (rank 0: 1 and 1).
  __device__ __forceinline__ long long cols() const {
    return rank == 0 ? 1 : shape[rank - 1];
  }
  __device__ __forceinline__ long long rows() const { return numel / cols(); }
};

// Storage <-> f32: every element type reads as float (int as itself) and
// stores from float, rounding to nearest even.
template <class T> __device__ __forceinline__ auto load(T x) {
  return kiln_load(x);
}
template <class T, class V> __device__ __forceinline__ void store(T *p, V x) {
  kiln_store(p, x);
}

// Calls f(i) for every i in [0, n), spread over all threads of the grid.
template <class F>
__device__ __forceinline__ void for_each(const launch_ctx &ctx, long long n,
                                         F &&f) {
  const long long stride = (long long)ctx.grid.x * ctx.block_dim.x;
  for (long long i = (long long)ctx.block.x * ctx.block_dim.x + ctx.thread.x;
       i < n; i += stride)
    f(i);
}

// Calls f(r) for every r in [0, n) in one block at a time (every thread of
// the block calls it with the same r, so f may use block_sum).
template <class F>
__device__ __forceinline__ void for_each_block(const launch_ctx &ctx,
                                               long long n, F &&f) {
  for (long long r = ctx.block.x; r < n; r += ctx.grid.x)
    f(r);
}

// The sum of `v` over the threads of the block, returned to every thread.
// All threads of the block must call it (it synchronises the block).
__device__ __forceinline__ float block_sum(const launch_ctx &ctx, float v) {
  __shared__ float partial[32];
  for (int offset = 16; offset > 0; offset /= 2)
    v += __shfl_xor_sync(0xffffffffu, v, offset);
  const unsigned lane = ctx.thread.x % 32, warp = ctx.thread.x / 32;
  const unsigned warps = (ctx.block_dim.x + 31) / 32;
  __syncthreads(); // an earlier call may still read `partial`
  if (lane == 0)
    partial[warp] = v;
  __syncthreads();
  float total = 0.0f;
  for (unsigned w = 0; w < warps; ++w)
    total += partial[w];
  return total;
}

// Element types a kernel may restrict itself to with a static_assert.
template <class T> struct is_float_storage {
  static constexpr bool value = false;
};
template <> struct is_float_storage<float> {
  static constexpr bool value = true;
};
template <> struct is_float_storage<__nv_bfloat16> {
  static constexpr bool value = true;
};
template <> struct is_float_storage<__half> {
  static constexpr bool value = true;
};

} // namespace custom
} // namespace kiln
