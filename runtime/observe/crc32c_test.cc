#include "runtime/observe/crc32c.h"

#include <string>

#include "gtest/gtest.h"

namespace kiln::observe {
namespace {

// RFC 3720, appendix B.4 (CRC examples).
TEST(Crc32cTest, Rfc3720Vectors) {
  EXPECT_EQ(Crc32c(std::string(32, '\0')), 0x8a9136aau);
  EXPECT_EQ(Crc32c(std::string(32, '\xff')), 0x62a8ab43u);
  std::string ascending, descending;
  for (int i = 0; i < 32; ++i) {
    ascending += static_cast<char>(i);
    descending += static_cast<char>(31 - i);
  }
  EXPECT_EQ(Crc32c(ascending), 0x46dd794eu);
  EXPECT_EQ(Crc32c(descending), 0x113fdb5cu);
}

TEST(Crc32cTest, CheckValueAndEmpty) {
  EXPECT_EQ(Crc32c("123456789"), 0xe3069283u);
  EXPECT_EQ(Crc32c(""), 0u);
}

TEST(Crc32cTest, ExtendContinues) {
  const std::string text = "the quick brown fox jumps over the lazy dog";
  for (size_t split = 0; split <= text.size(); ++split) {
    EXPECT_EQ(ExtendCrc32c(Crc32c(text.substr(0, split)), text.substr(split)),
              Crc32c(text));
  }
}

TEST(Crc32cTest, MaskIsTfRecordsAndRoundTrips) {
  const uint32_t crc = Crc32c("123456789");
  EXPECT_EQ(MaskCrc(crc), ((crc >> 15) | (crc << 17)) + 0xa282ead8u);
  for (uint32_t value : {0u, 1u, crc, 0xffffffffu, 0x80000000u}) {
    EXPECT_EQ(UnmaskCrc(MaskCrc(value)), value);
  }
  EXPECT_NE(MaskCrc(crc), crc);
}

}  // namespace
}  // namespace kiln::observe
