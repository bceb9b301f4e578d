#include "runtime/random/philox.h"

#include <gtest/gtest.h>

#include <cmath>

namespace kiln {
namespace {

// Known-answer vectors of Philox4x32-10 from the Random123 distribution.
TEST(Philox, KnownAnswerZeros) {
  PhiloxBlock out = Philox4x32_10({0, 0, 0, 0}, {0, 0});
  EXPECT_EQ(out, (PhiloxBlock{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
}

TEST(Philox, KnownAnswerOnes) {
  PhiloxBlock out =
      Philox4x32_10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
                    {0xffffffff, 0xffffffff});
  EXPECT_EQ(out, (PhiloxBlock{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
}

TEST(Philox, KnownAnswerPi) {
  PhiloxBlock out =
      Philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
                    {0xa4093822, 0x299f31d0});
  EXPECT_EQ(out, (PhiloxBlock{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

TEST(RandomStream, UniformRangeAndMoments) {
  RandomStream stream{/*seed=*/1234567, /*stream=*/3, /*offset=*/9};
  const int n = 200000;
  double sum = 0, sumSq = 0;
  for (int i = 0; i < n; ++i) {
    double u = stream.Uniform(i);
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
    sumSq += u * u;
  }
  double mean = sum / n, var = sumSq / n - mean * mean;
  EXPECT_NEAR(mean, 0.5, 0.005);
  EXPECT_NEAR(var, 1.0 / 12.0, 0.002);
}

TEST(RandomStream, NormalMoments) {
  RandomStream stream{/*seed=*/42, /*stream=*/0, /*offset=*/0};
  const int n = 200000;
  double sum = 0, sumSq = 0;
  for (int i = 0; i < n; ++i) {
    double x = stream.Normal(i);
    ASSERT_TRUE(std::isfinite(x));
    sum += x;
    sumSq += x * x;
  }
  EXPECT_NEAR(sum / n, 0.0, 0.01);
  EXPECT_NEAR(sumSq / n, 1.0, 0.01);
}

TEST(RandomStream, StreamsAndOffsetsDiffer) {
  RandomStream a{7, 0, 0}, b{7, 1, 0}, c{7, 0, 1}, d{8, 0, 0};
  int same = 0;
  for (int i = 0; i < 64; ++i) {
    same += a.Word(i) == b.Word(i);
    same += a.Word(i) == c.Word(i);
    same += a.Word(i) == d.Word(i);
  }
  EXPECT_EQ(same, 0);
}

TEST(RandomStream, ElementIsAPureFunctionOfItsIndex) {
  RandomStream s{99, 5, 11};
  EXPECT_EQ(s.Word(1000003), s.Word(1000003));
  PhiloxBlock block = Philox4x32_10({250000, 5, 11, 0}, {99, 0});
  EXPECT_EQ(s.Word(1000002), block[2]);
}

}  // namespace
}  // namespace kiln
