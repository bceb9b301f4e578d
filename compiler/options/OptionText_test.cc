#include "compiler/options/OptionText.h"

#include <gtest/gtest.h>

namespace mlir::kiln {
namespace {

bool takesAOrC(llvm::StringRef name) { return name == "a" || name == "c"; }

TEST(OptionTextTest, PartitionsOptionsByName) {
  auto [taken, others] = partitionOptions("a=1 b={x y} c=\"p q\" d", takesAOrC);
  EXPECT_EQ(taken, "a=1 c=\"p q\"");
  EXPECT_EQ(others, "b={x y} d");
}

TEST(OptionTextTest, KeepsNestedListsAndSingleQuotesWhole) {
  auto [taken, others] =
      partitionOptions("b={x {y z}} a='p q'  c", takesAOrC);
  EXPECT_EQ(taken, "a='p q' c");
  EXPECT_EQ(others, "b={x {y z}}");
}

TEST(OptionTextTest, EmptyTextGivesNothing) {
  auto [taken, others] = partitionOptions("", takesAOrC);
  EXPECT_EQ(taken, "");
  EXPECT_EQ(others, "");
}

} // namespace
} // namespace mlir::kiln
