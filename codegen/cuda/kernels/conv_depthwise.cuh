//===- conv_depthwise.cuh - depthwise convolutions, direct ---------------===//
//
// A depthwise convolution (GROUPS = C = O: one filter window per channel)
// gives an implicit GEMM one output column per group, so it runs as
// direct kernels instead: one thread per output element of the pass, each
// summing its channel's KH x KW window in f32 (no tensor cores: a window is
// a few multiply-adds per loaded element), with consecutive threads on
// consecutive elements of the layout so that loads and stores coalesce.
//
//  - forward: y at (n, c, oh, ow) from x's window and the channel's filter;
//  - backward input: dx at (n, c, ih, iw) gathered from the dy elements
//    whose windows cover it (no atomics);
//  - backward filter: the sum over every output pixel of dy * x per
//    (channel, tap), in two kernels: blocks sum fixed slices of
//    depthwise_filter_pixels pixels into f32 partials (scratch), then a
//    second kernel adds the slices in order (deterministic).
//
// Cfg: the geometry of conv_layout.cuh with `element` and `index`. Params:
// `a` and `b` as the implicit GEMM reads them (forward: x and w in nhwc,
// w and x in nchw; backward input: dy and w / w and dy; backward filter: dy
// and x) and `float *scratch`. Epi stores at (group, row, column) as
// conv_igemm.cuh's: with one channel per group, group is the channel and
// the pixel is the row (nhwc) or the column (nchw) of the pass's output;
// the filter gradient's column is the tap.
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/conv_layout.cuh"
#include "kiln/gemm_common.cuh"

namespace kiln {
namespace conv {

template <class Cfg> struct depthwise_shape {
  typedef typename Cfg::index idx;
  static constexpr idx IN = (idx)Cfg::N * Cfg::C * Cfg::H * Cfg::W;
  static constexpr idx OUT = (idx)Cfg::N * Cfg::C * Cfg::OH * Cfg::OW;
  static constexpr int TAPS = Cfg::KH * Cfg::KW;
  static constexpr idx OUT_PIXELS = (idx)Cfg::N * Cfg::OH * Cfg::OW;
  static constexpr idx SLICES =
      (OUT_PIXELS + depthwise_filter_pixels - 1) / depthwise_filter_pixels;
  // The filter gradient's blocks: CB channels by 256 / CB slices.
  static constexpr idx CB = depthwise_channel_block(Cfg::C);
  static constexpr idx CHANNEL_BLOCKS = (Cfg::C + CB - 1) / CB;
  static constexpr idx SLICES_PER_BLOCK = depthwise_threads / CB;
};

// Element e of an activation of `h` x `w` pixels (in memory order) as
// (channel, pixel).
template <class Cfg>
__device__ __forceinline__ void
channel_pixel(typename Cfg::index e, typename Cfg::index h,
              typename Cfg::index w, typename Cfg::index &ch,
              typename Cfg::index &px) {
  typedef typename Cfg::index idx;
  if constexpr (Cfg::NHWC) {
    ch = e % Cfg::C;
    px = e / Cfg::C;
  } else {
    const idx plane = h * w;
    ch = (e / plane) % Cfg::C;
    px = (e / (plane * Cfg::C)) * plane + e % plane;
  }
}

// Epi's store of a pixel's value of channel ch.
template <class Cfg, class Epi, class Params>
__device__ __forceinline__ void store_pixel(const Params &p,
                                            typename Cfg::index ch,
                                            typename Cfg::index px, float acc) {
  if constexpr (Cfg::NHWC)
    Epi::store(p, ch, px, 0, acc);
  else
    Epi::store(p, ch, 0, px, acc);
}

template <class Cfg, class Epi, class Params>
__device__ __forceinline__ void depthwise_forward(const launch_ctx &ctx,
                                                  const Params &p) {
  typedef typename Cfg::index idx;
  typedef depthwise_shape<Cfg> S;
  // nhwc: a = x, b = w; nchw: a = w, b = x.
  const auto *__restrict__ x = Cfg::NHWC ? p.a : p.b;
  const auto *__restrict__ w = Cfg::NHWC ? p.b : p.a;
  for (idx e = (idx)ctx.block.x * ctx.block_dim.x + ctx.thread.x; e < S::OUT;
       e += (idx)ctx.grid.x * ctx.block_dim.x) {
    idx ch, px;
    channel_pixel<Cfg>(e, Cfg::OH, Cfg::OW, ch, px);
    const idx ox = px % Cfg::OW, oy = (px / Cfg::OW) % Cfg::OH,
              n = px / (Cfg::OH * Cfg::OW);
    float acc = 0.0f;
#pragma unroll
    for (int kh = 0; kh < Cfg::KH; ++kh) {
      const idx y = oy * Cfg::SH - Cfg::PT + kh * Cfg::DH;
      if (y < 0 || y >= Cfg::H)
        continue;
#pragma unroll
      for (int kw = 0; kw < Cfg::KW; ++kw) {
        const idx xx = ox * Cfg::SW - Cfg::PL + kw * Cfg::DW;
        if (xx < 0 || xx >= Cfg::W)
          continue;
        acc += kiln_load(x[activation_offset(Cfg{}, n, ch, y, xx, (idx)Cfg::C,
                                             (idx)Cfg::H, (idx)Cfg::W)]) *
               kiln_load(w[ch * S::TAPS + kh * Cfg::KW + kw]);
      }
    }
    store_pixel<Cfg, Epi>(p, ch, px, acc);
  }
}

template <class Cfg, class Epi, class Params>
__device__ __forceinline__ void depthwise_backward_input(const launch_ctx &ctx,
                                                         const Params &p) {
  typedef typename Cfg::index idx;
  typedef depthwise_shape<Cfg> S;
  // nhwc: a = dy, b = w; nchw: a = w, b = dy.
  const auto *__restrict__ dy = Cfg::NHWC ? p.a : p.b;
  const auto *__restrict__ w = Cfg::NHWC ? p.b : p.a;
  for (idx e = (idx)ctx.block.x * ctx.block_dim.x + ctx.thread.x; e < S::IN;
       e += (idx)ctx.grid.x * ctx.block_dim.x) {
    idx ch, px;
    channel_pixel<Cfg>(e, Cfg::H, Cfg::W, ch, px);
    const idx ix = px % Cfg::W, iy = (px / Cfg::W) % Cfg::H,
              n = px / (Cfg::H * Cfg::W);
    float acc = 0.0f;
#pragma unroll
    for (int kh = 0; kh < Cfg::KH; ++kh) {
      const idx ty = iy + Cfg::PT - kh * Cfg::DH;
      if (ty < 0 || ty % Cfg::SH != 0 || ty / Cfg::SH >= Cfg::OH)
        continue;
#pragma unroll
      for (int kw = 0; kw < Cfg::KW; ++kw) {
        const idx tx = ix + Cfg::PL - kw * Cfg::DW;
        if (tx < 0 || tx % Cfg::SW != 0 || tx / Cfg::SW >= Cfg::OW)
          continue;
        acc += kiln_load(dy[activation_offset(Cfg{}, n, ch, ty / Cfg::SH,
                                              tx / Cfg::SW, (idx)Cfg::O,
                                              (idx)Cfg::OH, (idx)Cfg::OW)]) *
               kiln_load(w[ch * S::TAPS + kh * Cfg::KW + kw]);
      }
    }
    store_pixel<Cfg, Epi>(p, ch, px, acc);
  }
}

// Partial sums of slice s of the output pixels for every (channel, tap):
// scratch[(s * C + ch) * TAPS + tap]. A block is CB consecutive channels
// (consecutive threads) by 256 / CB slices; grid.x runs over the blocks in
// a strided loop. A thread keeps its channel's tap sums in registers.
template <class Cfg, class Params>
__device__ __forceinline__ void depthwise_filter_partials(const launch_ctx &ctx,
                                                          const Params &p) {
  typedef typename Cfg::index idx;
  typedef depthwise_shape<Cfg> S;
  const auto *__restrict__ dy = p.a;
  const auto *__restrict__ x = p.b;
  for (idx job = ctx.block.x; job < depthwise_filter_blocks(S::SLICES, Cfg::C);
       job += ctx.grid.x) {
    const idx slice =
        (job / S::CHANNEL_BLOCKS) * S::SLICES_PER_BLOCK + ctx.thread.x / S::CB;
    const idx ch = (job % S::CHANNEL_BLOCKS) * S::CB + ctx.thread.x % S::CB;
    if (slice >= S::SLICES || ch >= Cfg::C)
      continue;
    float acc[S::TAPS];
#pragma unroll
    for (int t = 0; t < S::TAPS; ++t)
      acc[t] = 0.0f;
    const idx first = slice * depthwise_filter_pixels;
    const idx last = first + depthwise_filter_pixels < S::OUT_PIXELS
                         ? first + depthwise_filter_pixels
                         : S::OUT_PIXELS;
    for (idx px = first; px < last; ++px) {
      const idx ox = px % Cfg::OW, oy = (px / Cfg::OW) % Cfg::OH,
                n = px / (Cfg::OH * Cfg::OW);
      const float g = kiln_load(dy[activation_offset(
          Cfg{}, n, ch, oy, ox, (idx)Cfg::O, (idx)Cfg::OH, (idx)Cfg::OW)]);
#pragma unroll
      for (int kh = 0; kh < Cfg::KH; ++kh) {
        const idx y = oy * Cfg::SH - Cfg::PT + kh * Cfg::DH;
        if (y < 0 || y >= Cfg::H)
          continue;
#pragma unroll
        for (int kw = 0; kw < Cfg::KW; ++kw) {
          const idx xx = ox * Cfg::SW - Cfg::PL + kw * Cfg::DW;
          if (xx < 0 || xx >= Cfg::W)
            continue;
          acc[kh * Cfg::KW + kw] +=
              g *
              kiln_load(x[activation_offset(Cfg{}, n, ch, y, xx, (idx)Cfg::C,
                                            (idx)Cfg::H, (idx)Cfg::W)]);
        }
      }
    }
#pragma unroll
    for (int t = 0; t < S::TAPS; ++t)
      p.scratch[(slice * Cfg::C + ch) * S::TAPS + t] = acc[t];
  }
}

// The slices' partials added in order, through the epilogue.
template <class Cfg, class Epi, class Params>
__device__ __forceinline__ void depthwise_filter_sum(const launch_ctx &ctx,
                                                     const Params &p) {
  typedef typename Cfg::index idx;
  typedef depthwise_shape<Cfg> S;
  constexpr idx TOTAL = (idx)Cfg::C * S::TAPS;
  for (idx e = (idx)ctx.block.x * ctx.block_dim.x + ctx.thread.x; e < TOTAL;
       e += (idx)ctx.grid.x * ctx.block_dim.x) {
    float acc = 0.0f;
    for (idx s = 0; s < S::SLICES; ++s)
      acc += p.scratch[s * TOTAL + e];
    Epi::store(p, e / S::TAPS, 0, e % S::TAPS, acc);
  }
}

} // namespace conv
} // namespace kiln
