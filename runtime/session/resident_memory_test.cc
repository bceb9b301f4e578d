#include "runtime/session/resident_memory.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace kiln {
namespace session_internal {
namespace {

artifact::ResidentBuffer Buffer(const std::string& name, uint64_t bytes) {
  artifact::ResidentBuffer b;
  b.name = name;
  b.byte_size = bytes;
  return b;
}

constexpr size_t kGiB = size_t{1} << 30;

TEST(CheckResidentsFit, BuffersThatFitPass) {
  EXPECT_TRUE(CheckResidentsFit({}, 0, 0, "gpu").ok());
  EXPECT_TRUE(
      CheckResidentsFit({Buffer("w", 1000), Buffer("b", 10)}, kGiB, kGiB, "gpu")
          .ok());
}

// A 100000 x 100000 f32 parameter on a 1 GiB device: the error names the
// buffer and its bytes.
TEST(CheckResidentsFit, ABufferLargerThanTheDeviceIsNamed) {
  const absl::Status s =
      CheckResidentsFit({Buffer("b", 400), Buffer("w", 40000000000)}, kGiB,
                        kGiB + 1, "Fake GPU (device 0)");
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(s.message(),
            "resident buffer 'w' (40000000000 bytes) is larger than the "
            "whole memory of Fake GPU (device 0) (1073741825 bytes)");
}

// Each fits the device, all of them do not fit what is free.
TEST(CheckResidentsFit, TheSumIsCheckedAgainstTheFreeMemory) {
  const absl::Status s = CheckResidentsFit(
      {Buffer("a", 600 << 20), Buffer("m", 700 << 20)}, kGiB, 2 * kGiB, "gpu");
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(s.message(),
            "the artifact's resident buffers need 1363148800 bytes, more than "
            "the 1073741824 bytes free on gpu (2147483648 in all); the "
            "largest is resident buffer 'm' (734003200 bytes)");
}

// Sizes count as the pool rounds them: 4 buffers of 257 bytes take 4 blocks
// of 320 bytes.
TEST(CheckResidentsFit, SizesAreRoundedAsThePoolRoundsThem) {
  const std::vector<artifact::ResidentBuffer> buffers(4, Buffer("x", 257));
  EXPECT_TRUE(CheckResidentsFit(buffers, 1280, kGiB, "gpu").ok());
  EXPECT_FALSE(CheckResidentsFit(buffers, 1279, kGiB, "gpu").ok());
}

// Sizes near 2^64 do not wrap around to a small total.
TEST(CheckResidentsFit, HugeSizesSaturate) {
  const absl::Status s = CheckResidentsFit(
      {Buffer("a", UINT64_MAX - 10), Buffer("b", 100)}, kGiB, kGiB, "gpu");
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(s.message().find("'a' (18446744073709551605 bytes) is larger"),
            absl::string_view::npos)
      << s.message();
}

}  // namespace
}  // namespace session_internal
}  // namespace kiln
