//===- reduce_row.cuh - a group of threads per contiguous row -------------===//
//
// The building blocks of row kernels (softmax, norms, losses, composed row
// reductions): GROUP threads own one row of M contiguous elements
// (reduce_layout.cuh says how many); a thread's elements stay in registers
// between the passes when they are at most 16, longer rows are re-read
// (from L2). With a vector width W > 1 each thread takes W consecutive
// elements per step, moved with 16-byte accesses when the row is aligned
// and one by one otherwise: the same elements per thread either way, so
// results do not depend on alignment.
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/prelude.cuh"
#include "kiln/reduce_common.cuh"
#include "kiln/reduce_layout.cuh"

namespace kiln {
namespace reduce {

// Rows of M elements, `Rows` of them, W elements per step; Idx indexes the
// largest tensor.
template <class Idx, long long Rows, long long M, int W = 1> struct row_config {
  using idx_t = Idx;
  static constexpr long long rows = Rows;
  static constexpr long long m = M;
  static constexpr int width = W;
  static constexpr int group = (int)row_group(M);
  static constexpr int steps = (int)row_steps(M, W, group);
  static constexpr bool cached = row_cached(M, W, group);
  static constexpr int rows_per_block = (int)rows_in_block(group);
  static constexpr int threads = group * rows_per_block;
  static constexpr long long blocks = ceil_div(Rows, rows_per_block);
  // Where row r begins and where its element j lies from there: rows are
  // contiguous here; a derived configuration may lay them out otherwise
  // (a channels-last group norm's rows are strided), with W = 1.
  static __device__ __forceinline__ Idx row_start(Idx r) {
    return r * (Idx)M;
  }
  static __device__ __forceinline__ Idx element(Idx j) { return j; }
};

// This thread's row and its lane in the row's group. Threads past the last
// row work on the last one (they still take part in the shuffles) but are
// not `active`: they store nothing.
template <class Cfg> struct row_position {
  using idx_t = typename Cfg::idx_t;
  int lid;
  idx_t row;
  bool active;

  __device__ __forceinline__ explicit row_position(const launch_ctx &ctx)
      : lid(ctx.thread.x % Cfg::group),
        row((idx_t)ctx.block.x * Cfg::rows_per_block +
            ctx.thread.x / Cfg::group) {
    active = row < (idx_t)Cfg::rows;
    if (!active)
      row = (idx_t)(Cfg::rows - 1);
  }
};

// V elements of a row input through the read-only (non-coherent) path, as
// the compiler loads a kernel's __restrict__ inputs; 16 bytes at a time
// (`src` aligned to the chunk).
template <int V, typename T>
__device__ __forceinline__ void load_vec_nc(T (&dst)[V], const T *src) {
  typedef kiln_vec_traits<V, T> traits;
#pragma unroll
  for (int k = 0; k < traits::bytes / traits::chunk; ++k)
    reinterpret_cast<typename traits::type *>(dst)[k] =
        __ldg(reinterpret_cast<const typename traits::type *>(src) + k);
}

// One [rows, M] input of storage type T: its row, and this thread's
// elements of it in f32 (all of them when cached, else one step's). Inputs
// are read only while the kernel runs (its parameters are __restrict__).
template <class Cfg, class T> struct row_input {
  using idx_t = typename Cfg::idx_t;
  static constexpr int W = Cfg::width;
  const T *row;
  float v[Cfg::cached ? Cfg::steps * W : W];

  __device__ __forceinline__ row_input(const T *base, idx_t r)
      : row(base + Cfg::row_start(r)) {}

  __device__ __forceinline__ bool aligned() const {
    return kiln_vec_aligned<W>(row);
  }

  // The W elements of the step at j0 into v[at, at + W).
  __device__ __forceinline__ void load_step(idx_t j0, bool aligned, int at) {
    if (aligned && j0 + W <= (idx_t)Cfg::m) {
      alignas(16) T t[W];
      load_vec_nc<W>(t, row + j0);
#pragma unroll
      for (int e = 0; e < W; ++e)
        v[at + e] = kiln_load(t[e]);
    } else {
#pragma unroll
      for (int e = 0; e < W; ++e)
        v[at + e] = j0 + e < (idx_t)Cfg::m ? kiln_load(__ldg(row + j0 + e)) : 0.f;
    }
  }

  // Reads this thread's elements into registers, when they are cached.
  __device__ __forceinline__ void cache(int lid, bool aligned = true) {
    if constexpr (Cfg::cached) {
#pragma unroll
      for (int k = 0; k < Cfg::steps; ++k) {
        if constexpr (W == 1) {
          const idx_t j = lid + (idx_t)k * Cfg::group;
          v[k] = j < (idx_t)Cfg::m ? kiln_load(__ldg(row + Cfg::element(j)))
                                   : 0.f;
        } else {
          load_step((lid + (idx_t)k * Cfg::group) * W, aligned, k * W);
        }
      }
    }
  }

  // The loads of the step at j0 of a row that is not cached.
  __device__ __forceinline__ void step(idx_t j0, bool aligned = true) {
    if constexpr (!Cfg::cached && W > 1)
      load_step(j0, aligned, 0);
  }

  // Element e of step k, at j.
  __device__ __forceinline__ float at(int k, int e, idx_t j) const {
    if constexpr (Cfg::cached)
      return v[k * W + e];
    else if constexpr (W == 1)
      return kiln_load(__ldg(row + Cfg::element(j)));
    else
      return v[e];
  }
};

// Whether every row is aligned for W-element vector access.
template <class... Inputs>
__device__ __forceinline__ bool all_aligned(const Inputs &...inputs) {
  return (true && ... && inputs.aligned());
}

struct no_step {
  template <class I> __device__ __forceinline__ void operator()(I) const {}
};

// Walks this thread's elements of the row: body(k, e, j) for element e of
// step k at j < M. With W > 1, begin(j0) runs before and end(j0) after each
// step of W elements starting at j0 (begin loads the step of rows that are
// not cached).
template <class Cfg, class Body, class Begin = no_step, class End = no_step>
__device__ __forceinline__ void row_loop(int lid, Body &&body,
                                         Begin &&begin = Begin(),
                                         End &&end = End()) {
  using idx_t = typename Cfg::idx_t;
  constexpr int W = Cfg::width;
  constexpr idx_t m = (idx_t)Cfg::m;
  if constexpr (W == 1 && Cfg::cached) {
#pragma unroll
    for (int k = 0; k < Cfg::steps; ++k) {
      const idx_t j = lid + (idx_t)k * Cfg::group;
      if (j < m)
        body(k, 0, j);
    }
  } else if constexpr (W == 1) {
    for (idx_t j = lid; j < m; j += Cfg::group)
      body(0, 0, j);
  } else if constexpr (Cfg::cached) {
#pragma unroll
    for (int k = 0; k < Cfg::steps; ++k) {
      const idx_t j0 = (lid + (idx_t)k * Cfg::group) * W;
      begin(j0);
#pragma unroll
      for (int e = 0; e < W; ++e) {
        const idx_t j = j0 + e;
        if (j < m)
          body(k, e, j);
      }
      end(j0);
    }
  } else {
    for (idx_t j0 = (idx_t)lid * W; j0 < m; j0 += Cfg::group * W) {
      begin(j0);
#pragma unroll
      for (int e = 0; e < W; ++e) {
        const idx_t j = j0 + e;
        if (j < m)
          body(0, e, j);
      }
      end(j0);
    }
  }
}

// Combines `v` over the row's threads; `scratch` holds 32 values of T.
template <class Cfg, class T, class Op>
__device__ __forceinline__ T row_reduce(const launch_ctx &ctx, T v, Op op,
                                        T identity, T *scratch) {
  return kiln_group_reduce<Cfg::group>(ctx, v, op, identity, scratch);
}

// Stores the W values of the step at j0 of row `row` of a [rows, M] output:
// 16 bytes at once when aligned, else one by one.
template <class Cfg, class T>
__device__ __forceinline__ void store_step(T *out, typename Cfg::idx_t row,
                                           typename Cfg::idx_t j0,
                                           const T (&values)[Cfg::width]) {
  using idx_t = typename Cfg::idx_t;
  constexpr int W = Cfg::width;
  T *at = out + row * (idx_t)Cfg::m + j0;
  if (kiln_vec_aligned<W>(out) && j0 + W <= (idx_t)Cfg::m) {
    kiln_store_vec<W>(at, values);
  } else {
    for (int e = 0; e < W && j0 + e < (idx_t)Cfg::m; ++e)
      at[e] = values[e];
  }
}

} // namespace reduce
} // namespace kiln
