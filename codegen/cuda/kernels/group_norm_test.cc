// The group norm kernels of norm.cuh run thread for thread on the CPU
// (emulation/host_cuda.h) as ReductionEmitter.cpp launches them: the
// forward and backward row kernels over N * G rows of a sample's group of
// channels with their positions, each element scaled by its channel's
// weight (group_norm_config::param_index); then the per-(sample, channel)
// sums of the parameter gradients and the pass that adds them per channel.
// Every result must match the formulas in f64, for short rows (several per
// block, threads past the last row inactive) and warp-wide rows.

#include "kiln/norm.cuh"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace kiln::reduce {
namespace {

namespace emu = ::kiln::emulation;

template <long long N, long long C, long long S, long long G>
struct Shape {
  static constexpr long long n = N, channels = C, spatial = S, groups = G;
  static constexpr long long m = C / G * S;
  struct Cfg : group_norm_config<long long, N * G, m, true, true, G, S> {
    static constexpr float eps = 1e-5f;
  };
  using SumCfg = row_config<long long, N * C, S>;
};

/// The f64 statistics of each (sample, group): mean and 1/sqrt(var + eps).
template <class Sh>
std::vector<std::pair<double, double>> groupStats(const std::vector<float> &x) {
  std::vector<std::pair<double, double>> stats;
  for (long long r = 0; r < Sh::n * Sh::groups; ++r) {
    double sum = 0, sq = 0;
    for (long long j = 0; j < Sh::m; ++j)
      sum += x[size_t(r * Sh::m + j)];
    const double mean = sum / Sh::m;
    for (long long j = 0; j < Sh::m; ++j)
      sq += std::pow(x[size_t(r * Sh::m + j)] - mean, 2);
    stats.push_back({mean, 1 / std::sqrt(sq / Sh::m + 1e-5)});
  }
  return stats;
}

template <class Sh> void expectGroupNorm(unsigned seed) {
  using Cfg = typename Sh::Cfg;
  using SumCfg = typename Sh::SumCfg;
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  const size_t size = size_t(Sh::n * Sh::channels * Sh::spatial),
               channels = size_t(Sh::channels);
  std::vector<float> x(size), g(size), w(channels), b(channels), y(size),
      dx(size), dw(channels), db(channels);
  for (size_t i = 0; i < size; ++i)
    x[i] = 2.f * normal(rng) + 0.5f, g[i] = normal(rng);
  for (size_t c = 0; c < channels; ++c)
    w[c] = 1.f + 0.3f * normal(rng), b[c] = normal(rng);
  std::vector<float2> stats(size_t(Cfg::rows));
  std::vector<float2> sums(size_t(SumCfg::rows));

  emu::launch(unsigned(Cfg::blocks), unsigned(Cfg::threads), [&] {
    norm_forward<Cfg>(this_launch(), x.data(), w.data(), b.data(), y.data());
  });
  emu::launch(unsigned(Cfg::blocks), unsigned(Cfg::threads), [&] {
    norm_backward<Cfg, true, true>(this_launch(), g.data(), x.data(),
                                   w.data(), dx.data(), stats.data());
  });
  emu::launch(unsigned(SumCfg::blocks), unsigned(SumCfg::threads), [&] {
    group_norm_channel_sums<SumCfg, Sh::groups, Sh::channels>(
        this_launch(), g.data(), x.data(), stats.data(), sums.data());
  });
  emu::launch(unsigned(ceil_div(Sh::channels, 256)), 256u, [&] {
    group_norm_param_final<long long, Sh::n, Sh::channels, true, true>(
        this_launch(), sums.data(), dw.data(), db.data());
  });

  // [N, C, S] in rows of (sample, group): element j of row r is channel
  // (r % G) * C/G + j / S.
  auto channel = [](long long r, long long j) {
    return size_t((r % Sh::groups) * (Sh::channels / Sh::groups) +
                  j / Sh::spatial);
  };
  std::vector<double> ew(channels, 0.0), eb(channels, 0.0);
  const auto expected = groupStats<Sh>(x);
  for (long long r = 0; r < Cfg::rows; ++r) {
    const auto [mean, rstd] = expected[size_t(r)];
    EXPECT_NEAR(stats[size_t(r)].x, mean, 1e-5 * (1 + std::fabs(mean)));
    EXPECT_NEAR(stats[size_t(r)].y, rstd, 1e-4 * rstd);
    double sumGy = 0, sumGyXh = 0;
    for (long long j = 0; j < Sh::m; ++j) {
      const size_t i = size_t(r * Sh::m + j), c = channel(r, j);
      const double xh = (x[i] - mean) * rstd;
      EXPECT_NEAR(y[i], xh * w[c] + b[c], 1e-4 * (1 + std::fabs(xh * w[c])))
          << "element " << i;
      sumGy += double(g[i]) * w[c];
      sumGyXh += double(g[i]) * w[c] * xh;
      ew[c] += g[i] * xh;
      eb[c] += g[i];
    }
    for (long long j = 0; j < Sh::m; ++j) {
      const size_t i = size_t(r * Sh::m + j), c = channel(r, j);
      const double xh = (x[i] - mean) * rstd;
      const double e =
          rstd * (g[i] * w[c] - sumGy / Sh::m - xh * sumGyXh / Sh::m);
      EXPECT_NEAR(dx[i], e, 1e-4 * (1 + std::fabs(e))) << "element " << i;
    }
  }
  const double count = double(Sh::n * Sh::spatial);
  for (size_t c = 0; c < channels; ++c) {
    EXPECT_NEAR(dw[c], ew[c], 1e-5 * count) << "channel " << c;
    EXPECT_NEAR(db[c], eb[c], 1e-5 * count) << "channel " << c;
  }
}

TEST(GroupNormKernels, ShortRowsWithInactiveThreads) {
  // [2, 6, 5] in 3 groups: 6 rows of 10, fewer than a block holds.
  using Sh = Shape<2, 6, 5, 3>;
  static_assert(Sh::Cfg::rows_per_block > Sh::Cfg::rows,
                "the case the test is for");
  expectGroupNorm<Sh>(std::random_device{}());
}

TEST(GroupNormKernels, WarpRowsOfSeveralChannels) {
  // [3, 8, 8x8] in 2 groups: 6 rows of 4 channels of 64 positions.
  using Sh = Shape<3, 8, 64, 2>;
  static_assert(Sh::Cfg::group >= 32, "the case the test is for");
  expectGroupNorm<Sh>(std::random_device{}());
}

} // namespace
} // namespace kiln::reduce
