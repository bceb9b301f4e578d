// The implicit GEMMs of conv_layout.cuh against direct convolutions: for
// random geometries (strides, asymmetric padding, dilation, groups, both
// layouts), every pass computed as sum_k A(r, k) B(k, c) through a_at/b_at
// must equal the convolution written as loops, element by element; and
// where a_vector/b_vector allow 16-byte copies, every run of elements they
// move must be consecutive, aligned and all inside or all in the padding;
// the pixel-row gathers split into row and tap parts must agree with a_at.

#include "kiln/conv_layout.cuh"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

namespace {

struct Geometry {
  typedef int64_t index;
  int64_t N, C, H, W, O, OH, OW, KH, KW, SH, SW, PT, PL, DH, DW, GROUPS;
  bool NHWC;
  int PASS;
};

using kiln::conv::kBackwardFilter;
using kiln::conv::kBackwardInput;
using kiln::conv::kForward;

// Channels-first offsets of the three tensors, in either layout.
int64_t xAt(const Geometry &g, int64_t n, int64_t c, int64_t y, int64_t x) {
  return g.NHWC ? ((n * g.H + y) * g.W + x) * g.C + c
                : ((n * g.C + c) * g.H + y) * g.W + x;
}
int64_t yAt(const Geometry &g, int64_t n, int64_t o, int64_t y, int64_t x) {
  return g.NHWC ? ((n * g.OH + y) * g.OW + x) * g.O + o
                : ((n * g.O + o) * g.OH + y) * g.OW + x;
}
int64_t wAt(const Geometry &g, int64_t o, int64_t c, int64_t kh, int64_t kw) {
  int64_t cg = g.C / g.GROUPS;
  return g.NHWC ? ((o * g.KH + kh) * g.KW + kw) * cg + c
                : ((o * cg + c) * g.KH + kh) * g.KW + kw;
}

struct Tensors {
  std::vector<double> x, w, y;
};

// The three passes as loops over every (n, o, oh, ow, c, kh, kw): y from x
// and w, dx from dy (= y's tensor) and w, dw from dy and x.
void direct(const Geometry &g, const Tensors &in, std::vector<double> &y,
            std::vector<double> &dx, std::vector<double> &dw) {
  int64_t cg = g.C / g.GROUPS, og = g.O / g.GROUPS;
  y.assign(in.y.size(), 0.0);
  dx.assign(in.x.size(), 0.0);
  dw.assign(in.w.size(), 0.0);
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t o = 0; o < g.O; ++o)
      for (int64_t oh = 0; oh < g.OH; ++oh)
        for (int64_t ow = 0; ow < g.OW; ++ow)
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t kh = 0; kh < g.KH; ++kh)
              for (int64_t kw = 0; kw < g.KW; ++kw) {
                int64_t ih = oh * g.SH - g.PT + kh * g.DH;
                int64_t iw = ow * g.SW - g.PL + kw * g.DW;
                if (ih < 0 || ih >= g.H || iw < 0 || iw >= g.W)
                  continue;
                int64_t xi = xAt(g, n, (o / og) * cg + c, ih, iw);
                int64_t yi = yAt(g, n, o, oh, ow);
                int64_t wi = wAt(g, o, c, kh, kw);
                y[yi] += in.x[xi] * in.w[wi];
                dx[xi] += in.y[yi] * in.w[wi];
                dw[wi] += in.y[yi] * in.x[xi];
              }
}

// The pass's output through the implicit GEMM, written at the offset its
// (group, row, column) stands for.
std::vector<double> implicitGemm(Geometry g, int pass, const Tensors &in) {
  g.PASS = pass;
  const std::vector<double> *a = nullptr, *b = nullptr;
  size_t outSize = 0;
  if (pass == kForward) {
    a = g.NHWC ? &in.x : &in.w;
    b = g.NHWC ? &in.w : &in.x;
    outSize = in.y.size();
  } else if (pass == kBackwardInput) {
    a = g.NHWC ? &in.y : &in.w;
    b = g.NHWC ? &in.w : &in.y;
    outSize = in.x.size();
  } else {
    a = &in.y;
    b = &in.x;
    outSize = in.w.size();
  }
  int64_t rows = kiln::conv::gemm_rows(g), cols = kiln::conv::gemm_cols(g),
          k = kiln::conv::gemm_k(g);
  int64_t cg = g.C / g.GROUPS, og = g.O / g.GROUPS;
  std::vector<double> out(outSize, 0.0);
  for (int64_t grp = 0; grp < g.GROUPS; ++grp)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        double sum = 0;
        for (int64_t j = 0; j < k; ++j) {
          int64_t ai = kiln::conv::a_at(g, grp, r, j);
          int64_t bi = kiln::conv::b_at(g, grp, j, c);
          if (ai >= 0 && bi >= 0)
            sum += (*a)[ai] * (*b)[bi];
        }
        // Where (grp, r, c) lies (the emitter's output index).
        int64_t at;
        if (pass == kBackwardFilter) {
          at = (grp * og + r) * cols + c;
        } else {
          bool fwd = pass == kForward;
          int64_t ch = fwd ? g.O : g.C, per = fwd ? og : cg;
          int64_t hw = fwd ? g.OH * g.OW : g.H * g.W;
          at = g.NHWC ? r * ch + grp * per + c
                      : ((c / hw) * ch + grp * per + r) * hw + c % hw;
        }
        out[at] = sum;
      }
  return out;
}

// Runs of `vec` elements along the operand's contiguous dimension, from
// multiples of vec, are consecutive and aligned or wholly zeros.
void checkVectorRuns(Geometry g, int pass, int vec, bool isA) {
  g.PASS = pass;
  bool allowed =
      isA ? kiln::conv::a_vector(g, vec) : kiln::conv::b_vector(g, vec);
  if (!allowed)
    return;
  bool kMajor = isA ? kiln::conv::a_k_major(g) : kiln::conv::b_k_major(g);
  int64_t extent = isA ? kiln::conv::gemm_rows(g) : kiln::conv::gemm_cols(g);
  int64_t k = kiln::conv::gemm_k(g);
  for (int64_t grp = 0; grp < g.GROUPS; ++grp)
    for (int64_t mn = 0; mn < extent; mn += kMajor ? 1 : vec)
      for (int64_t j = 0; j < k; j += kMajor ? vec : 1) {
        auto at = [&](int64_t i) {
          int64_t m = kMajor ? mn : mn + i, kk = kMajor ? j + i : j;
          if (m >= extent || kk >= k)
            return int64_t(-1);
          return isA ? kiln::conv::a_at(g, grp, m, kk)
                     : kiln::conv::b_at(g, grp, kk, m);
        };
        int64_t first = at(0);
        if (first >= 0)
          ASSERT_EQ(first % vec, 0) << "pass " << pass << (isA ? " A" : " B");
        for (int64_t i = 1; i < vec; ++i) {
          if (first < 0)
            ASSERT_LT(at(i), 0) << "pass " << pass << (isA ? " A" : " B");
          else
            ASSERT_EQ(at(i), first + i)
                << "pass " << pass << (isA ? " A" : " B");
        }
      }
}

Geometry randomGeometry(std::mt19937 &rng, bool nhwc) {
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  Geometry g{};
  g.NHWC = nhwc;
  g.GROUPS = pick(1, 3);
  int64_t vecChannels = pick(0, 1) ? 8 : 1;
  g.C = g.GROUPS * vecChannels * pick(1, 2);
  g.O = g.GROUPS * pick(1, 3) * (pick(0, 1) ? 8 : 1);
  if (pick(0, 3) == 0) // depthwise
    g.GROUPS = g.C, g.O = g.C;
  g.N = pick(1, 2);
  g.KH = pick(1, 3), g.KW = pick(1, 3);
  g.SH = pick(1, 2), g.SW = pick(1, 3);
  g.DH = pick(1, 2), g.DW = pick(1, 2);
  g.PT = pick(0, 2), g.PL = pick(0, 1);
  int64_t pb = pick(0, 2), pr = pick(0, 2);
  g.H = pick(g.DH * (g.KH - 1) + 1, 7);
  g.W = pick(g.DW * (g.KW - 1) + 1, 6);
  g.OH = (g.H + g.PT + pb - g.DH * (g.KH - 1) - 1) / g.SH + 1;
  g.OW = (g.W + g.PL + pr - g.DW * (g.KW - 1) - 1) / g.SW + 1;
  return g;
}

TEST(ConvLayout, ImplicitGemmsMatchDirectConvolution) {
  std::mt19937 rng(7);
  std::normal_distribution<double> normal;
  for (int trial = 0; trial < 200; ++trial) {
    Geometry g = randomGeometry(rng, trial % 2 == 0);
    Tensors in;
    in.x.resize(g.N * g.C * g.H * g.W);
    in.w.resize(g.O * (g.C / g.GROUPS) * g.KH * g.KW);
    in.y.resize(g.N * g.O * g.OH * g.OW);
    for (auto *t : {&in.x, &in.w, &in.y})
      for (double &v : *t)
        v = normal(rng);
    std::vector<double> y, dx, dw;
    direct(g, in, y, dx, dw);
    std::vector<double> expected[] = {y, dx, dw};
    for (int pass : {kForward, kBackwardInput, kBackwardFilter}) {
      std::vector<double> got = implicitGemm(g, pass, in);
      ASSERT_EQ(got.size(), expected[pass].size());
      for (size_t i = 0; i < got.size(); ++i)
        ASSERT_NEAR(got[i], expected[pass][i], 1e-9)
            << "trial " << trial << " pass " << pass << " element " << i
            << (g.NHWC ? " nhwc" : " nchw") << " groups " << g.GROUPS;
      for (int vec : {8, 4})
        for (bool isA : {true, false})
          checkVectorRuns(g, pass, vec, isA);
    }
  }
}

TEST(ConvLayout, PixelRowGathersSplitIntoRowAndTap) {
  // a_at_row(a_row_of(r), a_tap_of(k)) must be a_at(r, k) for every row
  // (and one tile's overhang past the last) and k of both channels-last
  // passes whose A rows are pixels.
  std::mt19937 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    Geometry g = randomGeometry(rng, /*nhwc=*/true);
    for (int pass : {kForward, kBackwardInput}) {
      g.PASS = pass;
      ASSERT_TRUE(kiln::conv::a_rows_are_pixels(g));
      const int64_t rows = kiln::conv::gemm_rows(g), k = kiln::conv::gemm_k(g);
      for (int64_t grp = 0; grp < g.GROUPS; ++grp)
        for (int64_t r = 0; r < rows + 64; ++r) {
          const auto row = kiln::conv::a_row_of(g, r);
          for (int64_t j = 0; j < k; ++j) {
            const int64_t expected =
                r < rows ? kiln::conv::a_at(g, grp, r, j) : -1;
            ASSERT_EQ(
                kiln::conv::a_at_row(g, grp, row, kiln::conv::a_tap_of(g, j)),
                expected)
                << "trial " << trial << " pass " << pass << " row " << r
                << " k " << j;
          }
        }
    }
    g.PASS = kBackwardFilter;
    EXPECT_FALSE(kiln::conv::a_rows_are_pixels(g));
  }
}

} // namespace
