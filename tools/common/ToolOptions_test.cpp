#include "tools/common/ToolOptions.h"

#include "tools/common/version.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "gtest/gtest.h"

namespace kiln::tools {
namespace {
namespace cl = llvm::cl;

cl::OptionCategory category("test options");
cl::opt<double> rate("test-rate", cl::desc("a rate"), cl::init(0.9),
                     cl::cat(category));
cl::opt<double> tiny("test-tiny", cl::desc("a small real"), cl::init(1e-8),
                     cl::cat(category));
cl::opt<uint64_t> count("test-count", cl::desc("a count"), cl::init(3),
                        cl::cat(category));
cl::opt<bool> off("test-off", cl::desc("a flag"), cl::cat(category));
cl::opt<bool> on("test-on", cl::desc("a flag that is on"), cl::init(true),
                 cl::cat(category));
cl::opt<std::string> mode("test-mode", cl::desc("the mode"), cl::init("fast"),
                          cl::value_desc("fast|slow"), cl::cat(category));
cl::opt<std::string> path("test-path", cl::desc("a file"),
                          cl::value_desc("path"), cl::cat(category));
cl::opt<int> computed("test-computed",
                      cl::desc("computed (default: twice --test-count)"),
                      cl::init(-1), cl::cat(category));
enum class Kind { A, B };
cl::opt<Kind> kind("test-kind", cl::desc("a kind"), cl::init(Kind::B),
                   cl::values(clEnumValN(Kind::A, "a", "the first"),
                              clEnumValN(Kind::B, "b", "the second")),
                   cl::cat(category));
cl::list<std::string> dirs("T", cl::Prefix, cl::desc("a folder (repeatable)"),
                           cl::value_desc("dir"), cl::cat(category));

ToolCommandLine tool() {
  return {"tester",
          "tester [options] <input>",
          "tester: checks the help.",
          {&category},
          {{"lr", "the learning rate is a flag of another tool"}},
          "The footer.\n"};
}

TEST(ToolOptionsTest, HelpListsTheToolsOptionsWithTheirDefaults) {
  std::string help = toolHelpText(tool());
  for (const char *line : {
           "tester: checks the help.\n\nusage: tester [options] <input>\n",
           "\ntest options:\n",
           "  -T DIR                    a folder (repeatable) (default: "
           "none)\n",
           "  --test-computed N         computed (default: twice "
           "--test-count)\n",
           "  --test-count N            a count (default: 3)\n",
           "  --test-kind a|b           a kind (default: b)\n",
           "  --test-mode fast|slow     the mode (default: fast)\n",
           "  --test-off                a flag (default: false)\n",
           "  --test-on                 a flag that is on (default: true)\n",
           "  --test-path PATH          a file (default: none)\n",
           "  --test-rate X             a rate (default: 0.9)\n",
           "  --test-tiny X             a small real (default: 1e-08)\n",
           "\nGeneric options:\n  -h, --help ",
           "\nThe footer.\n",
       })
    EXPECT_NE(help.find(line), std::string::npos) << line << "\nin\n" << help;
  // The same for every build: no commit.
  EXPECT_NE(help.find("  --version                 print kiln's version and "
                      "the commit"),
            std::string::npos);
  EXPECT_EQ(help.find(std::string(BuildCommit())), std::string::npos);
  // LLVM's own options are not the tool's.
  EXPECT_EQ(help.find("--print-after-all"), std::string::npos) << help;
  EXPECT_EQ(help.find("--stats"), std::string::npos) << help;
}

TEST(ToolOptionsTest, LongDescriptionsWrapUnderTheDescriptionColumn) {
  std::string help = toolHelpText(tool());
  for (llvm::StringRef line : llvm::split(help, '\n'))
    EXPECT_LE(line.size(), 80u) << line.str();
}

std::optional<std::string> unknown(std::vector<const char *> args) {
  args.insert(args.begin(), "tester");
  return unknownOptionMessage(args, tool());
}

TEST(ToolOptionsTest, UnknownOptionsSayWhereTheyBelongOrWhatIsClose) {
  EXPECT_EQ(unknown({"--lr=0.1"}),
            "unknown option '--lr': the learning rate is a flag of another "
            "tool");
  EXPECT_EQ(unknown({"--test-rat=1"}),
            "unknown option '--test-rat'; did you mean '--test-rate'?");
  EXPECT_EQ(unknown({"--zq"}), "unknown option '--zq'");
  EXPECT_EQ(unknown({"in.mlir", "-test-koind", "a"}),
            "unknown option '-test-koind'; did you mean '--test-kind'?");
}

TEST(ToolOptionsTest, KnownOptionsValuesAndPositionalsAreNotUnknown) {
  EXPECT_EQ(unknown({}), std::nullopt);
  EXPECT_EQ(unknown({"--test-rate", "-5", "-", "in.mlir", "--test-off"}),
            std::nullopt);
  EXPECT_EQ(unknown({"-Tdir", "-T", "-dir", "--test-mode=slow"}), std::nullopt);
  EXPECT_EQ(unknown({"--", "--anything"}), std::nullopt);
}

} // namespace
} // namespace kiln::tools
