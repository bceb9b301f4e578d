#include "codegen/header/CppNames.h"

#include "gtest/gtest.h"

namespace mlir::kiln::codegen {
namespace {

TEST(CppNamesTest, MapsNamesToIdentifiers) {
  EXPECT_EQ(cppIdentifier("w1"), "w1");
  EXPECT_EQ(cppIdentifier("grad.w1"), "grad_w1");
  EXPECT_EQ(cppIdentifier("adam_m.w1"), "adam_m_w1");
  EXPECT_EQ(cppIdentifier("master.blocks.0.w_q"), "master_blocks_0_w_q");
  EXPECT_EQ(cppIdentifier("a..b"), "a_b");
  EXPECT_EQ(cppIdentifier("a__b"), "a_b");
  EXPECT_EQ(cppIdentifier("_W"), "W");
  EXPECT_EQ(cppIdentifier("x-"), "x");
  EXPECT_EQ(cppIdentifier("0"), "t_0");
  EXPECT_EQ(cppIdentifier("..."), "t_");
  EXPECT_EQ(cppIdentifier(""), "t_");
  EXPECT_EQ(cppIdentifier("new"), "new_");
  EXPECT_EQ(cppIdentifier("and"), "and_");
  EXPECT_EQ(cppIdentifier("class.x"), "class_x");
  EXPECT_EQ(cppIdentifier("caf\xc3\xa9"), "caf");
}

TEST(CppNamesTest, CamelCase) {
  EXPECT_EQ(cppCamelCase("train_step"), "TrainStep");
  EXPECT_EQ(cppCamelCase("forward_backward"), "ForwardBackward");
  EXPECT_EQ(cppCamelCase("forward"), "Forward");
  EXPECT_EQ(cppCamelCase("byte_lm.lstm"), "ByteLmLstm");
  EXPECT_EQ(cppCamelCase("0"), "T0");
}

TEST(CppNamesTest, StringLiterals) {
  EXPECT_EQ(cppStringLiteral("grad.w1"), "\"grad.w1\"");
  EXPECT_EQ(cppStringLiteral("a\"b\\c\n"), "\"a\\\"b\\\\c\\n\"");
  EXPECT_EQ(cppStringLiteral("\x01\xff"), "\"\\001\\377\"");
}

TEST(CppNamesTest, ScopesRefuseTwoNamesWithOneIdentifier) {
  CppScope scope("class Mlp");
  scope.reserve("Load", "its member Load");
  std::string error;
  EXPECT_TRUE(scope.add("w1", "parameter 'w1'", error));
  EXPECT_TRUE(scope.add("grad_w1", "gradient 'grad.w1'", error));
  EXPECT_FALSE(scope.add("grad_w1", "parameter 'grad_w1'", error));
  EXPECT_EQ(error, "parameter 'grad_w1' and gradient 'grad.w1' both map to "
                   "the C++ name 'grad_w1' in class Mlp (every character "
                   "outside [A-Za-z0-9_] becomes '_', runs of '_' one; "
                   "rename one of them)");
  EXPECT_FALSE(scope.add("Load", "parameter 'Load'", error));
  EXPECT_NE(error.find("its member Load"), std::string::npos) << error;
}

} // namespace
} // namespace mlir::kiln::codegen
