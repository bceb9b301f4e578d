//===- resize_layout.cuh - where kiln.resize reads, on host and device ----===//
//
// The index arithmetic of kiln.resize, written once: the CPU reference
// (compiler/interpreter/ResizeEval.cpp), the forward gather the
// ScalarEmitter writes into element-wise kernels and the gradient's gather
// (resize.cuh) all call these functions, so they pick the same input
// elements bit for bit. Coordinates are computed in f64 with correctly
// rounded operations only: on the device through the _rn intrinsics, which
// the compiler never contracts into fused multiply-adds, so host and device
// round identically.
//
// Along one axis of `in` input and `out` output elements with scale `scale`,
// output index o maps to the input coordinate x(o) of ONNX Resize's
// coordinate transformations; nearest rounds x to an index, linear blends
// the two indices around x clamped to [0, in - 1]. Both maps are monotone
// in o, so the outputs that read input index i form one range, which the
// gradient finds by bisection.
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/host_device.cuh"

#ifndef __CUDACC__
#include <math.h>
#endif

namespace kiln {
namespace resize {

// The values of kiln's ResizeMode, ResizeCoordinates and ResizeRounding
// enums (KilnAttrs.td).
enum mode : int { nearest = 0, linear = 1 };
enum coordinates : int {
  half_pixel = 0,
  pytorch_half_pixel = 1,
  align_corners = 2,
  asymmetric = 3,
  half_pixel_symmetric = 4
};
enum rounding : int {
  round_prefer_floor = 0,
  round_prefer_ceil = 1,
  round_floor = 2,
  round_ceil = 3
};

// Resized axes of one op at most (trilinear).
constexpr int max_axes = 3;

// Correctly rounded f64 arithmetic that is never contracted.
__host__ __device__ __forceinline__ double add(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
__host__ __device__ __forceinline__ double mul(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
__host__ __device__ __forceinline__ double quotient(double a, double b) {
#ifdef __CUDA_ARCH__
  return __ddiv_rn(a, b);
#else
  return a / b;
#endif
}
__host__ __device__ __forceinline__ double floor_of(double x) {
  return ::floor(x);
}

// Kept out of line on the device: its f64 divisions are subroutine calls,
// around which ptxas keeps the gather loops' registers on the stack when
// they are inlined there.
#ifdef __CUDACC__
#define KILN_RESIZE_OUT_OF_LINE __noinline__
#else
#define KILN_RESIZE_OUT_OF_LINE inline
#endif

// The input coordinate output index o reads.
__host__ __device__ KILN_RESIZE_OUT_OF_LINE double source(int coords,
                                                          long long o,
                                                          long long in,
                                                          long long out,
                                                          double scale) {
  const double x = (double)o;
  switch (coords) {
  case pytorch_half_pixel:
    if (out <= 1)
      return 0.0;
    return add(quotient(add(x, 0.5), scale), -0.5);
  case align_corners:
    if (out <= 1)
      return 0.0;
    return quotient(mul(x, (double)(in - 1)), (double)(out - 1));
  case asymmetric:
    return quotient(x, scale);
  case half_pixel_symmetric: {
    const double adjustment = quotient((double)out, mul((double)in, scale));
    const double offset = mul(mul((double)in, 0.5), add(1.0, -adjustment));
    return add(offset, add(quotient(add(x, 0.5), scale), -0.5));
  }
  default: // half_pixel
    return add(quotient(add(x, 0.5), scale), -0.5);
  }
}

__host__ __device__ __forceinline__ long long clamp_index(double v,
                                                          long long in) {
  if (v < 0.0)
    return 0;
  if (v > (double)(in - 1))
    return in - 1;
  return (long long)v;
}

// The input index nearest mode reads for output o.
__host__ __device__ __forceinline__ long long
nearest_index(int coords, int round, long long o, long long in, long long out,
              double scale) {
  const double x = source(coords, o, in, out, scale);
  const double f = floor_of(x);
  const double fraction = add(x, -f); // exact
  double r = f;
  switch (round) {
  case round_floor:
    break;
  case round_ceil:
    r = fraction > 0.0 ? add(f, 1.0) : f;
    break;
  case round_prefer_ceil:
    r = fraction >= 0.5 ? add(f, 1.0) : f;
    break;
  default: // round_prefer_floor
    r = fraction > 0.5 ? add(f, 1.0) : f;
    break;
  }
  return clamp_index(r, in);
}

// The two input indices linear mode blends for one output and the weight
// of the second: value = (1 - w1) * x[i0] + w1 * x[i1].
struct linear_tap {
  long long i0, i1;
  double w1;
};

__host__ __device__ __forceinline__ linear_tap linear_taps(int coords,
                                                           long long o,
                                                           long long in,
                                                           long long out,
                                                           double scale) {
  double x = source(coords, o, in, out, scale);
  const double last = (double)(in - 1);
  x = x < 0.0 ? 0.0 : x > last ? last : x;
  const double f = floor_of(x);
  linear_tap t;
  t.i0 = (long long)f;
  t.i1 = t.i0 + 1 < in ? t.i0 + 1 : in - 1;
  t.w1 = add(x, -f);
  return t;
}

// One resized axis: sizes, scale and the op's mode.
struct axis {
  long long in, out;
  double scale;
  int mode, coords, round;
};

// The lowest and highest input index output o reads.
__host__ __device__ __forceinline__ void reads(const axis &a, long long o,
                                               long long &lo, long long &hi) {
  if (a.mode == nearest) {
    lo = hi = nearest_index(a.coords, a.round, o, a.in, a.out, a.scale);
    return;
  }
  const linear_tap t = linear_taps(a.coords, o, a.in, a.out, a.scale);
  lo = t.i0;
  hi = t.i1;
}

// The outputs [first, last] that read input index i (empty when last <
// first): the least o whose highest index reaches i and the greatest whose
// lowest index does not pass it.
struct output_range {
  long long first, last;
};

__host__ __device__ __forceinline__ output_range outputs_reading(const axis &a,
                                                                 long long i) {
  long long lo = 0, hi = 0;
  long long begin = 0, end = a.out; // least o with highest(o) >= i
  while (begin < end) {
    const long long mid = begin + (end - begin) / 2;
    reads(a, mid, lo, hi);
    if (hi >= i)
      end = mid;
    else
      begin = mid + 1;
  }
  output_range r;
  r.first = begin;
  begin = 0;
  end = a.out; // least o with lowest(o) > i
  while (begin < end) {
    const long long mid = begin + (end - begin) / 2;
    reads(a, mid, lo, hi);
    if (lo > i)
      end = mid;
    else
      begin = mid + 1;
  }
  r.last = begin - 1;
  return r;
}

// The weight with which output o reads input index i (0 when it does not).
__host__ __device__ __forceinline__ double weight(const axis &a, long long o,
                                                  long long i) {
  if (a.mode == nearest)
    return nearest_index(a.coords, a.round, o, a.in, a.out, a.scale) == i
               ? 1.0
               : 0.0;
  const linear_tap t = linear_taps(a.coords, o, a.in, a.out, a.scale);
  double w = 0.0;
  if (t.i0 == i)
    w = add(w, add(1.0, -t.w1));
  if (t.i1 == i)
    w = add(w, t.w1);
  return w;
}

} // namespace resize
} // namespace kiln
