#include "runtime/io/finite.h"

#include <cmath>
#include <limits>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kiln {
namespace io {
namespace {

using ::testing::HasSubstr;

std::string MessageOf(const HostTensor& t) {
  return std::string(CheckFinite(t, "in.safetensors: input 'x'").message());
}

TEST(CheckFiniteTest, NamesTheFirstNonFiniteElement) {
  std::vector<float> v(24, 0.5f);
  EXPECT_TRUE(CheckFinite(HostTensor::F32({2, 3, 4}, v), "x").ok());
  v[13] = std::numeric_limits<float>::quiet_NaN();
  v[20] = std::numeric_limits<float>::infinity();
  HostTensor t = HostTensor::F32({2, 3, 4}, v);
  EXPECT_EQ(CheckFinite(t, "x").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(MessageOf(t),
            "in.safetensors: input 'x': element 13 [1, 0, 1] is NaN");
  v[13] = -std::numeric_limits<float>::infinity();
  t = HostTensor::F32({2, 3, 4}, v);
  t.file_offset = 1000;
  EXPECT_EQ(MessageOf(t),
            "in.safetensors: input 'x': element 13 [1, 0, 1] is -inf (file "
            "offset 1052)");
  // The largest finite value is finite.
  EXPECT_TRUE(CheckFinite(HostTensor::F32({1}, {3.4028235e38f}), "x").ok());
}

TEST(CheckFiniteTest, HalfWidthFloatsAndOtherTypes) {
  // bf16 +inf 0x7f80, NaN 0x7fc1; f16 +inf 0x7c00, NaN 0x7e00; and the
  // largest finite of each (0x7f7f, 0x7bff).
  HostTensor bf16{DType::kBF16, {3}, {0x7f, 0x7f, 0x80, 0x3f, 0x80, 0x7f}};
  EXPECT_THAT(MessageOf(bf16), HasSubstr("element 2 [2] is +inf"));
  bf16.data[4] = 0xc1;
  EXPECT_THAT(MessageOf(bf16), HasSubstr("element 2 [2] is NaN"));
  HostTensor f16{DType::kF16, {2}, {0xff, 0x7b, 0x00, 0xfc}};
  EXPECT_THAT(MessageOf(f16), HasSubstr("element 1 [1] is -inf"));
  f16.data[3] = 0x7e;
  EXPECT_THAT(MessageOf(f16), HasSubstr("is NaN"));
  f16.data = {0xff, 0x7b, 0x00, 0x3c};
  EXPECT_TRUE(CheckFinite(f16, "x").ok());
  // Integers are never refused, whatever their bits.
  EXPECT_TRUE(
      CheckFinite(HostTensor::I32({2}, {0x7f800000, 0x7fc00000}), "x").ok());
}

TEST(CheckFiniteTest, OffsetsOfTensorsReadFromAFile) {
  Safetensors st;
  st.tensors["a"] = HostTensor::F32({2}, {1.0f, 2.0f});
  st.tensors["b"] = HostTensor::F32({3}, {1.0f, std::nanf(""), 3.0f});
  absl::StatusOr<std::string> bytes = SerializeSafetensors(st);
  ASSERT_TRUE(bytes.ok());
  absl::StatusOr<Safetensors> read = ParseSafetensors(*bytes);
  ASSERT_TRUE(read.ok()) << read.status();
  const HostTensor& b = read->tensors.at("b");
  // The reported offset holds the NaN's bytes.
  const std::string message = std::string(CheckFinite(b, "b").message());
  const size_t at = message.find("file offset ");
  ASSERT_NE(at, std::string::npos) << message;
  const uint64_t offset = std::stoull(message.substr(at + 12));
  float value;
  std::memcpy(&value, bytes->data() + offset, 4);
  EXPECT_TRUE(std::isnan(value)) << message;
}

}  // namespace
}  // namespace io
}  // namespace kiln
