#include "kiln/dtype.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "gtest/gtest.h"

namespace kiln {
namespace {

uint32_t Bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
float FromBits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

TEST(DTypeTest, SizesAndNames) {
  EXPECT_EQ(DTypeSize(DType::kF32), 4u);
  EXPECT_EQ(DTypeSize(DType::kBF16), 2u);
  EXPECT_EQ(DTypeSize(DType::kF16), 2u);
  EXPECT_EQ(DTypeSize(DType::kI32), 4u);
  EXPECT_EQ(DTypeSize(DType::kI1), 1u);
  EXPECT_EQ(DTypeSize(DType::kI64), 8u);
  EXPECT_EQ(DTypeName(DType::kI64), "i64");
  for (DType d : {DType::kF32, DType::kBF16, DType::kF16, DType::kI32,
                  DType::kI1, DType::kI64}) {
    auto parsed = ParseDType(DTypeName(d));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, d);
  }
  EXPECT_EQ(*ParseDType("bool"), DType::kI1);
  auto bad = ParseDType("f64");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("unknown dtype 'f64'"),
            std::string::npos);
}

TEST(Bf16Test, ExactValuesRoundTrip) {
  for (float f : {0.0f, -0.0f, 1.0f, -2.5f, 0.15625f, 65536.0f, 3.0e38f}) {
    uint16_t h = F32ToBf16(f);
    if (Bits(f) & 0xffff) continue;
    EXPECT_EQ(Bf16ToF32(h), f);
  }
  EXPECT_EQ(F32ToBf16(1.0f), 0x3f80);
  EXPECT_EQ(F32ToBf16(-2.0f), 0xc000);
}

TEST(Bf16Test, RoundsToNearestEven) {
  // 1 + 2^-8 is exactly halfway between bf16 1.0 and 1 + 2^-7: even is 1.0.
  EXPECT_EQ(F32ToBf16(FromBits(0x3f808000)), 0x3f80);
  // Halfway above an odd mantissa rounds up to even.
  EXPECT_EQ(F32ToBf16(FromBits(0x3f818000)), 0x3f82);
  // Just above halfway rounds up, just below rounds down.
  EXPECT_EQ(F32ToBf16(FromBits(0x3f808001)), 0x3f81);
  EXPECT_EQ(F32ToBf16(FromBits(0x3f807fff)), 0x3f80);
  // The largest finite f32 rounds up to infinity.
  EXPECT_EQ(F32ToBf16(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(F32ToBf16(std::numeric_limits<float>::infinity()), 0x7f80);
  EXPECT_EQ(F32ToBf16(-std::numeric_limits<float>::infinity()), 0xff80);
}

TEST(Bf16Test, NanStaysNan) {
  // A NaN whose payload lies only in the dropped bits must not become inf.
  float nan = FromBits(0x7f800001);
  EXPECT_TRUE(std::isnan(Bf16ToF32(F32ToBf16(nan))));
  EXPECT_TRUE(std::isnan(Bf16ToF32(F32ToBf16(-std::nanf("")))));
  EXPECT_TRUE(std::signbit(Bf16ToF32(F32ToBf16(-std::nanf("")))));
}

TEST(Bf16Test, MatchesReferenceRounding) {
  // Reference: pick the nearer of the two neighbouring bf16 values in double
  // precision, ties to the even one.
  std::mt19937 rng(3);
  for (int i = 0; i < 200000; ++i) {
    uint32_t bits = rng();
    float f = FromBits(bits);
    if (!std::isfinite(f)) continue;
    uint32_t low = bits & 0xffff0000u;
    uint32_t high = low + 0x10000u;
    double dl = Bf16ToF32(low >> 16);
    double dh = FromBits(high);
    // Past the largest finite value the next step is 2^128 (rounding there
    // overflows to infinity, as IEEE rounding with unbounded exponent does).
    if (std::isinf(dh)) dh = std::copysign(std::ldexp(1.0, 128), dh);
    double df = f;
    uint16_t expected;
    double el = std::fabs(df - dl), eh = std::fabs(dh - df);
    if (el < eh)
      expected = low >> 16;
    else if (eh < el)
      expected = high >> 16;
    else
      expected = ((low >> 16) & 1) ? high >> 16 : low >> 16;
    if ((bits & 0xffff) == 0) expected = bits >> 16;
    ASSERT_EQ(F32ToBf16(f), expected) << std::hex << bits;
  }
}

TEST(F16Test, AllHalfValuesRoundTripExactly) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float f = F16ToF32(static_cast<uint16_t>(h));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(F16ToF32(F32ToF16(f)))) << h;
      continue;
    }
    ASSERT_EQ(F32ToF16(f), h) << std::hex << h;
  }
}

TEST(F16Test, KnownValues) {
  EXPECT_EQ(F16ToF32(0x3c00), 1.0f);
  EXPECT_EQ(F16ToF32(0xc000), -2.0f);
  EXPECT_EQ(F16ToF32(0x7bff), 65504.0f);
  EXPECT_EQ(F16ToF32(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(F16ToF32(0x0400), std::ldexp(1.0f, -14));  // smallest normal
  EXPECT_TRUE(std::isinf(F16ToF32(0x7c00)));
  EXPECT_EQ(F32ToF16(65504.0f), 0x7bff);
  EXPECT_EQ(F32ToF16(65520.0f), 0x7c00);  // halfway to 65536 rounds to inf
  EXPECT_EQ(F32ToF16(65519.0f), 0x7bff);
  EXPECT_EQ(F32ToF16(1e10f), 0x7c00);
  EXPECT_EQ(F32ToF16(-1e10f), 0xfc00);
  EXPECT_EQ(F32ToF16(std::ldexp(1.0f, -25)), 0x0000);  // tie to even (0)
  EXPECT_EQ(F32ToF16(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(F32ToF16(std::ldexp(3.0f, -25)), 0x0002);  // 1.5 ulp: tie to even
  EXPECT_EQ(F32ToF16(std::ldexp(1.0f, -26)), 0x0000);
  EXPECT_EQ(F32ToF16(-0.0f), 0x8000);
  EXPECT_EQ(F32ToF16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);  // tie: even
  EXPECT_EQ(F32ToF16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
}

TEST(F16Test, MatchesReferenceRounding) {
  // Reference: brute force nearest among all finite halves around the value.
  std::mt19937 rng(5);
  for (int i = 0; i < 100000; ++i) {
    // Values spread over the half range, subnormals included.
    float f = std::ldexp(static_cast<float>(rng() % 100000) / 100000.0f + 0.5f,
                         static_cast<int>(rng() % 44) - 28);
    if (rng() & 1) f = -f;
    uint16_t got = F32ToF16(f);
    double best_err = 1e300;
    uint16_t best = 0;
    uint16_t center = got & 0x7fff;
    for (int delta = -2; delta <= 2; ++delta) {
      int c = static_cast<int>(center) + delta;
      if (c < 0 || c > 0x7c00) continue;
      uint16_t cand = static_cast<uint16_t>(c) | (got & 0x8000);
      double err = std::fabs(static_cast<double>(F16ToF32(cand)) - f);
      if (c == 0x7c00) err = std::fabs(f) >= 65520.0 ? 0 : 1e300;
      if (err < best_err || (err == best_err && (cand & 1) == 0)) {
        best_err = err;
        best = cand;
      }
    }
    ASSERT_EQ(got, best) << f;
  }
}

}  // namespace
}  // namespace kiln
