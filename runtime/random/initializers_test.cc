#include "runtime/random/initializers.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace kiln {
namespace {

TEST(Fans, ByRank) {
  EXPECT_EQ(Fans({}), std::make_pair(int64_t{1}, int64_t{1}));
  EXPECT_EQ(Fans({7}), std::make_pair(int64_t{7}, int64_t{7}));
  EXPECT_EQ(Fans({64, 256}), std::make_pair(int64_t{64}, int64_t{256}));
  EXPECT_EQ(Fans({16, 3, 5, 5}), std::make_pair(int64_t{75}, int64_t{400}));
}

TEST(InitialValues, ConstantKinds) {
  EXPECT_EQ(InitialValues(InitKind::kZeros, 0, 0, {3}, 1, 0),
            std::vector<double>(3, 0.0));
  EXPECT_EQ(InitialValues(InitKind::kOnes, 0, 0, {2, 2}, 1, 0),
            std::vector<double>(4, 1.0));
  EXPECT_EQ(InitialValues(InitKind::kConstant, 0.25, 0, {2}, 1, 0),
            std::vector<double>(2, 0.25));
}

TEST(InitialValues, XavierBoundAndSpread) {
  std::vector<double> v =
      InitialValues(InitKind::kXavier, 1.0, 0, {64, 256}, 9, 3);
  double bound = std::sqrt(6.0 / 320.0), sum_sq = 0;
  for (double x : v) {
    ASSERT_LE(std::abs(x), bound);
    sum_sq += x * x;
  }
  // Variance of U(-a, a) is a^2 / 3.
  EXPECT_NEAR(sum_sq / v.size(), bound * bound / 3, 0.05 * bound * bound);
}

TEST(InitialValues, KaimingAndNormalMoments) {
  std::vector<double> k =
      InitialValues(InitKind::kKaiming, 2.0, 0, {100, 400}, 5, 1);
  double sum_sq = 0;
  for (double x : k) sum_sq += x * x;
  EXPECT_NEAR(sum_sq / k.size(), 4.0 / 100, 0.002);
  std::vector<double> n =
      InitialValues(InitKind::kNormal, 3.0, 0.5, {20000}, 5, 2);
  double sum = 0;
  for (double x : n) sum += x;
  EXPECT_NEAR(sum / n.size(), 3.0, 0.02);
}

TEST(InitialValues, SeedAndStreamSelectTheNumbers) {
  auto a = InitialValues(InitKind::kUniform, -1, 1, {16}, 1, 0);
  EXPECT_EQ(a, InitialValues(InitKind::kUniform, -1, 1, {16}, 1, 0));
  EXPECT_NE(a, InitialValues(InitKind::kUniform, -1, 1, {16}, 2, 0));
  EXPECT_NE(a, InitialValues(InitKind::kUniform, -1, 1, {16}, 1, 1));
  for (double x : a) {
    EXPECT_GE(x, -1);
    EXPECT_LT(x, 1);
  }
}

// A range is the same numbers as the whole parameter's slice: the runtime
// initialises a parameter too large for one host vector piece by piece.
TEST(InitialValues, RangeIsASliceOfTheWhole) {
  const std::vector<int64_t> shape = {37, 29};
  for (InitKind kind : {InitKind::kZeros, InitKind::kOnes, InitKind::kConstant,
                        InitKind::kNormal, InitKind::kUniform,
                        InitKind::kXavier, InitKind::kKaiming}) {
    const std::vector<double> whole =
        InitialValues(kind, 0.5, 2.0, shape, 11, 3);
    for (size_t begin : {size_t{0}, size_t{1}, size_t{500}, size_t{1072}}) {
      const size_t count = std::min<size_t>(101, whole.size() - begin);
      const std::vector<double> range =
          InitialValues(kind, 0.5, 2.0, shape, 11, 3, begin, count);
      EXPECT_EQ(range, std::vector<double>(whole.begin() + begin,
                                           whole.begin() + begin + count))
          << "kind " << static_cast<int>(kind) << ", begin " << begin;
    }
  }
}

}  // namespace
}  // namespace kiln
