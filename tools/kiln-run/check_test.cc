#include "tools/kiln-run/check.h"

#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/io/safetensors.h"

namespace kiln {
namespace {

using HostTensors = std::map<std::string, io::HostTensor>;

io::HostTensor F32(std::vector<float> values) {
  io::HostTensor t;
  t.dtype = DType::kF32;
  t.shape = {static_cast<int64_t>(values.size())};
  t.data.resize(values.size() * sizeof(float));
  std::memcpy(t.data.data(), values.data(), t.data.size());
  return t;
}

// CheckTensors's verdict and the lines it printed.
std::pair<bool, std::string> Checked(const HostTensors& actual,
                                     const HostTensors& expected,
                                     const CheckTolerance& tolerance = {}) {
  testing::internal::CaptureStdout();
  const bool ok = CheckTensors(actual, expected, tolerance);
  return {ok, testing::internal::GetCapturedStdout()};
}

TEST(CheckTest, EqualTensorsMatch) {
  const auto [ok, out] =
      Checked({{"y", F32({1, 2, INFINITY})}}, {{"y", F32({1, 2, INFINITY})}});
  EXPECT_TRUE(ok);
  EXPECT_EQ(out,
            "check y: ok (3 elements, max abs err 0, max rel err 0, "
            "max err / max |expected| 0)\n");
}

TEST(CheckTest, DifferenceWithinToleranceMatches) {
  const auto [ok, out] =
      Checked({{"y", F32({1.001f})}}, {{"y", F32({1})}}, {.rtol = 1e-2});
  EXPECT_TRUE(ok);
  EXPECT_NE(out.find("check y: ok (1 elements"), std::string::npos) << out;
}

TEST(CheckTest, MismatchNamesTheFirstElementAndCountsNaN) {
  const auto [ok, out] =
      Checked({{"y", F32({1, 5, NAN})}}, {{"y", F32({1, 2, 3})}});
  EXPECT_FALSE(ok);
  EXPECT_NE(out.find("check y: MISMATCH 2 of 3 elements (1 NaN); first at 1: "
                     "5 vs expected 2;"),
            std::string::npos)
      << out;
}

TEST(CheckTest, ScaledAtolIsRelativeToTheLargestExpectedValue) {
  const HostTensors actual = {{"y", F32({0.5f, 100})}};
  const HostTensors expected = {{"y", F32({0, 100})}};
  EXPECT_FALSE(Checked(actual, expected, {.rtol = 0, .atol = 1e-2}).first);
  EXPECT_TRUE(
      Checked(actual, expected, {.rtol = 0, .atol = 1e-2, .scaled_atol = true})
          .first);
}

// Graph 1796624847:10's bf16 AdamW case on the GPU: grad.p1's terms cancel
// (1e-17 in f64), bf16 gives 0; grad.p2 is 1.
constexpr CheckTolerance kSharedGradientScale = {.rtol = 0.1,
                                                 .atol = 0.05,
                                                 .scaled_atol = true,
                                                 .shared_gradient_scale = true};

TEST(CheckTest, CancellingGradientIsCheckedOnTheLargestGradientsScale) {
  const HostTensors expected = {{"grad.p1", F32({3.3e-17f, -1e-17f})},
                                {"grad.p2", F32({1})}};
  const HostTensors actual = {{"grad.p1", F32({0, 2e-10f})},
                              {"grad.p2", F32({1})}};
  EXPECT_FALSE(Checked(actual, expected,
                       {.rtol = 0.1, .atol = 0.05, .scaled_atol = true})
                   .first);
  const auto [ok, out] = Checked(actual, expected, kSharedGradientScale);
  EXPECT_TRUE(ok) << out;
  EXPECT_NE(out.find("max err / largest |expected gradient| 2e-10"),
            std::string::npos)
      << out;
}

TEST(CheckTest, SharedGradientScaleStillRejectsAWrongGradient) {
  // Off by 0.06 of the largest gradient: more than bf16's rounding makes.
  const HostTensors expected = {{"grad.p1", F32({0.01f, 0})},
                                {"grad.p2", F32({1})}};
  const auto [ok, out] =
      Checked({{"grad.p1", F32({0.01f, 0.06f})}, {"grad.p2", F32({1})}},
              expected, kSharedGradientScale);
  EXPECT_FALSE(ok);
  EXPECT_NE(out.find("check grad.p1: MISMATCH 1 of 2 elements"),
            std::string::npos)
      << out;
  // A wrong largest gradient fails on its own relative tolerance.
  EXPECT_FALSE(Checked({{"grad.p1", F32({0.01f, 0})}, {"grad.p2", F32({1.2f})}},
                       expected, kSharedGradientScale)
                   .first);
}

TEST(CheckTest, OutputsOtherThanGradientsKeepTheirOwnScale) {
  // The loss is no gradient: its miss of 0.5 is measured by its own 1, not
  // by grad.p2's 100.
  const HostTensors expected = {{"loss", F32({1})}, {"grad.p2", F32({100})}};
  EXPECT_FALSE(Checked({{"loss", F32({1.5f})}, {"grad.p2", F32({100})}},
                       expected, kSharedGradientScale)
                   .first);
}

TEST(CheckTest, MissingAndMisshapenTensorsFail) {
  io::HostTensor matrix = F32({1, 2});
  matrix.shape = {1, 2};
  const auto [ok, out] =
      Checked({{"y", matrix}}, {{"y", F32({1, 2})}, {"z", F32({1})}});
  EXPECT_FALSE(ok);
  EXPECT_EQ(out,
            "check y: SHAPE [1, 2], expected [2]\n"
            "check z: MISSING (no output of that name)\n");
}

TEST(CheckTest, AsDoublesReadsIntegers) {
  io::HostTensor t;
  t.dtype = DType::kI64;
  t.shape = {2};
  const int64_t values[] = {-3, int64_t{1} << 40};
  t.data.resize(sizeof(values));
  std::memcpy(t.data.data(), values, sizeof(values));
  EXPECT_EQ(AsDoubles(t), (std::vector<double>{-3, 1099511627776.0}));
}

}  // namespace
}  // namespace kiln
