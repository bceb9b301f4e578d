//===- resize.cuh - the gradient of kiln.resize ---------------------------===//
//
// A grid-stride kernel of one input element per thread, in memory order (the
// gradient it writes is coalesced). Along each resized axis the outputs that
// read the element form one range (resize_layout.cuh's outputs_reading); the
// thread adds their gradients times the weights they read it with, in
// increasing output order: a gather, so no atomics and the same bits on
// every run. The forward resize is a gather the ScalarEmitter writes into
// element-wise kernels from the same index functions.
//
// The tensor is viewed as [A, R0, B, R1, C, R2, D]: up to three resized
// axes Rk (in_k input and out_k output elements) between the products of
// the dims that are not resized; an axis left over has one element.
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/prelude.cuh"
#include "kiln/resize_layout.cuh"

namespace kiln {
namespace resize {

// The view and the op's modes; a derived struct adds the scales (`scale0`,
// `scale1`, `scale2`, doubles, which cannot be template arguments).
template <class Idx, int Mode, int Coords, int Round, long long A,
          long long In0, long long Out0, long long B, long long In1,
          long long Out1, long long C, long long In2, long long Out2,
          long long D>
struct config {
  typedef Idx idx_t;
  static constexpr int mode = Mode, coords = Coords, round = Round;
  static constexpr long long a = A, b = B, c = C, d = D;
  static constexpr long long in0 = In0, in1 = In1, in2 = In2;
  static constexpr long long out0 = Out0, out1 = Out1, out2 = Out2;
  static constexpr long long in_elements = A * In0 * B * In1 * C * In2 * D;
};

// Resized axis K of the configuration.
template <class Cfg, int K> __device__ __forceinline__ axis axis_of() {
  if constexpr (K == 0)
    return axis{Cfg::in0, Cfg::out0, Cfg::scale0, Cfg::mode, Cfg::coords,
                Cfg::round};
  else if constexpr (K == 1)
    return axis{Cfg::in1, Cfg::out1, Cfg::scale1, Cfg::mode, Cfg::coords,
                Cfg::round};
  else
    return axis{Cfg::in2, Cfg::out2, Cfg::scale2, Cfg::mode, Cfg::coords,
                Cfg::round};
}

// Whether axis K is resized (an axis of one element on both sides reads
// itself with weight 1 under every mode).
template <class Cfg, int K> __device__ __forceinline__ constexpr bool used() {
  if constexpr (K == 0)
    return Cfg::in0 != 1 || Cfg::out0 != 1;
  else if constexpr (K == 1)
    return Cfg::in1 != 1 || Cfg::out1 != 1;
  else
    return Cfg::in2 != 1 || Cfg::out2 != 1;
}

// The outputs along axis K that read input index i.
template <class Cfg, int K>
__device__ __forceinline__ output_range outputs_of(long long i) {
  if constexpr (used<Cfg, K>())
    return outputs_reading(axis_of<Cfg, K>(), i);
  else
    return output_range{0, 0};
}

// The weight with which output o along axis K reads input index i.
template <class Cfg, int K>
__device__ __forceinline__ float weight_of(long long o, long long i) {
  if constexpr (used<Cfg, K>())
    return (float)weight(axis_of<Cfg, K>(), o, i);
  else
    return 1.0f;
}

// dx = the gradient of resize(x) for `grad`, the gradient of its result.
template <class Cfg, class G, class O>
__device__ __forceinline__ void backward(const launch_ctx &ctx,
                                         const G *__restrict__ grad,
                                         O *__restrict__ dx) {
  typedef typename Cfg::idx_t idx_t;
  const idx_t stride = (idx_t)ctx.grid.x * ctx.block_dim.x;
  for (idx_t t = (idx_t)ctx.block.x * ctx.block_dim.x + ctx.thread.x;
       t < (idx_t)Cfg::in_elements; t += stride) {
    idx_t r = t;
    const idx_t d = r % (idx_t)Cfg::d;
    r /= (idx_t)Cfg::d;
    const idx_t i2 = r % (idx_t)Cfg::in2;
    r /= (idx_t)Cfg::in2;
    const idx_t c = r % (idx_t)Cfg::c;
    r /= (idx_t)Cfg::c;
    const idx_t i1 = r % (idx_t)Cfg::in1;
    r /= (idx_t)Cfg::in1;
    const idx_t b = r % (idx_t)Cfg::b;
    r /= (idx_t)Cfg::b;
    const idx_t i0 = r % (idx_t)Cfg::in0;
    const idx_t a = r / (idx_t)Cfg::in0;
    const output_range r0 = outputs_of<Cfg, 0>(i0);
    const output_range r1 = outputs_of<Cfg, 1>(i1);
    const output_range r2 = outputs_of<Cfg, 2>(i2);
    float acc = 0.f;
    for (idx_t o0 = (idx_t)r0.first; o0 <= (idx_t)r0.last; ++o0) {
      const float w0 = weight_of<Cfg, 0>(o0, i0);
      const idx_t base0 = (a * (idx_t)Cfg::out0 + o0) * (idx_t)Cfg::b + b;
      for (idx_t o1 = (idx_t)r1.first; o1 <= (idx_t)r1.last; ++o1) {
        const float w01 = w0 * weight_of<Cfg, 1>(o1, i1);
        const idx_t base1 =
            ((base0 * (idx_t)Cfg::out1 + o1) * (idx_t)Cfg::c + c) *
            (idx_t)Cfg::out2;
        for (idx_t o2 = (idx_t)r2.first; o2 <= (idx_t)r2.last; ++o2) {
          const float w = w01 * weight_of<Cfg, 2>(o2, i2);
          acc += w * kiln_load(grad[(base1 + o2) * (idx_t)Cfg::d + d]);
        }
      }
    }
    kiln_store(dx + t, acc);
  }
}

} // namespace resize
} // namespace kiln
