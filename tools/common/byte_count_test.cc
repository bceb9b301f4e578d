#include "tools/common/byte_count.h"

#include <cstdint>
#include <random>

#include "gtest/gtest.h"

namespace kiln {
namespace {

TEST(ByteCountTest, PlainBytesAndUnits) {
  EXPECT_EQ(ParseByteCount("0"), 0u);
  EXPECT_EQ(ParseByteCount("4096"), 4096u);
  EXPECT_EQ(ParseByteCount("4096B"), 4096u);
  EXPECT_EQ(ParseByteCount("3KB"), 3000u);
  EXPECT_EQ(ParseByteCount("3MB"), 3000000u);
  EXPECT_EQ(ParseByteCount("3GB"), 3000000000u);
  EXPECT_EQ(ParseByteCount("3KiB"), 3u << 10);
  EXPECT_EQ(ParseByteCount("437MiB"), uint64_t{437} << 20);
  EXPECT_EQ(ParseByteCount("80GiB"), uint64_t{80} << 30);
}

TEST(ByteCountTest, RejectsWhatIsNotACount) {
  for (const char *text : {"", "MiB", "-1", "1.5GiB", "12 MiB", "12mib",
                           "12TiB", "0x10", "1e6", "12MiBs", " 12"}) {
    EXPECT_EQ(ParseByteCount(text), std::nullopt) << text;
  }
}

TEST(ByteCountTest, RejectsCountsPast64Bits) {
  EXPECT_EQ(ParseByteCount("18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(ParseByteCount("18446744073709551616"), std::nullopt);
  EXPECT_EQ(ParseByteCount("17179869184GiB"), std::nullopt); // 2^34 GiB
  EXPECT_EQ(ParseByteCount("17179869183GiB"), uint64_t{17179869183} << 30);
}

TEST(ByteCountTest, FormatUsesTheLargestBinaryUnitAndRoundTrips) {
  EXPECT_EQ(FormatByteCount(0), "0");
  EXPECT_EQ(FormatByteCount(1000), "1000");
  EXPECT_EQ(FormatByteCount(25u << 20), "25MiB");
  EXPECT_EQ(FormatByteCount(1u << 20), "1MiB");
  EXPECT_EQ(FormatByteCount(3u << 10), "3KiB");
  EXPECT_EQ(FormatByteCount(uint64_t{80} << 30), "80GiB");
  std::mt19937_64 rng(20261206);
  for (int i = 0; i < 1000; ++i) {
    const uint64_t bytes = rng() >> (rng() % 64);
    EXPECT_EQ(ParseByteCount(FormatByteCount(bytes)), bytes) << bytes;
  }
}

} // namespace
} // namespace kiln
