#include "tools/common/version.h"

#include <regex>
#include <string>

#include "gtest/gtest.h"

namespace kiln {
namespace {

TEST(VersionTest, LineNamesProgramVersionAndCommit) {
  std::string line = VersionLine("kilnc");
  EXPECT_TRUE(std::regex_match(
      line,
      std::regex(
          R"(kilnc \d+\.\d+\.\d+ \(kiln, commit ([0-9a-f]{4,64}|unknown)\))")))
      << line;
  EXPECT_EQ(line, "kilnc " + std::string(KilnVersion()) + " (kiln, commit " +
                      std::string(BuildCommit()) + ")");
}

TEST(VersionTest, VersionIsSemantic) {
  EXPECT_TRUE(std::regex_match(std::string(KilnVersion()),
                               std::regex(R"(\d+\.\d+\.\d+)")));
}

} // namespace
} // namespace kiln
