//===- pointwise.cuh - the grid-stride loop of pointwise kernels ----------===//
//
// One thread per root element (or per `width` consecutive root elements) in
// a grid-stride loop over the blocks a group of results owns. What is
// computed comes from a functor the planner generates (PointwiseFunctors.cpp):
//
//   struct group {
//     typedef kiln::pointwise::config<Index, Elements, Width> config;
//     <the tensors it reads and writes: pointer members>
//     struct scalars;                       // values with one element
//     scalars prologue() const;             // computed once per thread
//     void element(const scalars &, Index idx) const;
//     // With Width > 1, the vector path:
//     template <int V> struct lanes;        // registers of V elements
//     template <int V, class F> void inputs(F &&) const;  // f(&lanes<V>::x, x)
//     // f(&lanes<V>::x_pair, x, D): inputs a rope rotates, rows of D
//     template <int V, class F> void partners(F &&) const;
//     template <int V, class F> void results(F &&) const; // for each tensor
//     template <int V>
//     void lane(const scalars &, lanes<V> &, int v, Index idx) const;
//   };
//
// element() computes and stores everything at root element idx (results
// smaller than the root only where their broadcast coordinates are 0).
// When every tensor is read and written element for element, Width > 1 and
// every pointer is aligned to its chunk at run time, each step moves Width
// elements of every tensor with 16-byte accesses and lane() computes them in
// registers; a scalar loop does the rest (everything when a pointer is not
// aligned). An input that a rope rotates also has its step's rotation
// partners loaded: the V elements D/2 further along its row of D, or D/2
// back in the row's second half (V divides D/2, so a step never straddles
// the halves).
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/pointwise_layout.cuh"
#include "kiln/prelude.cuh"

namespace kiln {
namespace pointwise {

// The configuration of one group: the index type (int unless a tensor needs
// 64 bits), the root's element count and the elements per vector step.
template <typename Index, long long Elements, int Width> struct config {
  typedef Index index;
  static constexpr Index elements = (Index)Elements;
  static constexpr int width = Width;
  static_assert(Width == 1 || Width == 2 || Width == 4 || Width == 8,
                "a vector step moves 1, 2, 4 or 8 elements");
  static_assert(Width == 1 || Elements >= 2 * Width,
                "vector steps need two steps of elements (vector_width)");
};

// What the vector path does with each tensor a group lists: f(&lanes::x, x)
// for the registers and the pointer of tensor x.
template <int V> struct check_aligned {
  bool &aligned;
  template <class Regs, class T>
  __device__ __forceinline__ void operator()(Regs, const T *p) const {
    aligned = aligned && kiln_vec_aligned<V>(p);
  }
};
template <int V, class Lanes, class Index> struct load_lanes {
  Lanes &lanes;
  Index base;
  template <class Regs, class T>
  __device__ __forceinline__ void operator()(Regs regs, const T *p) const {
    kiln_load_vec<V>(lanes.*regs, p + base);
  }
};
template <int V, class Lanes, class Index> struct load_partner_lanes {
  Lanes &lanes;
  Index base;
  template <class Regs, class T>
  __device__ __forceinline__ void operator()(Regs regs, const T *p,
                                             Index row) const {
    const Index half = row / 2;
    kiln_load_vec<V>(lanes.*regs, p + base + (base % row < half ? half : -half));
  }
};
template <int V, class Lanes, class Index> struct store_lanes {
  const Lanes &lanes;
  Index base;
  template <class Regs, class T>
  __device__ __forceinline__ void operator()(Regs regs, T *p) const {
    kiln_store_vec<V>(p + base, lanes.*regs);
  }
};

// Runs `group` on block `block` of the `blocks` blocks it owns; the thread
// is ctx.thread.x of ctx.block_dim.x.
template <class Group>
__device__ __forceinline__ void grid_stride(const launch_ctx &ctx,
                                            unsigned block, unsigned blocks,
                                            const Group &group) {
  typedef typename Group::config config;
  typedef typename config::index index;
  const typename Group::scalars s = group.prologue();
  const index n = config::elements;
  const index first = (index)block * ctx.block_dim.x + ctx.thread.x;
  const index stride = (index)blocks * ctx.block_dim.x;
  index scalar_first = first;
  if constexpr (config::width > 1) {
    constexpr int V = config::width;
    typedef typename Group::template lanes<V> lanes;
    bool aligned = true;
    group.template inputs<V>(check_aligned<V>{aligned});
    group.template results<V>(check_aligned<V>{aligned});
    const index vectors = aligned ? n / V : 0;
    for (index c = first; c < vectors; c += stride) {
      const index base = c * V;
      lanes l;
      group.template inputs<V>(load_lanes<V, lanes, index>{l, base});
      group.template partners<V>(load_partner_lanes<V, lanes, index>{l, base});
#pragma unroll
      for (int v = 0; v < V; ++v)
        group.lane(s, l, v, base + v);
      group.template results<V>(store_lanes<V, lanes, index>{l, base});
    }
    scalar_first = vectors * V + first;
  }
  for (index idx = scalar_first; idx < n; idx += stride)
    group.element(s, idx);
}

// A kernel of one group: every block of the launch is the group's.
template <class Group>
__device__ __forceinline__ void run(const launch_ctx &ctx, const Group &group) {
  grid_stride(ctx, ctx.block.x, ctx.grid.x, group);
}

} // namespace pointwise
} // namespace kiln
