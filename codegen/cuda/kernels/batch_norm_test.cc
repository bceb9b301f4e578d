// The batch statistics of batch_norm.cuh run thread for thread on the CPU
// (emulation/host_cuda.h) as BatchNormEmitter.cpp launches them: per-split
// Welford partials (grid.y over splits), then each channel's partials
// combined by a warp per channel. The mean and biased variance must match
// f64 sums over each channel, in column mode (channels last, with scalar
// and vector accesses) and segment mode (channels first), with the
// reduction split so that the combination walks several partials per
// channel and lane (and more than it loads ahead at once); the backward
// op's single pass (the statistics with the gradient sums) likewise;
// threads' rows loaded in batches and their remainder; and the
// normalisation with vector accesses.

#include "kiln/batch_norm.cuh"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace kiln::bn {
namespace {

namespace emu = ::kiln::emulation;

template <long long Outer, long long C, long long Inner, long long Chunk,
          long long Vec = 1>
struct Cfg : config<long long, Outer, C, Inner, Chunk, Vec> {
  static constexpr float eps = 1e-5f;
  static constexpr float momentum = 0.1f;
  static constexpr float unbias = 1.0f;
};

/// Runs `kernel` on the partial kernels' (tiles x splits) grid. The
/// emulation's grid is one-dimensional: block b is (b % tiles, b / tiles).
template <class C, class Kernel> void launchPartials(const Kernel &kernel) {
  const unsigned tiles = unsigned(tiles_of(C::channels, C::inner, C::vec));
  const unsigned splits = unsigned(C::splits);
  emu::launch(tiles * splits, unsigned(kThreads), [&] {
    launch_ctx ctx = this_launch();
    const unsigned b = ctx.block.x;
    ctx.block = make_uint3(b % tiles, b / tiles, 0);
    ctx.grid = make_uint3(tiles, splits, 1);
    kernel(ctx);
  });
}

/// Runs stats_partial on (tiles x splits) blocks and stats_final on the
/// channels; returns each channel's mean and variance.
template <class C>
void batchStats(const std::vector<float> &x, std::vector<float> &mean,
                std::vector<float> &var) {
  std::vector<welford> partial(size_t(C::splits * C::per_split));
  launchPartials<C>([&](const launch_ctx &ctx) {
    stats_partial<C>(ctx, x.data(), partial.data());
  });
  std::vector<float> coef(kNormFields * C::channels);
  mean.assign(C::channels, 0.f);
  var.assign(C::channels, 0.f);
  emu::launch(unsigned(channel_blocks(C::channels)), unsigned(kChannelThreads),
              [&] {
                stats_final<C>(this_launch(), x.data(), partial.data(),
                               (const float *)nullptr, coef.data(), mean.data(),
                               var.data(), (const float *)nullptr,
                               (const float *)nullptr, (float *)nullptr,
                               (float *)nullptr);
              });
}

/// Runs grad_partial on (tiles x splits) blocks and grad_final on the
/// channels; returns each channel's sums of g and g * x-hat and the
/// coefficients of the input gradient (gamma = 1).
template <class C>
void gradSums(const std::vector<float> &g, const std::vector<float> &x,
              std::vector<float> &sumG, std::vector<float> &sumGx,
              std::vector<float> &coef) {
  std::vector<grad_sums> partial(size_t(C::splits * C::per_split));
  launchPartials<C>([&](const launch_ctx &ctx) {
    grad_partial<C>(ctx, g.data(), x.data(), partial.data());
  });
  sumG.assign(C::channels, 0.f);
  sumGx.assign(C::channels, 0.f);
  coef.assign(kDxFields * C::channels, 0.f);
  const std::vector<float> gamma(C::channels, 1.f);
  emu::launch(
      unsigned(channel_blocks(C::channels)), unsigned(kChannelThreads), [&] {
        grad_final<C>(this_launch(), x.data(), partial.data(), gamma.data(),
                      sumGx.data(), sumG.data(), coef.data());
      });
}

/// The one pass of batch_norm_backward against f64: the statistics of x
/// (whose mean is large against its spread) and the sums over x-hat.
template <class C> void expectGradSums(unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<float> g(size_t(C::elements)), x(g.size());
  for (size_t i = 0; i < g.size(); ++i)
    g[i] = normal(rng), x[i] = 20.f + 2.f * normal(rng);
  std::vector<float> sumG, sumGx;
  std::vector<float> coef;
  gradSums<C>(g, x, sumG, sumGx, coef);
  for (long long c = 0; c < C::channels; ++c) {
    auto at = [&](long long o, long long i) {
      return size_t((o * C::channels + c) * C::inner + i);
    };
    double sum = 0, squares = 0;
    for (long long o = 0; o < C::outer; ++o)
      for (long long i = 0; i < C::inner; ++i)
        sum += x[at(o, i)];
    const double mean = sum / double(C::count);
    for (long long o = 0; o < C::outer; ++o)
      for (long long i = 0; i < C::inner; ++i)
        squares += (x[at(o, i)] - mean) * (x[at(o, i)] - mean);
    const double rstd = 1 / std::sqrt(squares / double(C::count) + 1e-5);
    double eg = 0, egx = 0, scale = 0;
    for (long long o = 0; o < C::outer; ++o)
      for (long long i = 0; i < C::inner; ++i) {
        const double xh = (double(x[at(o, i)]) - mean) * rstd;
        eg += g[at(o, i)];
        egx += g[at(o, i)] * xh;
        scale += std::fabs(g[at(o, i)] * xh);
      }
    auto field = [&](int f) { return coef[size_t(f * C::channels + c)]; };
    EXPECT_NEAR(field(kDxMean), mean, 1e-5 * std::fabs(mean))
        << "channel " << c;
    EXPECT_NEAR(field(kDxRstd), rstd, 1e-4 * rstd) << "channel " << c;
    EXPECT_NEAR(sumG[c], eg, 1e-5 * double(C::count)) << "channel " << c;
    EXPECT_NEAR(sumGx[c], egx, 1e-5 * scale) << "channel " << c;
    EXPECT_NEAR(field(kDxMgx), egx / double(C::count), 1e-5 * scale / C::count)
        << "channel " << c;
  }
}

template <class C> void expectStatistics(unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.5f, 2.0f);
  std::vector<float> x(size_t(C::elements));
  for (float &v : x)
    v = normal(rng);
  std::vector<float> mean, var;
  batchStats<C>(x, mean, var);
  for (long long c = 0; c < C::channels; ++c) {
    double sum = 0, squares = 0;
    for (long long o = 0; o < C::outer; ++o)
      for (long long i = 0; i < C::inner; ++i)
        sum += x[size_t((o * C::channels + c) * C::inner + i)];
    const double m = sum / double(C::count);
    for (long long o = 0; o < C::outer; ++o)
      for (long long i = 0; i < C::inner; ++i) {
        const double d = x[size_t((o * C::channels + c) * C::inner + i)] - m;
        squares += d * d;
      }
    EXPECT_NEAR(mean[c], m, 1e-5 * (1 + std::fabs(m))) << "channel " << c;
    EXPECT_NEAR(var[c], squares / double(C::count), 1e-4 * squares / C::count)
        << "channel " << c;
  }
}

TEST(BatchNormKernels, ColumnModeStatisticsOverElevenSplits) {
  // 700 rows of 6 channels in chunks of 64: 11 partials per channel.
  using C = Cfg<700, 6, 1, 64>;
  static_assert(C::columns && C::splits == 11, "the case the test is for");
  expectStatistics<C>(1);
}

TEST(BatchNormKernels, VectorColumnStatistics) {
  // Channels last, four channels per access (f32): 24 channels make six
  // vector columns of a block; 11 partials per channel, fewer than the
  // lanes that combine them.
  using C = Cfg<700, 24, 1, 64, 4>;
  static_assert(C::columns && C::vec == 4 && C::cols == 8 && C::splits == 11,
                "the case the test is for");
  expectStatistics<C>(3);
  // 141 partials per channel: every lane merges several, in order.
  using D = Cfg<9000, 8, 1, 64, 4>;
  static_assert(D::vec == 4 && D::splits == 141, "the case the test is for");
  expectStatistics<D>(4);
}

TEST(BatchNormKernels, BatchedRowsAndTheirRemainder) {
  // 64 f32 channels, four per access: 16 row lanes over chunks of 300 rows
  // load two batches of 8 rows each and add the rest one by one.
  using C = Cfg<3000, 64, 1, 300, 4>;
  static_assert(C::vec == 4 && C::lanes == 16 && C::splits == 10,
                "the case the test is for");
  expectStatistics<C>(6);
  expectGradSums<C>(7);
  // Segments: 256 lanes over chunks of 8200 elements of a channel.
  using S = Cfg<4, 3, 4100, 8200>;
  static_assert(!S::columns && S::splits == 2, "the case the test is for");
  expectStatistics<S>(8);
  expectGradSums<S>(9);
  // Scalar columns (6 channels): 32 columns by 8 lanes.
  using D = Cfg<700, 6, 1, 64>;
  expectGradSums<D>(10);
}

/// normalize and input_grad on `blocks` blocks against their formulas.
template <class C> void expectElementwise(unsigned blocks, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  const size_t n = size_t(C::channels);
  std::vector<float> x(size_t(C::elements)), g(x.size()), beta(n),
      y(x.size()), dx(x.size()), coef(kNormFields * n), dcoef(kDxFields * n);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = normal(rng), g[i] = normal(rng);
  for (float &v : beta)
    v = normal(rng);
  // Scales and rstd near 1, the other fields anywhere.
  for (size_t c = 0; c < n; ++c) {
    coef[kNormMean * n + c] = normal(rng);
    coef[kNormScale * n + c] = 1.f + 0.1f * normal(rng);
    for (int f = 0; f < kDxFields; ++f)
      dcoef[f * n + c] = f == kDxRstd ? 1.f + 0.1f * normal(rng) : normal(rng);
  }
  emu::launch(blocks, unsigned(kThreads), [&] {
    normalize<C>(this_launch(), x.data(), coef.data(), beta.data(), y.data());
  });
  emu::launch(blocks, unsigned(kThreads), [&] {
    input_grad<C>(this_launch(), g.data(), x.data(), dcoef.data(), dx.data());
  });
  for (size_t i = 0; i < x.size(); ++i) {
    const size_t c = size_t(i / C::inner) % n;
    EXPECT_FLOAT_EQ(y[i], (x[i] - coef[kNormMean * n + c]) *
                                  coef[kNormScale * n + c] +
                              beta[c])
        << i;
    auto k = [&](int f) { return dcoef[f * n + c]; };
    const float xh = (x[i] - k(kDxMean)) * k(kDxRstd);
    EXPECT_FLOAT_EQ(dx[i], k(kDxScale) * (g[i] - k(kDxMg) - xh * k(kDxMgx)))
        << i;
  }
}

TEST(BatchNormKernels, ChannelsLastElementwiseKeepsEachThreadsChannels) {
  // 64 channels last in vectors of 4: two blocks stride 2048 elements,
  // whole rows, so each thread reads its channels' coefficients once; 3
  // blocks of 24 channels too; 72 channels on two blocks do not divide the
  // stride and read them per vector, as channels first ([5, 12, 9]) does.
  expectElementwise<Cfg<300, 64, 1, 64, 4>>(2, 11);
  expectElementwise<Cfg<500, 24, 1, 64, 4>>(3, 12);
  expectElementwise<Cfg<100, 72, 1, 64, 4>>(2, 13);
  expectElementwise<Cfg<5, 12, 9, 64, 4>>(2, 14);
}

TEST(BatchNormKernels, SegmentModeStatisticsOverNineSplits) {
  // 3 images of 4 channels of 12 x 12 pixels, chunks of 48 elements.
  using C = Cfg<3, 4, 144, 48>;
  static_assert(!C::columns && C::splits == 9, "the case the test is for");
  expectStatistics<C>(2);
}

} // namespace
} // namespace kiln::bn
