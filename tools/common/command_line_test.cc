#include "tools/common/command_line.h"

#include <cstdint>
#include <optional>
#include <set>
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
ABSL_FLAG(std::optional<kiln::cli::ByteSize>, pool_cap, std::nullopt,
          "cap of the pool");
ABSL_FLAG(kiln::cli::ByteSize, bucket, kiln::cli::ByteSize{25 << 20},
          "bytes per bucket");

namespace kiln::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Usage TestUsage() {
  Usage usage;
  usage.program = "tool";
  usage.header = "usage: tool MODEL [options]";
  usage.sections = {{"Options:", {"memory_limit", "lr", "no_shuffle"}},
                    {"More:", {"schedule", "warmup", "pool_cap", "bucket"}}};
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

TEST_F(CommandLineTest, ByteCountsTakeKilncUnits) {
  std::set<std::string> given;
  ASSERT_TRUE(ParseArgs({"tool", "--pool-cap", "437MiB", "--bucket=2GB"},
                        TestUsage(), &given)
                  .ok());
  EXPECT_EQ(absl::GetFlag(FLAGS_pool_cap)->bytes, uint64_t{437} << 20);
  EXPECT_EQ(absl::GetFlag(FLAGS_bucket).bytes, 2000000000u);
  EXPECT_EQ(given, (std::set<std::string>{"pool_cap", "bucket"}));
  ASSERT_TRUE(ParseArgs({"tool", "--pool-cap=4096"}, TestUsage()).ok());
  EXPECT_EQ(absl::GetFlag(FLAGS_pool_cap)->bytes, 4096u);
  EXPECT_EQ(std::string(ParseArgs({"tool", "--pool-cap", "1TiB"}, TestUsage())
                            .status()
                            .message()),
            "--pool-cap: '1TiB' is not a byte count (a number of bytes, "
            "optionally with B, KB, MB, GB (powers of 1000) or KiB, MiB, GiB "
            "(powers of 1024))");
  EXPECT_FALSE(ParseArgs({"tool", "--bucket=-1"}, TestUsage()).ok());
}

TEST_F(CommandLineTest, HelpAndVersion) {
  for (const char *help : {"-h", "--help"}) {
    absl::Status status = ParseArgs({"tool", "x", help}, TestUsage()).status();
    EXPECT_TRUE(absl::IsNotFound(status)) << help;
    EXPECT_EQ(status.message(), "help");
  }
  absl::Status version =
      ParseArgs({"tool", "--version", "--nope"}, TestUsage()).status();
  EXPECT_TRUE(absl::IsNotFound(version));
  EXPECT_EQ(version.message(), "version");
  // After "--", -h is a file name.
  EXPECT_TRUE(ParseArgs({"tool", "--", "-h"}, TestUsage()).ok());
}

TEST_F(CommandLineTest, SingleDashIsATypoOfAFlag) {
  EXPECT_EQ(std::string(
                ParseArgs({"tool", "-lr", "3"}, TestUsage()).status().message()),
            "unknown option -lr (flags take two dashes: --lr)");
  // A lone dash and negative values of flags are fine.
  auto positional = ParseArgs({"tool", "-", "--lr", "-2"}, TestUsage());
  ASSERT_TRUE(positional.ok()) << positional.status();
  EXPECT_THAT(*positional, ElementsAre("-"));
  EXPECT_EQ(absl::GetFlag(FLAGS_lr), -2);
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
  EXPECT_THAT(help, HasSubstr("  --pool-cap BYTES          cap of the pool "
                              "(default: none)\n"));
  EXPECT_THAT(help, HasSubstr("  --bucket BYTES            bytes per bucket "
                              "(default: 25MiB)\n"));
  for (const std::string &name : ListedFlags(TestUsage())) {
    EXPECT_NE(absl::FindCommandLineFlag(name), nullptr) << name;
  }
}

} // namespace
} // namespace kiln::cli
