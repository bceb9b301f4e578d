#include "tools/common/command_line.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

ABSL_FLAG(int64_t, memory_limit, 0, "cap of the pool");
ABSL_FLAG(double, lr, 1e-3, "peak learning rate");
ABSL_FLAG(bool, no_shuffle, false, "records in file order");
ABSL_FLAG(std::string, schedule, "constant", "constant | cosine");
ABSL_FLAG(std::optional<int64_t>, warmup, std::nullopt, "warm-up steps");
ABSL_FLAG(std::string, unlisted, "", "not in the usage");

namespace kiln::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Usage TestUsage() {
  Usage usage;
  usage.program = "tool";
  usage.header = "usage: tool MODEL [options]";
  usage.sections = {{"Options:", {"memory_limit", "lr", "no_shuffle"}},
                    {"More:", {"schedule", "warmup"}}};
  usage.metavars = {{"memory_limit", "BYTES"}};
  return usage;
}

class CommandLineTest : public ::testing::Test {
protected:
  absl::FlagSaver saver_;
};

TEST_F(CommandLineTest, ParsesDashedNamesBothForms) {
  auto positional =
      ParseArgs({"tool", "--memory-limit", "64", "model.kiln", "--lr=0.5",
                 "--no-shuffle", "--schedule", "cosine", "--warmup", "7"},
                TestUsage());
  ASSERT_TRUE(positional.ok()) << positional.status();
  EXPECT_THAT(*positional, ElementsAre("model.kiln"));
  EXPECT_EQ(absl::GetFlag(FLAGS_memory_limit), 64);
  EXPECT_EQ(absl::GetFlag(FLAGS_lr), 0.5);
  EXPECT_TRUE(absl::GetFlag(FLAGS_no_shuffle));
  EXPECT_EQ(absl::GetFlag(FLAGS_schedule), "cosine");
  EXPECT_EQ(absl::GetFlag(FLAGS_warmup), std::optional<int64_t>(7));
}

TEST_F(CommandLineTest, UnderscoresAreAcceptedToo) {
  ASSERT_TRUE(ParseArgs({"tool", "--memory_limit=3"}, TestUsage()).ok());
  EXPECT_EQ(absl::GetFlag(FLAGS_memory_limit), 3);
}

TEST_F(CommandLineTest, EverythingAfterDoubleDashIsPositional) {
  auto positional = ParseArgs({"tool", "--", "--lr"}, TestUsage());
  ASSERT_TRUE(positional.ok());
  EXPECT_THAT(*positional, ElementsAre("--lr"));
}

TEST_F(CommandLineTest, Errors) {
  auto message = [](std::vector<std::string> args) {
    return std::string(ParseArgs(args, TestUsage()).status().message());
  };
  EXPECT_EQ(message({"tool", "--nope"}), "unknown flag --nope");
  // Defined, but not listed in the usage: refused like any unknown flag, and
  // so are Abseil's own flags.
  EXPECT_EQ(message({"tool", "--unlisted=x"}), "unknown flag --unlisted");
  EXPECT_EQ(message({"tool", "--flagfile=x"}), "unknown flag --flagfile");
  EXPECT_EQ(message({"tool", "--memory-limit"}),
            "--memory-limit needs a value");
  EXPECT_EQ(message({"tool", "--memory-limit", "lots"}),
            "--memory-limit: 'lots' is not an integer");
  EXPECT_EQ(message({"tool", "--warmup", "1.5"}),
            "--warmup: '1.5' is not an integer");
  EXPECT_EQ(message({"tool", "--lr", "fast"}), "--lr: 'fast' is not a number");
  EXPECT_EQ(message({"tool", "--lr=inf"}), "--lr: 'inf' is not a number");
  EXPECT_THAT(message({"tool", "--no-shuffle=maybe"}),
              HasSubstr("--no-shuffle takes no value"));
  EXPECT_TRUE(
      absl::IsNotFound(ParseArgs({"tool", "--help"}, TestUsage()).status()));
}

TEST_F(CommandLineTest, HelpListsEveryFlagWithItsDefault) {
  const std::string help = HelpText(TestUsage());
  EXPECT_THAT(help, HasSubstr("usage: tool MODEL [options]\n"));
  EXPECT_THAT(help, HasSubstr("\nOptions:\n"));
  EXPECT_THAT(help, HasSubstr("  --memory-limit BYTES      cap of the pool "
                              "(default: 0)\n"));
  EXPECT_THAT(help, HasSubstr("  --lr X                    peak learning rate "
                              "(default: 0.001)\n"));
  EXPECT_THAT(help, HasSubstr("  --no-shuffle              records in file "
                              "order (default: false)\n"));
  EXPECT_THAT(help, HasSubstr("(default: constant)"));
  EXPECT_THAT(help, HasSubstr("--warmup N                warm-up steps "
                              "(default: none)"));
  for (const std::string &name : ListedFlags(TestUsage())) {
    EXPECT_NE(absl::FindCommandLineFlag(name), nullptr) << name;
  }
}

} // namespace
} // namespace kiln::cli
