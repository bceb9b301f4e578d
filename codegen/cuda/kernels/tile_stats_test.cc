// A convolution's epilogue statistics (tile_stats.cuh) run thread for
// thread on the CPU (emulation/host_cuda.h): each block reduces one staged
// tile, laid out as conv_wgmma.cuh stages it (16-byte runs swizzled by
// row), into per-column partials, and batch_norm.cuh's stats_final combines
// the tiles' partials unshifted. The mean and biased variance must match
// f64 over each channel, with a last tile of few rows, a last column tile
// that is cut short, data whose mean is far larger than its spread, and
// block shapes where the threads split the rows into two to eight parts.

#include "kiln/batch_norm.cuh"
#include "kiln/tile_stats.cuh"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace kiln::bn {
namespace {

namespace emu = ::kiln::emulation;

template <long long Rows, long long C, long long TileRows>
struct TileCfg : config<long long, Rows, C, 1, TileRows, 8> {
  static constexpr float eps = 1e-5f;
  static constexpr float momentum = 0.1f;
  static constexpr float unbias = 1.0f;
  static constexpr bool shifted = false;
};

/// The statistics of `x` ([rows][channels] of bf16 values) through tiles of
/// BM x BN staged as the wgmma epilogue stages them, then stats_final.
template <int BM, int BN, int THREADS, long long Rows, long long C>
void tileStatistics(const std::vector<__nv_bfloat16> &x,
                    std::vector<float> &mean, std::vector<float> &var) {
  constexpr int RUN = 8;
  constexpr long long tilesM = (Rows + BM - 1) / BM, tilesN = (C + BN - 1) / BN;
  auto at = [](int lr, int lc) {
    return lr * BN + ((lc / RUN) ^ (lr & 7)) * RUN + lc % RUN;
  };
  std::vector<welford> partial(size_t(tilesM * C));
  std::vector<__nv_bfloat16> staged(size_t(BM * BN));
  for (long long tm = 0; tm < tilesM; ++tm)
    for (long long tn = 0; tn < tilesN; ++tn) {
      const int rows = int(std::min<long long>(BM, Rows - tm * BM));
      const int cols = int(std::min<long long>(BN, C - tn * BN));
      for (int lr = 0; lr < BM; ++lr)
        for (int lc = 0; lc < BN; ++lc)
          staged[size_t(at(lr, lc))] =
              lr < rows && lc < cols
                  ? x[size_t((tm * BM + lr) * C + tn * BN + lc)]
                  : __float2bfloat16_rn(0.f);
      emu::launch(1, unsigned(THREADS), [&] {
        tile_column_stats<BM, BN, THREADS>(
            int(this_launch().thread.x), staged.data(), at, rows, cols,
            partial.data() + tm * C + tn * BN, [] { __syncthreads(); });
      });
    }
  using Cfg = TileCfg<Rows, C, BM>;
  static_assert(Cfg::splits == tilesM, "a split per row tile");
  std::vector<float> coef(kNormFields * C);
  mean.assign(C, 0.f);
  var.assign(C, 0.f);
  emu::launch(unsigned(channel_blocks(C)), unsigned(kChannelThreads), [&] {
    stats_final<Cfg>(this_launch(), x.data(), partial.data(),
                     (const float *)nullptr, coef.data(), mean.data(),
                     var.data(), (const float *)nullptr, (const float *)nullptr,
                     (float *)nullptr, (float *)nullptr);
  });
}

template <int BM, int BN, int THREADS, long long Rows, long long C>
void expectTileStatistics(unsigned seed, float offset) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<__nv_bfloat16> x(size_t(Rows * C));
  std::vector<float> channelMean(C);
  for (float &m : channelMean)
    m = offset + normal(rng);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = __float2bfloat16_rn(channelMean[i % C] + 0.5f * normal(rng));
  std::vector<float> mean, var;
  tileStatistics<BM, BN, THREADS, Rows, C>(x, mean, var);
  for (long long c = 0; c < C; ++c) {
    double sum = 0, squares = 0;
    for (long long r = 0; r < Rows; ++r)
      sum += double(__bfloat162float(x[size_t(r * C + c)]));
    const double m = sum / double(Rows);
    for (long long r = 0; r < Rows; ++r) {
      const double d = double(__bfloat162float(x[size_t(r * C + c)])) - m;
      squares += d * d;
    }
    const double v = squares / double(Rows);
    EXPECT_NEAR(mean[c], m, 2e-6 * (1 + std::fabs(m))) << "channel " << c;
    EXPECT_NEAR(var[c], v, 1e-4 * v) << "channel " << c;
  }
}

TEST(TileStatistics, TwoWarpgroupsOf128x128InFourRowParts) {
  // 900 rows: seven whole tiles and one of 4 rows; 72 channels: the column
  // tile is cut short.
  expectTileStatistics<128, 128, 256, 900, 72>(1, 0.f);
}

TEST(TileStatistics, EightRowPartsOfNarrowTiles) {
  expectTileStatistics<128, 64, 256, 333, 128>(2, 0.f);
}

TEST(TileStatistics, OneWarpgroupInTwoRowParts) {
  expectTileStatistics<64, 128, 128, 200, 128>(3, 0.f);
}

TEST(TileStatistics, LargeMeanAgainstItsSpread) {
  // Means near 40 with a spread of 0.5: bf16 steps of 0.25 still leave a
  // variance that sums of squares in f32 would lose.
  expectTileStatistics<128, 64, 256, 700, 64>(4, 40.f);
}

} // namespace
} // namespace kiln::bn
