//===- pool.cuh - max and average pooling and their gradients -------------===//
//
// Grid-stride kernels of one work item per thread, in the memory order of
// the tensor they write, so that writes are coalesced: an output element
// for the forward ops, an input element for the gradients. With NHWC a work
// item is `vec` consecutive channels, moved with 16-byte accesses when every
// pointer is aligned and one by one otherwise (the same arithmetic either
// way). Values are computed in f32 and rounded once on store.
//
// The semantics are the CPU reference's (compiler/interpreter/NNConvEval.cpp):
// each window is clipped to the input and visited row by row; the maximum is
// the first largest element, or the first NaN; the average divides by the
// elements inside the input, or by kh*kw with count_include_pad. The
// gradients gather instead of scattering, so that no atomics are needed and
// results do not depend on scheduling: each input element adds the
// gradients of the windows that hold it (that chose it, for max pooling) in
// increasing output order, as the reference's loop adds them.
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/pool_layout.cuh"
#include "kiln/prelude.cuh"

namespace kiln {
namespace pool {

// One pooling: input [N, C, H, W] (NHWC: [N, H, W, C]), output of OH x OW
// positions, window KH x KW with strides SH, SW and front padding Top, Left;
// Vec channels per work item; IncludePad for average pooling's divisor.
template <class Idx, bool Nhwc, long long N, long long C, long long H,
          long long W, long long OH, long long OW, long long KH, long long KW,
          long long SH, long long SW, long long Top, long long Left, int Vec,
          bool IncludePad>
struct config {
  typedef Idx idx_t;
  static constexpr bool nhwc = Nhwc;
  static constexpr Idx n = N, c = C, h = H, w = W, oh = OH, ow = OW;
  static constexpr Idx kh = KH, kw = KW, sh = SH, sw = SW, top = Top,
                       left = Left;
  static constexpr int vec = Vec;
  static constexpr bool include_pad = IncludePad;
  // Element strides of a channel, a row and a column of the input and the
  // output (the batch strides are c times a channel plane).
  static constexpr Idx in_c = Nhwc ? 1 : H * W, in_h = Nhwc ? W * C : W,
                       in_w = Nhwc ? C : 1, in_n = C * H * W;
  static constexpr Idx out_c = Nhwc ? 1 : OH * OW, out_h = Nhwc ? OW * C : OW,
                       out_w = Nhwc ? C : 1, out_n = C * OH * OW;
  static_assert(Vec == 1 || Vec == 2 || Vec == 4 || Vec == 8,
                "a work item is 1, 2, 4 or 8 channels");
  static_assert(Vec == 1 || (Nhwc && C % Vec == 0),
                "channel vectors need NHWC and C divisible by them");
  static_assert(2 * Top <= KH && 2 * Left <= KW,
                "padding of at most half the window: no window is empty");
  static_assert(OH >= output_size(H, KH, SH, Top, 0) &&
                    OH <= output_size(H, KH, SH, Top, KH / 2) &&
                    OW >= output_size(W, KW, SW, Left, 0) &&
                    OW <= output_size(W, KW, SW, Left, KW / 2),
                "the output size of a back padding of at most half the window");
};

// The position of a work item of a [n, c, Rows, Cols] tensor in its memory
// order (channels in groups of vec): batch, first channel, row and column.
template <class Cfg> struct item {
  typename Cfg::idx_t n, c, y, x;
};

template <class Cfg, long long Rows, long long Cols>
__device__ __forceinline__ item<Cfg> decode(typename Cfg::idx_t t) {
  typedef typename Cfg::idx_t idx_t;
  item<Cfg> it;
  if constexpr (Cfg::nhwc) {
    constexpr idx_t groups = Cfg::c / Cfg::vec;
    it.c = (t % groups) * Cfg::vec;
    t /= groups;
    it.x = t % (idx_t)Cols;
    t /= (idx_t)Cols;
    it.y = t % (idx_t)Rows;
    it.n = t / (idx_t)Rows;
  } else {
    it.x = t % (idx_t)Cols;
    t /= (idx_t)Cols;
    it.y = t % (idx_t)Rows;
    t /= (idx_t)Rows;
    it.c = t % Cfg::c;
    it.n = t / Cfg::c;
  }
  return it;
}

// The input span of output (oy, ox), clipped to the input.
template <class Cfg> struct window {
  typedef typename Cfg::idx_t idx_t;
  idx_t y0, y1, x0, x1;
  __device__ __forceinline__ window(idx_t oy, idx_t ox)
      : y0(window_begin<idx_t>(oy, Cfg::sh, Cfg::top)),
        y1(window_end<idx_t>(oy, Cfg::kh, Cfg::sh, Cfg::top, Cfg::h)),
        x0(window_begin<idx_t>(ox, Cfg::sw, Cfg::left)),
        x1(window_end<idx_t>(ox, Cfg::kw, Cfg::sw, Cfg::left, Cfg::w)) {}
  // Average pooling's divisor.
  __device__ __forceinline__ float divisor() const {
    return Cfg::include_pad ? (float)(Cfg::kh * Cfg::kw)
                            : (float)((y1 - y0) * (x1 - x0));
  }
};

// V lanes at p, as compute values.
template <int V, class T, class D>
__device__ __forceinline__ void load_lanes(D (&dst)[V], const T *p,
                                           bool aligned) {
  if constexpr (V > 1) {
    if (aligned) {
      alignas(16) T raw[V];
      kiln_load_vec<V>(raw, p);
#pragma unroll
      for (int k = 0; k < V; ++k)
        dst[k] = kiln_load(raw[k]);
      return;
    }
  }
#pragma unroll
  for (int k = 0; k < V; ++k)
    dst[k] = kiln_load(p[k]);
}

template <int V, class T, class D>
__device__ __forceinline__ void store_lanes(T *p, const D (&src)[V],
                                            bool aligned) {
  if constexpr (V > 1) {
    if (aligned) {
      alignas(16) T raw[V];
#pragma unroll
      for (int k = 0; k < V; ++k)
        kiln_store(&raw[k], src[k]);
      kiln_store_vec<V>(p, raw);
      return;
    }
  }
#pragma unroll
  for (int k = 0; k < V; ++k)
    kiln_store(p + k, src[k]);
}

template <int V, class... T>
__device__ __forceinline__ bool lanes_aligned(const T *...p) {
  if constexpr (V == 1)
    return true;
  else
    return (kiln_vec_aligned<V>(p) && ...);
}

// x / d for a window's element count d (a small positive integer), as
// div.rn.f32 rounds it save where the exact quotient lies within about 2^-21
// ulp of a rounding boundary: an approximate quotient corrected by its exact
// (FMA) residual. div.rn.f32 would call a slow-path subroutine, and around
// that call ptxas keeps registers of the gather loops on the stack.
__device__ __forceinline__ float divide_by_count(float x, float d) {
  const float q = __fdividef(x, d);
  return isfinite(q) ? q + __fdividef(fmaf(-q, d, x), d) : q;
}

// Whether v replaces the window's maximum so far: a larger value, or the
// first NaN (which then stays), as the reference decides.
__device__ __forceinline__ bool takes_max(float v, float best) {
  return v > best || (v != v && best == best);
}

// The maximum of window `win` of the channel planes at `base`, per lane,
// and where it is (row * W + column).
template <class Cfg, class T>
__device__ __forceinline__ void
window_max(const T *base, const window<Cfg> &win, bool aligned,
           float (&best)[Cfg::vec], typename Cfg::idx_t (&at)[Cfg::vec]) {
  typedef typename Cfg::idx_t idx_t;
  constexpr int V = Cfg::vec;
  load_lanes<V>(best, base + win.y0 * Cfg::in_h + win.x0 * Cfg::in_w, aligned);
#pragma unroll
  for (int k = 0; k < V; ++k)
    at[k] = win.y0 * Cfg::w + win.x0;
  for (idx_t iy = win.y0; iy < win.y1; ++iy)
    for (idx_t ix = win.x0; ix < win.x1; ++ix) {
      float v[V];
      load_lanes<V>(v, base + iy * Cfg::in_h + ix * Cfg::in_w, aligned);
#pragma unroll
      for (int k = 0; k < V; ++k)
        if (takes_max(v[k], best[k])) {
          best[k] = v[k];
          at[k] = iy * Cfg::w + ix;
        }
    }
}

// The work items [first, items) of this thread in a grid-stride loop.
template <class Cfg, class F>
__device__ __forceinline__ void grid_stride(const launch_ctx &ctx,
                                            typename Cfg::idx_t items, F &&f) {
  typedef typename Cfg::idx_t idx_t;
  const idx_t stride = (idx_t)ctx.grid.x * ctx.block_dim.x;
  for (idx_t t = (idx_t)ctx.block.x * ctx.block_dim.x + ctx.thread.x;
       t < items; t += stride)
    f(t);
}

// y = max_pool2d(x).
template <class Cfg, class T, class O>
__device__ __forceinline__ void max_pool_forward(const launch_ctx &ctx,
                                                 const T *__restrict__ x,
                                                 O *__restrict__ y) {
  typedef typename Cfg::idx_t idx_t;
  constexpr int V = Cfg::vec;
  const bool aligned = lanes_aligned<V>(x, y);
  constexpr idx_t items = Cfg::n * Cfg::c * Cfg::oh * Cfg::ow / V;
  grid_stride<Cfg>(ctx, items, [&](idx_t t) {
    const item<Cfg> o = decode<Cfg, Cfg::oh, Cfg::ow>(t);
    float best[V];
    idx_t at[V];
    window_max<Cfg>(x + o.n * Cfg::in_n + o.c * Cfg::in_c,
                    window<Cfg>(o.y, o.x), aligned, best, at);
    store_lanes<V>(y + t * V, best, aligned);
  });
}

// Where the maximum of each window of x is (row * W + column of its
// channel plane), laid out as max_pool2d's result: what
// max_pool_backward_indexed reads.
template <class Cfg, class T>
__device__ __forceinline__ void max_pool_argmax(const launch_ctx &ctx,
                                                const T *__restrict__ x,
                                                int *__restrict__ argmax) {
  typedef typename Cfg::idx_t idx_t;
  constexpr int V = Cfg::vec;
  const bool aligned = lanes_aligned<V>(x, argmax);
  constexpr idx_t items = Cfg::n * Cfg::c * Cfg::oh * Cfg::ow / V;
  grid_stride<Cfg>(ctx, items, [&](idx_t t) {
    const item<Cfg> o = decode<Cfg, Cfg::oh, Cfg::ow>(t);
    float best[V];
    idx_t at[V];
    window_max<Cfg>(x + o.n * Cfg::in_n + o.c * Cfg::in_c,
                    window<Cfg>(o.y, o.x), aligned, best, at);
    int where[V];
#pragma unroll
    for (int k = 0; k < V; ++k)
      where[k] = (int)at[k];
    store_lanes<V>(argmax + t * V, where, aligned);
  });
}

// Calls f(oy, ox) for every output whose window holds input (iy, ix), in
// increasing order.
template <class Cfg, class F>
__device__ __forceinline__ void for_each_window_of(typename Cfg::idx_t iy,
                                                   typename Cfg::idx_t ix,
                                                   F &&f) {
  typedef typename Cfg::idx_t idx_t;
  const idx_t oy1 = last_window<idx_t>(iy, Cfg::sh, Cfg::top, Cfg::oh);
  const idx_t ox0 = first_window<idx_t>(ix, Cfg::kw, Cfg::sw, Cfg::left);
  const idx_t ox1 = last_window<idx_t>(ix, Cfg::sw, Cfg::left, Cfg::ow);
  for (idx_t oy = first_window<idx_t>(iy, Cfg::kh, Cfg::sh, Cfg::top);
       oy <= oy1; ++oy)
    for (idx_t ox = ox0; ox <= ox1; ++ox)
      f(oy, ox);
}

// dx = max_pool2d_backward(grad, x), recomputing the argmax of each window
// that holds the element.
template <class Cfg, class G, class T, class O>
__device__ __forceinline__ void
max_pool_backward(const launch_ctx &ctx, const G *__restrict__ grad,
                  const T *__restrict__ x, O *__restrict__ dx) {
  typedef typename Cfg::idx_t idx_t;
  constexpr int V = Cfg::vec;
  const bool aligned = lanes_aligned<V>(grad, x, dx);
  constexpr idx_t items = Cfg::n * Cfg::c * Cfg::h * Cfg::w / V;
  grid_stride<Cfg>(ctx, items, [&](idx_t t) {
    const item<Cfg> i = decode<Cfg, Cfg::h, Cfg::w>(t);
    const T *planes = x + i.n * Cfg::in_n + i.c * Cfg::in_c;
    const G *g = grad + i.n * Cfg::out_n + i.c * Cfg::out_c;
    const idx_t self = i.y * Cfg::w + i.x;
    float acc[V];
#pragma unroll
    for (int k = 0; k < V; ++k)
      acc[k] = 0.f;
    for_each_window_of<Cfg>(i.y, i.x, [&](idx_t oy, idx_t ox) {
      float best[V];
      idx_t at[V];
      window_max<Cfg>(planes, window<Cfg>(oy, ox), aligned, best, at);
      bool chosen = false;
#pragma unroll
      for (int k = 0; k < V; ++k)
        chosen |= at[k] == self;
      if (!chosen)
        return;
      float gv[V];
      load_lanes<V>(gv, g + oy * Cfg::out_h + ox * Cfg::out_w, aligned);
#pragma unroll
      for (int k = 0; k < V; ++k)
        if (at[k] == self)
          acc[k] += gv[k];
    });
    store_lanes<V>(dx + t * V, acc, aligned);
  });
}

// dx = max_pool2d_backward(grad, x) from the argmax max_pool_argmax left.
template <class Cfg, class G, class O>
__device__ __forceinline__ void
max_pool_backward_indexed(const launch_ctx &ctx, const G *__restrict__ grad,
                          const int *__restrict__ argmax,
                          O *__restrict__ dx) {
  typedef typename Cfg::idx_t idx_t;
  constexpr int V = Cfg::vec;
  const bool aligned = lanes_aligned<V>(grad, argmax, dx);
  constexpr idx_t items = Cfg::n * Cfg::c * Cfg::h * Cfg::w / V;
  grid_stride<Cfg>(ctx, items, [&](idx_t t) {
    const item<Cfg> i = decode<Cfg, Cfg::h, Cfg::w>(t);
    const idx_t planes = i.n * Cfg::out_n + i.c * Cfg::out_c;
    const int self = (int)(i.y * Cfg::w + i.x);
    float acc[V];
#pragma unroll
    for (int k = 0; k < V; ++k)
      acc[k] = 0.f;
    for_each_window_of<Cfg>(i.y, i.x, [&](idx_t oy, idx_t ox) {
      const idx_t o = planes + oy * Cfg::out_h + ox * Cfg::out_w;
      int at[V];
      load_lanes<V>(at, argmax + o, aligned);
      bool chosen = false;
#pragma unroll
      for (int k = 0; k < V; ++k)
        chosen |= at[k] == self;
      if (!chosen)
        return;
      float gv[V];
      load_lanes<V>(gv, grad + o, aligned);
#pragma unroll
      for (int k = 0; k < V; ++k)
        if (at[k] == self)
          acc[k] += gv[k];
    });
    store_lanes<V>(dx + t * V, acc, aligned);
  });
}

// y = avg_pool2d(x).
template <class Cfg, class T, class O>
__device__ __forceinline__ void avg_pool_forward(const launch_ctx &ctx,
                                                 const T *__restrict__ x,
                                                 O *__restrict__ y) {
  typedef typename Cfg::idx_t idx_t;
  constexpr int V = Cfg::vec;
  const bool aligned = lanes_aligned<V>(x, y);
  constexpr idx_t items = Cfg::n * Cfg::c * Cfg::oh * Cfg::ow / V;
  grid_stride<Cfg>(ctx, items, [&](idx_t t) {
    const item<Cfg> o = decode<Cfg, Cfg::oh, Cfg::ow>(t);
    const T *base = x + o.n * Cfg::in_n + o.c * Cfg::in_c;
    const window<Cfg> win(o.y, o.x);
    float sum[V];
#pragma unroll
    for (int k = 0; k < V; ++k)
      sum[k] = 0.f;
    for (idx_t iy = win.y0; iy < win.y1; ++iy)
      for (idx_t ix = win.x0; ix < win.x1; ++ix) {
        float v[V];
        load_lanes<V>(v, base + iy * Cfg::in_h + ix * Cfg::in_w, aligned);
#pragma unroll
        for (int k = 0; k < V; ++k)
          sum[k] += v[k];
      }
    const float divisor = win.divisor();
#pragma unroll
    for (int k = 0; k < V; ++k)
      sum[k] = divide_by_count(sum[k], divisor);
    store_lanes<V>(y + t * V, sum, aligned);
  });
}

// dx = avg_pool2d_backward(grad): each window's gradient over its divisor,
// added over the windows that hold the element.
template <class Cfg, class G, class O>
__device__ __forceinline__ void avg_pool_backward(const launch_ctx &ctx,
                                                  const G *__restrict__ grad,
                                                  O *__restrict__ dx) {
  typedef typename Cfg::idx_t idx_t;
  constexpr int V = Cfg::vec;
  const bool aligned = lanes_aligned<V>(grad, dx);
  constexpr idx_t items = Cfg::n * Cfg::c * Cfg::h * Cfg::w / V;
  grid_stride<Cfg>(ctx, items, [&](idx_t t) {
    const item<Cfg> i = decode<Cfg, Cfg::h, Cfg::w>(t);
    const G *g = grad + i.n * Cfg::out_n + i.c * Cfg::out_c;
    float acc[V];
#pragma unroll
    for (int k = 0; k < V; ++k)
      acc[k] = 0.f;
    for_each_window_of<Cfg>(i.y, i.x, [&](idx_t oy, idx_t ox) {
      const float divisor = window<Cfg>(oy, ox).divisor();
      float gv[V];
      load_lanes<V>(gv, g + oy * Cfg::out_h + ox * Cfg::out_w, aligned);
#pragma unroll
      for (int k = 0; k < V; ++k)
        acc[k] += divide_by_count(gv[k], divisor);
    });
    store_lanes<V>(dx + t * V, acc, aligned);
  });
}

} // namespace pool
} // namespace kiln
