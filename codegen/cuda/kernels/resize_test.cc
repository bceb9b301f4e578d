// The index arithmetic of kiln.resize (resize_layout.cuh) and the gradient
// kernel (resize.cuh) run thread for thread on the CPU: for every mode,
// coordinate transformation and rounding, over sizes up and down, the
// outputs outputs_reading() finds for an input index are exactly those
// whose taps name it; and the kernel's gather equals the scatter of each
// output's gradient onto the elements it reads.

#include "kiln/resize.cuh"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace kiln::resize {
namespace {

namespace emu = ::kiln::emulation;

/// Every (mode, coordinates, rounding) the op accepts.
std::vector<axis> modesOf(long long in, long long out, double scale) {
  std::vector<axis> all;
  for (int coords = half_pixel; coords <= half_pixel_symmetric; ++coords) {
    for (int round = round_prefer_floor; round <= round_ceil; ++round)
      all.push_back({in, out, scale, nearest, coords, round});
    all.push_back({in, out, scale, linear, coords, round_prefer_floor});
  }
  return all;
}

TEST(ResizeLayout, OutputRangesAreExactlyTheReaders) {
  const struct {
    long long in, out;
    double scale;
  } sizes[] = {{4, 8, 2.0},  {5, 7, 1.5},     {7, 5, 5.0 / 7.0}, {8, 4, 0.5},
               {3, 10, 3.3}, {6, 1, 1.0 / 6}, {1, 5, 5.0},       {9, 9, 1.0},
               {9, 9, 1.25}, {13, 4, 0.3}};
  for (const auto &s : sizes)
    for (const axis &a : modesOf(s.in, s.out, s.scale))
      for (long long i = 0; i < a.in; ++i) {
        output_range r = outputs_reading(a, i);
        for (long long o = 0; o < a.out; ++o) {
          long long lo = 0, hi = 0;
          reads(a, o, lo, hi);
          bool reads_i = lo == i || hi == i;
          bool in_range = o >= r.first && o <= r.last;
          EXPECT_EQ(reads_i, in_range)
              << "in " << a.in << " out " << a.out << " scale " << a.scale
              << " mode " << a.mode << " coords " << a.coords << " round "
              << a.round << ": input " << i << ", output " << o;
        }
      }
}

TEST(ResizeLayout, NearestRoundingAndCoordinates) {
  // half_pixel at scale 2: x = o / 2 - 0.25.
  EXPECT_EQ(nearest_index(half_pixel, round_prefer_floor, 3, 4, 8, 2.0), 1);
  // asymmetric at scale 2/3: x = 1.5 exactly, a tie.
  EXPECT_EQ(nearest_index(asymmetric, round_prefer_floor, 1, 3, 2, 2.0 / 3.0),
            1);
  EXPECT_EQ(nearest_index(asymmetric, round_prefer_ceil, 1, 3, 2, 2.0 / 3.0),
            2);
  EXPECT_EQ(nearest_index(asymmetric, round_floor, 1, 3, 2, 2.0 / 3.0), 1);
  EXPECT_EQ(nearest_index(asymmetric, round_ceil, 1, 3, 2, 2.0 / 3.0), 2);
  // align_corners: o * (in - 1) / (out - 1), clamped; one output reads 0.
  EXPECT_EQ(nearest_index(align_corners, round_ceil, 2, 5, 3, 0.6), 4);
  EXPECT_EQ(nearest_index(pytorch_half_pixel, round_ceil, 0, 5, 1, 0.2), 0);
  linear_tap t = linear_taps(half_pixel, 0, 4, 8, 2.0);
  EXPECT_EQ(t.i0, 0); // x = -0.25 clamps to 0
  EXPECT_EQ(t.i1, 1);
  EXPECT_EQ(t.w1, 0.0);
  t = linear_taps(half_pixel, 7, 4, 8, 2.0); // x = 3.25 clamps to 3
  EXPECT_EQ(t.i0, 3);
  EXPECT_EQ(t.i1, 3);
}

template <class Cfg> axis axisOf(int k) {
  if (k == 0)
    return {Cfg::in0, Cfg::out0, Cfg::scale0, Cfg::mode, Cfg::coords,
            Cfg::round};
  if (k == 1)
    return {Cfg::in1, Cfg::out1, Cfg::scale1, Cfg::mode, Cfg::coords,
            Cfg::round};
  return {Cfg::in2, Cfg::out2, Cfg::scale2, Cfg::mode, Cfg::coords,
          Cfg::round};
}

/// The gradient by scattering each output's gradient in f64.
template <class Cfg> std::vector<double> scatter(const std::vector<float> &g) {
  std::vector<double> dx(static_cast<size_t>(Cfg::in_elements), 0.0);
  const long long out[3] = {Cfg::out0, Cfg::out1, Cfg::out2};
  const long long in[3] = {Cfg::in0, Cfg::in1, Cfg::in2};
  const long long seg[4] = {Cfg::a, Cfg::b, Cfg::c, Cfg::d};
  size_t flat = 0;
  for (long long a = 0; a < seg[0]; ++a)
    for (long long o0 = 0; o0 < out[0]; ++o0)
      for (long long b = 0; b < seg[1]; ++b)
        for (long long o1 = 0; o1 < out[1]; ++o1)
          for (long long c = 0; c < seg[2]; ++c)
            for (long long o2 = 0; o2 < out[2]; ++o2)
              for (long long d = 0; d < seg[3]; ++d, ++flat) {
                const long long o[3] = {o0, o1, o2};
                // Each axis's (index, weight) taps; an axis of one element
                // reads itself.
                std::vector<std::pair<long long, double>> taps[3];
                for (int k = 0; k < 3; ++k) {
                  axis ax = axisOf<Cfg>(k);
                  if (in[k] == 1 && out[k] == 1) {
                    taps[k] = {{0, 1.0}};
                  } else if (ax.mode == nearest) {
                    taps[k] = {{nearest_index(ax.coords, ax.round, o[k], ax.in,
                                              ax.out, ax.scale),
                                1.0}};
                  } else {
                    linear_tap t =
                        linear_taps(ax.coords, o[k], ax.in, ax.out, ax.scale);
                    taps[k] = {{t.i0, 1.0 - t.w1}, {t.i1, t.w1}};
                  }
                }
                for (auto [i0, w0] : taps[0])
                  for (auto [i1, w1] : taps[1])
                    for (auto [i2, w2] : taps[2]) {
                      long long at =
                          (((((a * in[0] + i0) * seg[1] + b) * in[1] + i1) *
                                seg[2] +
                            c) *
                               in[2] +
                           i2) *
                              seg[3] +
                          d;
                      dx[size_t(at)] += w0 * w1 * w2 * g[flat];
                    }
              }
  return dx;
}

template <class Cfg> void expectGatherMatchesScatter() {
  const long long outElements = Cfg::a * Cfg::out0 * Cfg::b * Cfg::out1 *
                                Cfg::c * Cfg::out2 * Cfg::d;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  std::vector<float> g(static_cast<size_t>(outElements));
  for (float &v : g)
    v = uniform(rng);
  std::vector<float> dx(static_cast<size_t>(Cfg::in_elements), NAN);
  emu::launch(3, 64, [&] {
    backward<Cfg>(this_launch(), g.data(), dx.data());
  });
  std::vector<double> expected = scatter<Cfg>(g);
  for (size_t i = 0; i < dx.size(); ++i)
    EXPECT_NEAR(dx[i], expected[i], 1e-5 * (1 + std::fabs(expected[i])))
        << "input element " << i;
}

struct Nearest2x : config<int, nearest, asymmetric, round_floor, 2, 4, 8, 1, 5,
                          10, 1, 1, 1, 1> {
  static constexpr double scale0 = 2.0, scale1 = 2.0, scale2 = 1.0;
};
struct NearestDownCeil : config<int, nearest, half_pixel, round_prefer_ceil, 3,
                                7, 5, 2, 1, 1, 1, 1, 1, 3> {
  static constexpr double scale0 = 5.0 / 7.0, scale1 = 1.0, scale2 = 1.0;
};
struct BilinearChannelsLast
    : config<int, linear, half_pixel, round_prefer_floor, 2, 3, 7, 1, 4, 9, 3,
             1, 1, 1> {
  static constexpr double scale0 = 7.0 / 3.0, scale1 = 2.25, scale2 = 1.0;
};
struct TrilinearAlignCorners
    : config<long long, linear, align_corners, round_prefer_floor, 1, 3, 5, 1,
             5, 2, 2, 4, 4, 2> {
  static constexpr double scale0 = 5.0 / 3.0, scale1 = 0.4, scale2 = 1.0;
};
struct LinearSymmetric : config<int, linear, half_pixel_symmetric,
                                round_prefer_floor, 3, 8, 14, 1, 1, 1, 1, 1, 1,
                                1> {
  static constexpr double scale0 = 1.75, scale1 = 1.0, scale2 = 1.0;
};

TEST(ResizeBackward, NearestUpsample) { expectGatherMatchesScatter<Nearest2x>(); }
TEST(ResizeBackward, NearestDownsampleTiesUp) {
  expectGatherMatchesScatter<NearestDownCeil>();
}
TEST(ResizeBackward, BilinearChannelsLast) {
  expectGatherMatchesScatter<BilinearChannelsLast>();
}
TEST(ResizeBackward, TrilinearAlignCorners64BitIndices) {
  expectGatherMatchesScatter<TrilinearAlignCorners>();
}
TEST(ResizeBackward, LinearHalfPixelSymmetric) {
  expectGatherMatchesScatter<LinearSymmetric>();
}

} // namespace
} // namespace kiln::resize
