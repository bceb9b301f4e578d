#include "runtime/artifact/checksum.h"

#include "gtest/gtest.h"

namespace kiln {
namespace {

// Reference values of the FNV-1a 64 specification
// (isthe.com/chongo/tech/comp/fnv).
TEST(Fnv1a64Test, KnownVectors) {
  EXPECT_EQ(Fnv1a64(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(Fnv1a64("a"), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(Fnv1a64("foobar"), 0x85944171f73967e8ULL);
}

TEST(Fnv1a64Test, Chains) {
  // Hashing in two pieces with the first result as seed equals hashing at once.
  uint64_t h = Fnv1a64("foo", 3);
  EXPECT_EQ(Fnv1a64("bar", 3, h), Fnv1a64("foobar"));
}

TEST(Fnv1a64Test, EverySingleByteChangeIsSeen) {
  std::string s(64, '\0');
  for (int i = 0; i < 64; ++i) s[i] = static_cast<char>(i * 7);
  const uint64_t base = Fnv1a64(s);
  for (size_t i = 0; i < s.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string t = s;
      t[i] = static_cast<char>(t[i] ^ (1 << bit));
      EXPECT_NE(Fnv1a64(t), base) << i << " " << bit;
    }
  }
}

}  // namespace
}  // namespace kiln
