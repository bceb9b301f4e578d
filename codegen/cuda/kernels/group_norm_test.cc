// The group norm kernels of norm.cuh run thread for thread on the CPU
// (emulation/host_cuda.h) as ReductionEmitter.cpp launches them: the
// forward and backward row kernels over N * G rows of a sample's group of
// channels with their positions, each element scaled by its channel's
// weight (group_norm_config::param_index); then the parameter gradients:
// channels first, the per-(sample, channel) sums and the pass that adds
// them per channel; channels last ([N, S, C], group_norm_nhwc_config), the
// column kernel over N * S rows of C channels with each (sample, group)'s
// statistics, in one split or several added in order. Every result must
// match the formulas in f64, for short rows (several per block, threads
// past the last row inactive) and warp-wide rows.

#include "kiln/norm.cuh"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <type_traits>
#include <vector>

namespace kiln::reduce {
namespace {

namespace emu = ::kiln::emulation;

/// A group norm of N samples of C channels at S positions in G groups,
/// channels first ([N, C, S]) or last ([N, S, C]); channels last, the
/// parameter gradients' column kernel takes Chunk rows per split.
template <long long N, long long C, long long S, long long G,
          bool Last = false, long long Chunk = N * S>
struct Shape {
  static constexpr long long n = N, channels = C, spatial = S, groups = G;
  static constexpr long long m = C / G * S;
  static constexpr bool last = Last;
  struct Cfg
      : std::conditional_t<
            Last, group_norm_nhwc_config<long long, N * G, m, true, true, G, S>,
            group_norm_config<long long, N * G, m, true, true, G, S>> {
    static constexpr float eps = 1e-5f;
  };
  using SumCfg = row_config<long long, N * C, S>;
  using ParamCfg =
      group_norm_nhwc_param_config<long long, N * S, C, Chunk, true, true, G, S>;
  /// Where element (sample, channel, position) lies.
  static size_t at(long long sample, long long channel, long long position) {
    return size_t(Last ? (sample * S + position) * C + channel
                       : (sample * C + channel) * S + position);
  }
};

/// The parameter gradients' kernels as the emitter launches them.
template <class Sh>
void runParamGrads(const std::vector<float> &g, const std::vector<float> &x,
                   const std::vector<float2> &stats, std::vector<float> &dw,
                   std::vector<float> &db) {
  if constexpr (!Sh::last) {
    using SumCfg = typename Sh::SumCfg;
    std::vector<float2> sums(size_t(SumCfg::rows));
    emu::launch(unsigned(SumCfg::blocks), unsigned(SumCfg::threads), [&] {
      group_norm_channel_sums<SumCfg, Sh::groups, Sh::channels>(
          this_launch(), g.data(), x.data(), stats.data(), sums.data());
    });
    emu::launch(unsigned(ceil_div(Sh::channels, 256)), 256u, [&] {
      group_norm_param_final<long long, Sh::n, Sh::channels, true, true>(
          this_launch(), sums.data(), dw.data(), db.data());
    });
  } else {
    using P = typename Sh::ParamCfg;
    const uint3 grid{unsigned(P::tiles), unsigned(P::splits), 1},
        block{unsigned(kColumnTile), unsigned(kColumnSplit), 1};
    if constexpr (P::splits == 1) {
      emu::launch(grid, block, [&] {
        norm_param_grad<P>(this_launch(), g.data(), x.data(), stats.data(),
                           dw.data(), db.data());
      });
    } else {
      std::vector<float> pw(size_t(P::splits * P::m)),
          pb(size_t(P::splits * P::m));
      emu::launch(grid, block, [&] {
        norm_param_grad<P>(this_launch(), g.data(), x.data(), stats.data(),
                           pw.data(), pb.data());
      });
      emu::launch(unsigned(ceil_div(P::m, 256)), 256u, [&] {
        norm_param_grad_final<P>(this_launch(), pw.data(), dw.data(),
                                 pb.data(), db.data());
      });
    }
  }
}

template <class Sh> void expectGroupNorm(unsigned seed) {
  using Cfg = typename Sh::Cfg;
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

  emu::launch(unsigned(Cfg::blocks), unsigned(Cfg::threads), [&] {
    norm_forward<Cfg>(this_launch(), x.data(), w.data(), b.data(), y.data());
  });
  emu::launch(unsigned(Cfg::blocks), unsigned(Cfg::threads), [&] {
    norm_backward<Cfg, true, true>(this_launch(), g.data(), x.data(),
                                   w.data(), dx.data(), stats.data());
  });
  runParamGrads<Sh>(g, x, stats, dw, db);

  // Row r is (sample r / G, group r % G): its channels and positions.
  const long long perGroup = Sh::channels / Sh::groups;
  std::vector<double> ew(channels, 0.0), eb(channels, 0.0);
  for (long long r = 0; r < Cfg::rows; ++r) {
    std::vector<std::pair<size_t, size_t>> elements; // (index, channel)
    for (long long c = (r % Sh::groups) * perGroup;
         c < (r % Sh::groups + 1) * perGroup; ++c)
      for (long long s = 0; s < Sh::spatial; ++s)
        elements.push_back({Sh::at(r / Sh::groups, c, s), size_t(c)});
    double sum = 0, sq = 0;
    for (auto [i, c] : elements)
      sum += x[i];
    const double mean = sum / Sh::m;
    for (auto [i, c] : elements)
      sq += std::pow(x[i] - mean, 2);
    const double rstd = 1 / std::sqrt(sq / Sh::m + 1e-5);
    EXPECT_NEAR(stats[size_t(r)].x, mean, 1e-5 * (1 + std::fabs(mean)));
    EXPECT_NEAR(stats[size_t(r)].y, rstd, 1e-4 * rstd);
    double sumGy = 0, sumGyXh = 0;
    for (auto [i, c] : elements) {
      const double xh = (x[i] - mean) * rstd;
      EXPECT_NEAR(y[i], xh * w[c] + b[c], 1e-4 * (1 + std::fabs(xh * w[c])))
          << "element " << i;
      sumGy += double(g[i]) * w[c];
      sumGyXh += double(g[i]) * w[c] * xh;
      ew[c] += g[i] * xh;
      eb[c] += g[i];
    }
    for (auto [i, c] : elements) {
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

TEST(GroupNormKernels, ChannelsLastShortRows) {
  // [2, 5, 6] in 3 groups: rows of 2 channels at 5 positions, 6 apart.
  using Sh = Shape<2, 6, 5, 3, true>;
  static_assert(Sh::ParamCfg::splits == 1, "the case the test is for");
  expectGroupNorm<Sh>(std::random_device{}());
}

TEST(GroupNormKernels, ChannelsLastWarpRowsAndSplitSums) {
  // [3, 8x8, 40] in 4 groups: rows of 10 channels at 64 positions; the
  // parameter gradients' 192 rows in splits of 24, over two column tiles.
  using Sh = Shape<3, 40, 64, 4, true, 24>;
  static_assert(Sh::Cfg::group >= 32 && Sh::ParamCfg::splits == 8 &&
                    Sh::ParamCfg::tiles == 2,
                "the case the test is for");
  expectGroupNorm<Sh>(std::random_device{}());
}

} // namespace
} // namespace kiln::reduce
