//===- conv_layout.cuh - convolutions as implicit GEMMs -------------------===//
//
// Shared by the planner (ConvPlan.cpp), the kernel templates
// (conv_igemm.cuh, conv_depthwise.cuh) and the host tests: how each pass of
// a 2-D convolution is one GEMM per group whose operands are gathered from
// the activations and the filter on the fly (no im2col buffer), and which
// element of which tensor each operand element is.
//
// Names are channels-first whatever the layout: input [N, C, H, W], filter
// O x (C / GROUPS) x KH x KW, output [N, O, OH, OW]; CG = C / GROUPS and
// OG = O / GROUPS. A "pixel" is (n, y, x) of an activation, a "tap" a
// filter position with its channel. Per group g, D = A (ROWS x K) B (K x
// COLS):
//
//   pass            layout  ROWS      COLS        K           A       B
//   forward         nhwc    N*OH*OW   OG          KH*KW*CG    x       w
//                   nchw    OG        N*OH*OW     CG*KH*KW    w       x
//   backward input  nhwc    N*H*W     CG          KH*KW*OG    dy      w
//                   nchw    CG        N*H*W       OG*KH*KW    w       dy
//   backward filter both    OG        KH*KW*CG    N*OH*OW     dy      x
//                                     (CG*KH*KW nchw)
//
// Pixels stay on the GEMM side where the layout stores them contiguously
// with the output (channels last: pixels are rows and channels columns;
// channels first the reverse), so that outputs are stored in the layout
// without a transposing pass. Taps are ordered as the filter stores them:
// (kh, kw, c) for nhwc, (c, kh, kw) for nchw, so the filter gradient is
// the D of its pass as it lies in memory.
//
// Every function takes the geometry `g` of a type with members N, C, H, W,
// O, OH, OW, KH, KW, SH, SW, PT (top padding), PL (left padding), DH, DW,
// GROUPS, NHWC (bool) and PASS (pass_kind), and the integer type `index`
// that offsets are computed in: a plain struct in the planner,
// the kernel's configuration in kernels, whose members are static constexpr
// so that every division is by a constant.
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/gemm_layout.cuh"
#include "kiln/host_device.cuh"

namespace kiln {
namespace conv {

enum pass_kind { kForward = 0, kBackwardInput = 1, kBackwardFilter = 2 };

// The integer type offsets are computed in (never deduced from arguments).
template <class G> using index_of = typename G::index;

template <class G>
__host__ __device__ __forceinline__ constexpr index_of<G> cg(const G &g) {
  return (index_of<G>)g.C / g.GROUPS;
}
template <class G>
__host__ __device__ __forceinline__ constexpr index_of<G> og(const G &g) {
  return (index_of<G>)g.O / g.GROUPS;
}
template <class G>
__host__ __device__ __forceinline__ constexpr index_of<G> taps(const G &g) {
  return (index_of<G>)g.KH * g.KW;
}

// The GEMM of one group.
template <class G>
__host__ __device__ __forceinline__ constexpr index_of<G>
gemm_rows(const G &g) {
  const index_of<G> out_pixels = (index_of<G>)g.N * g.OH * g.OW;
  const index_of<G> in_pixels = (index_of<G>)g.N * g.H * g.W;
  if (g.PASS == kForward)
    return g.NHWC ? out_pixels : og(g);
  if (g.PASS == kBackwardInput)
    return g.NHWC ? in_pixels : cg(g);
  return og(g);
}
template <class G>
__host__ __device__ __forceinline__ constexpr index_of<G>
gemm_cols(const G &g) {
  const index_of<G> out_pixels = (index_of<G>)g.N * g.OH * g.OW;
  const index_of<G> in_pixels = (index_of<G>)g.N * g.H * g.W;
  if (g.PASS == kForward)
    return g.NHWC ? og(g) : out_pixels;
  if (g.PASS == kBackwardInput)
    return g.NHWC ? cg(g) : in_pixels;
  return taps(g) * cg(g);
}
template <class G>
__host__ __device__ __forceinline__ constexpr index_of<G> gemm_k(const G &g) {
  if (g.PASS == kForward)
    return taps(g) * cg(g);
  if (g.PASS == kBackwardInput)
    return taps(g) * og(g);
  return (index_of<G>)g.N * g.OH * g.OW;
}

// A pixel of an activation and a tap of the filter, split into coordinates.
template <typename I> struct pixel { I n, y, x; };
template <typename I> struct tap { I kh, kw, ch; };

template <class G>
__host__ __device__ __forceinline__ constexpr pixel<index_of<G>>
split_pixel(const G &g, index_of<G> p, index_of<G> h, index_of<G> w) {
  const index_of<G> x = p % w;
  const index_of<G> rest = p / w;
  return {rest / h, rest % h, x};
}
// Taps in the filter's order: (kh, kw, ch) for nhwc, (ch, kh, kw) for nchw;
// `channels` per tap position.
template <class G>
__host__ __device__ __forceinline__ constexpr tap<index_of<G>>
split_tap(const G &g, index_of<G> t, index_of<G> channels) {
  if (g.NHWC) {
    const index_of<G> pos = t / channels;
    return {pos / g.KW, pos % g.KW, t % channels};
  }
  const index_of<G> pos = t % taps(g);
  return {pos / g.KW, pos % g.KW, t / taps(g)};
}

// Element offset of (n, channel, y, x) in an activation of `c` channels and
// h x w pixels.
template <class G>
__host__ __device__ __forceinline__ constexpr index_of<G>
activation_offset(const G &g, index_of<G> n, index_of<G> ch, index_of<G> y,
                  index_of<G> x, index_of<G> c, index_of<G> h, index_of<G> w) {
  return g.NHWC ? ((n * h + y) * w + x) * c + ch
                : ((n * c + ch) * h + y) * w + x;
}

// x at output pixel p and tap t of group g (the forward gather): -1 in the
// padding.
template <class G>
__host__ __device__ __forceinline__ constexpr index_of<G>
input_at(const G &g, index_of<G> group, index_of<G> p, index_of<G> t) {
  const pixel<index_of<G>> px = split_pixel(g, p, g.OH, g.OW);
  const tap<index_of<G>> tp = split_tap(g, t, cg(g));
  const index_of<G> y = px.y * g.SH - g.PT + tp.kh * g.DH;
  const index_of<G> x = px.x * g.SW - g.PL + tp.kw * g.DW;
  if (y < 0 || y >= g.H || x < 0 || x >= g.W)
    return -1;
  return activation_offset(g, px.n, group * cg(g) + tp.ch, y, x, g.C, g.H, g.W);
}

// dy at input pixel p and tap t of group g (the gather of the transposed
// convolution): the output pixel whose window puts tap t on p; -1 where
// none does (outside the output, or between strides).
template <class G>
__host__ __device__ __forceinline__ constexpr index_of<G>
grad_at(const G &g, index_of<G> group, index_of<G> p, index_of<G> t) {
  const pixel<index_of<G>> px = split_pixel(g, p, g.H, g.W);
  const tap<index_of<G>> tp = split_tap(g, t, og(g));
  const index_of<G> ty = px.y + g.PT - tp.kh * g.DH;
  const index_of<G> tx = px.x + g.PL - tp.kw * g.DW;
  if (ty < 0 || tx < 0 || ty % g.SH != 0 || tx % g.SW != 0)
    return -1;
  const index_of<G> y = ty / g.SH, x = tx / g.SW;
  if (y >= g.OH || x >= g.OW)
    return -1;
  return activation_offset(g, px.n, group * og(g) + tp.ch, y, x, g.O, g.OH,
                           g.OW);
}

// The filter element of output channel o (of the group) and tap t in the
// filter's order.
template <class G>
__host__ __device__ __forceinline__ constexpr index_of<G>
filter_at(const G &g, index_of<G> group, index_of<G> o, index_of<G> t) {
  return (group * og(g) + o) * taps(g) * cg(g) + t;
}
// The filter element that joins tap t = (kh, kw, o) or (o, kh, kw) of dy to
// input channel c (of the group): the backward-input pass.
template <class G>
__host__ __device__ __forceinline__ constexpr index_of<G>
filter_transposed_at(const G &g, index_of<G> group, index_of<G> t,
                     index_of<G> c) {
  const tap<index_of<G>> tp = split_tap(g, t, og(g));
  const index_of<G> pos = tp.kh * g.KW + tp.kw;
  const index_of<G> o = group * og(g) + tp.ch;
  return g.NHWC ? (o * taps(g) + pos) * cg(g) + c
                : (o * cg(g) + c) * taps(g) + pos;
}
// dy at output channel o (of the group) and output pixel p.
template <class G>
__host__ __device__ __forceinline__ constexpr index_of<G>
output_grad_at(const G &g, index_of<G> group, index_of<G> o, index_of<G> p) {
  const pixel<index_of<G>> px = split_pixel(g, p, g.OH, g.OW);
  return activation_offset(g, px.n, group * og(g) + o, px.y, px.x, g.O, g.OH,
                           g.OW);
}

// Element (r, k) of A and (k, c) of B of group g: an offset into the
// operand's tensor, or -1 for a zero.
template <class G>
__host__ __device__ __forceinline__ constexpr index_of<G>
a_at(const G &g, index_of<G> group, index_of<G> r, index_of<G> k) {
  if (g.PASS == kForward)
    return g.NHWC ? input_at(g, group, r, k) : filter_at(g, group, r, k);
  if (g.PASS == kBackwardInput)
    return g.NHWC ? grad_at(g, group, r, k)
                  : filter_transposed_at(g, group, k, r);
  return output_grad_at(g, group, r, k);
}
template <class G>
__host__ __device__ __forceinline__ constexpr index_of<G>
b_at(const G &g, index_of<G> group, index_of<G> k, index_of<G> c) {
  if (g.PASS == kForward)
    return g.NHWC ? filter_at(g, group, c, k) : input_at(g, group, c, k);
  if (g.PASS == kBackwardInput)
    return g.NHWC ? filter_transposed_at(g, group, k, c)
                  : grad_at(g, group, c, k);
  return input_at(g, group, k, c);
}

// The passes whose A rows are channels-last pixels (forward: output pixels
// gathering x; backward input: input pixels gathering dy). Their gathers
// split into a part of the row alone (a_row_of: the pixel's image and
// window origin, computed once per row of a tile) and a part of the tap
// alone (a_tap_of, once per K step), joined by a_at_row.
template <class G>
__host__ __device__ __forceinline__ constexpr bool
a_rows_are_pixels(const G &g) {
  return g.NHWC && g.PASS != kBackwardFilter;
}
template <typename I> struct a_row {
  I image, y, x; // the gathered image's first element; the window origin
  bool valid;    // a row of the GEMM (not a tile's overhang)
};
template <class G>
__host__ __device__ __forceinline__ constexpr a_row<index_of<G>>
a_row_of(const G &g, index_of<G> r) {
  const bool valid = r < gemm_rows(g);
  if (g.PASS == kForward) {
    const pixel<index_of<G>> px = split_pixel(g, r, g.OH, g.OW);
    return {px.n * g.H * g.W * g.C, px.y * g.SH - g.PT, px.x * g.SW - g.PL,
            valid};
  }
  const pixel<index_of<G>> px = split_pixel(g, r, g.H, g.W);
  return {px.n * g.OH * g.OW * g.O, px.y + g.PT, px.x + g.PL, valid};
}
template <class G>
__host__ __device__ __forceinline__ constexpr tap<index_of<G>>
a_tap_of(const G &g, index_of<G> k) {
  return split_tap(g, k, g.PASS == kForward ? cg(g) : og(g));
}
// a_at(g, group, r, k) for k < gemm_k(g), from r's row and k's tap.
template <class G>
__host__ __device__ __forceinline__ constexpr index_of<G>
a_at_row(const G &g, index_of<G> group, const a_row<index_of<G>> &row,
         const tap<index_of<G>> &tp) {
  if (!row.valid)
    return -1;
  if (g.PASS == kForward) {
    const index_of<G> y = row.y + tp.kh * g.DH, x = row.x + tp.kw * g.DW;
    if (y < 0 || y >= g.H || x < 0 || x >= g.W)
      return -1;
    return row.image + (y * g.W + x) * g.C + group * cg(g) + tp.ch;
  }
  const index_of<G> ty = row.y - tp.kh * g.DH, tx = row.x - tp.kw * g.DW;
  if (ty < 0 || tx < 0 || ty % g.SH != 0 || tx % g.SW != 0)
    return -1;
  const index_of<G> y = ty / g.SH, x = tx / g.SW;
  if (y >= g.OH || x >= g.OW)
    return -1;
  return row.image + (y * g.OW + x) * g.O + group * og(g) + tp.ch;
}

// Element (mn, k) of operand A (IS_A: row mn) or B (column mn) of group g,
// or -1 for a zero: past the GEMM's edges (a tile's overhang) or the
// padding.
template <bool IS_A, class G>
__host__ __device__ __forceinline__ constexpr index_of<G>
operand_at(const G &g, index_of<G> group, index_of<G> mn, index_of<G> k) {
  if (mn >= (IS_A ? gemm_rows(g) : gemm_cols(g)) || k >= gemm_k(g))
    return -1;
  return IS_A ? a_at(g, group, mn, k) : b_at(g, group, k, mn);
}

// Whether an operand is stored with K contiguous (A [ROWS][K], B [COLS][K])
// rather than its rows or columns: its shared tiles keep that order so
// that global loads coalesce.
template <class G>
__host__ __device__ __forceinline__ constexpr bool a_k_major(const G &g) {
  if (g.PASS == kForward)
    return true; // x (channels last) or the filter's rows
  if (g.PASS == kBackwardInput)
    return g.NHWC || taps(g) > 1; // dy's channels, or the filter's taps
  return !g.NHWC;                 // dy's pixels (nchw) or channels (nhwc)
}
template <class G>
__host__ __device__ __forceinline__ constexpr bool b_k_major(const G &g) {
  if (g.PASS == kForward)
    return g.NHWC; // the filter's rows, or x's pixels (columns)
  if (g.PASS == kBackwardInput)
    return false; // the filter's input channels, or dy's pixels
  return !g.NHWC; // x's pixels (nchw, along K) or channels (nhwc)
}

// A pointwise convolution (1x1, stride 1, no padding): pixels of the input
// and the output coincide, so channels-first gathers are plain strided rows.
template <class G>
__host__ __device__ __forceinline__ constexpr bool pointwise(const G &g) {
  return g.KH == 1 && g.KW == 1 && g.SH == 1 && g.SW == 1 && g.PT == 0 &&
         g.PL == 0 && g.H == g.OH && g.W == g.OW;
}

// Whether VEC consecutive elements along an operand's contiguous dimension
// (from a multiple of VEC) are consecutive, aligned in memory and all inside
// or all outside the tensor, so one 16-byte copy moves them.
template <class G>
__host__ __device__ __forceinline__ constexpr bool a_vector(const G &g,
                                                            int vec) {
  const index_of<G> hw = (index_of<G>)g.H * g.W, ohw = (index_of<G>)g.OH * g.OW;
  if (g.PASS == kForward)
    return g.NHWC ? cg(g) % vec == 0 && g.C % vec == 0 : gemm_k(g) % vec == 0;
  if (g.PASS == kBackwardInput) {
    if (g.NHWC)
      return og(g) % vec == 0 && g.O % vec == 0;
    return taps(g) == 1 && cg(g) % vec == 0; // the filter's rows along c
  }
  return g.NHWC ? og(g) % vec == 0 && g.O % vec == 0 : ohw % vec == 0 && hw > 0;
}
template <class G>
__host__ __device__ __forceinline__ constexpr bool b_vector(const G &g,
                                                            int vec) {
  const index_of<G> hw = (index_of<G>)g.H * g.W;
  if (g.PASS == kForward)
    return g.NHWC ? gemm_k(g) % vec == 0 : pointwise(g) && hw % vec == 0;
  if (g.PASS == kBackwardInput)
    return g.NHWC ? cg(g) % vec == 0 : pointwise(g) && hw % vec == 0;
  return g.NHWC ? cg(g) % vec == 0 && g.C % vec == 0
                : pointwise(g) && hw % vec == 0;
}

// Depthwise convolutions (GROUPS = C = O) run as a kernel of their own:
// one channel per group leaves an implicit GEMM a single column.
template <class G>
__host__ __device__ __forceinline__ constexpr bool depthwise(const G &g) {
  return g.GROUPS > 1 && g.GROUPS == g.C && g.GROUPS == g.O;
}

// Threads of a block of the depthwise kernels.
constexpr int depthwise_threads = 256;
// The filter gradient sums slices of this many output pixels per thread,
// for one channel and every tap, into partials that a second kernel adds
// in slice order; its blocks are channel_block consecutive channels by
// depthwise_threads / channel_block slices.
constexpr int depthwise_filter_pixels = 256;
__host__ __device__ constexpr long long depthwise_channel_block(long long c) {
  return c >= depthwise_threads ? depthwise_threads : next_pow2(c);
}
__host__ __device__ constexpr long long depthwise_slices(long long out_pixels) {
  return ceil_div(out_pixels, depthwise_filter_pixels);
}
__host__ __device__ constexpr long long
depthwise_filter_blocks(long long slices, long long c) {
  return ceil_div(slices, depthwise_threads / depthwise_channel_block(c)) *
         ceil_div(c, depthwise_channel_block(c));
}

// Whether conv_wgmma.cuh stages a bm x bn tile's results in shared memory
// and stores them in 16-byte runs: a result of `run_bytes` elements whose
// columns are runs of `run` elements (0: they are not), no split of the
// reduction, at least 8 runs per row (the swizzle's period), and the tile
// fits the two stages the pipeline leaves free (it copies STAGES - 2 ahead).
__host__ __device__ constexpr bool
wgmma_stages_results(int bm, int bn, int split, int run, int run_bytes) {
  return run > 0 && split == 1 && bn / run >= 8 &&
         (unsigned)(bm * bn * run_bytes) <= 2u * gemm::wgmma_tile_bytes(bm);
}

// The TMA kernel (conv_tma.cuh). Its im2col copies walk the window origins
// of the output's pixels: along a spatial dimension from -pad_before in
// steps of `stride`, `out` of them, which the box [-pad_before, in + upper)
// holds exactly for this upper corner.
__host__ __device__ constexpr long long
im2col_upper_corner(long long out, long long stride, long long pad_before,
                    long long in) {
  return (out - 1) * stride + 1 - pad_before - in;
}
// Its shared memory (gemm_layout.cuh's wgmma_tma_smem): `stages` A and B
// tiles, the staging region of the epilogue (the two A tiles
// conv_wgmma.cuh leaves free, so that wgmma_stages_results decides for
// both kernels), the stages' two mbarriers, and the slack that aligns the
// tiles to 1024-byte atoms.
__host__ __device__ constexpr gemm::wgmma_tma_smem tma_smem(int bm, int bn,
                                                            int stages) {
  return gemm::wgmma_tma_smem(bm, bn, stages, 1, 2 * gemm::wgmma_tile_bytes(bm));
}
__host__ __device__ constexpr unsigned tma_shared_bytes(int bm, int bn,
                                                        int stages) {
  return tma_smem(bm, bn, stages).bytes();
}

} // namespace conv
} // namespace kiln
