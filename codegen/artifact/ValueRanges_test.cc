//===- ValueRanges_test.cc - label and index ranges from the graph --------===//

#include "codegen/artifact/ValueRanges.h"

#include "compiler/testing/KilnTestContext.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "gtest/gtest.h"

namespace mlir::kiln::codegen {
namespace {

class ValueRangesTest : public ::testing::Test {
protected:
  /// The range of argument `index` of the single function in `source`.
  std::optional<IndexRange> rangeOf(const std::string &source, unsigned index) {
    parsed = parseSourceString<ModuleOp>(source, &test.context);
    EXPECT_TRUE(parsed) << test.diagnostics;
    if (!parsed)
      return std::nullopt;
    function = *parsed.get().getOps<func::FuncOp>().begin();
    return validRangeOf(function.getArgument(index));
  }

  KilnTestContext test;
  OwningOpRef<ModuleOp> parsed;
  func::FuncOp function;
};

TEST_F(ValueRangesTest, LabelsOfCrossEntropy) {
  std::optional<IndexRange> range = rangeOf(R"(
    func.func @f(%logits: tensor<8x10xf32>, %labels: tensor<8xi32>) -> tensor<f32> {
      %l = kiln.cross_entropy %logits, %labels : tensor<8x10xf32>, tensor<8xi32>
      return %l : tensor<f32>
    })",
                                            1);
  ASSERT_TRUE(range);
  EXPECT_EQ(range->low, 0);
  EXPECT_EQ(range->high, 10);
  EXPECT_FALSE(range->ignoreIndex);
  EXPECT_EQ(range->use, "labels of kiln.cross_entropy over 10 classes");
  // The logits are not indices.
  EXPECT_FALSE(validRangeOf(function.getArgument(0)));
}

// PyTorch's -100: the label the loss skips is valid besides the classes,
// unless another use does not skip it.
TEST_F(ValueRangesTest, IgnoreIndex) {
  std::optional<IndexRange> range = rangeOf(R"(
    func.func @f(%logits: tensor<8x10xf32>, %labels: tensor<8xi32>) -> tensor<f32> {
      %l = kiln.cross_entropy %logits, %labels ignore_index = -100 : tensor<8x10xf32>, tensor<8xi32>
      return %l : tensor<f32>
    })",
                                            1);
  ASSERT_TRUE(range);
  EXPECT_EQ(range->ignoreIndex, std::optional<int64_t>(-100));
  EXPECT_EQ(range->use, "labels of kiln.cross_entropy over 10 classes with "
                        "ignore_index -100");
  range = rangeOf(R"(
    func.func @f(%logits: tensor<8x10xf32>, %table: tensor<12x10xf32>, %labels: tensor<8xi32>) -> tensor<f32> {
      %l = kiln.cross_entropy %logits, %labels ignore_index = -100 : tensor<8x10xf32>, tensor<8xi32>
      %e = kiln.embedding %table, %labels : tensor<12x10xf32>, tensor<8xi32>
      %m = kiln.cross_entropy %e, %labels : tensor<8x10xf32>, tensor<8xi32>
      %s = kiln.add %l, %m : tensor<f32>, tensor<f32>
      return %s : tensor<f32>
    })",
                  2);
  ASSERT_TRUE(range);
  EXPECT_EQ(range->high, 10);
  EXPECT_FALSE(range->ignoreIndex);
}

// Through a reshape into a fusion region, as kilnc leaves a language
// model's targets, and in the backward.
TEST_F(ValueRangesTest, ThroughReshapesAndFusions) {
  std::optional<IndexRange> range = rangeOf(R"(
    func.func @f(%logits: tensor<8x256xf32>, %targets: tensor<2x4xi32>) -> tensor<8x256xf32> {
      %labels = kiln.reshape %targets : tensor<2x4xi32> -> tensor<8xi32>
      %g = kiln.fusion "reduction" (%logits, %labels) : (tensor<8x256xf32>, tensor<8xi32>) -> tensor<8x256xf32> {
      ^bb0(%x: tensor<8x256xf32>, %y: tensor<8xi32>):
        %one = kiln.constant dense<1.0> : tensor<f32>
        %d = kiln.cross_entropy_backward %one, %x, %y : tensor<8x256xf32>, tensor<8xi32>
        kiln.yield %d : tensor<8x256xf32>
      }
      return %g : tensor<8x256xf32>
    })",
                                            1);
  ASSERT_TRUE(range);
  EXPECT_EQ(range->high, 256);
}

// Used as embedding indices of 1000 rows and as labels over 10 classes: the
// values both allow.
TEST_F(ValueRangesTest, SeveralUsesAllowWhatAllAllow) {
  std::optional<IndexRange> range = rangeOf(R"(
    func.func @f(%table: tensor<1000x10xf32>, %t: tensor<4xi32>) -> tensor<f32> {
      %e = kiln.embedding %table, %t : tensor<1000x10xf32>, tensor<4xi32>
      %l = kiln.cross_entropy %e, %t : tensor<4x10xf32>, tensor<4xi32>
      return %l : tensor<f32>
    })",
                                            1);
  ASSERT_TRUE(range);
  EXPECT_EQ(range->low, 0);
  EXPECT_EQ(range->high, 10);
  EXPECT_EQ(range->use, "indices of kiln.embedding of 1000 rows and labels of "
                        "kiln.cross_entropy over 10 classes");
}

TEST_F(ValueRangesTest, EmbeddingGradientIndices) {
  std::optional<IndexRange> range = rangeOf(R"(
    func.func @f(%g: tensor<4x3x8xf32>, %t: tensor<4x3xi32>) -> tensor<50x8xf32> {
      %d = kiln.embedding_backward %g, %t : tensor<4x3x8xf32>, tensor<4x3xi32> -> tensor<50x8xf32>
      return %d : tensor<50x8xf32>
    })",
                                            1);
  ASSERT_TRUE(range);
  EXPECT_EQ(range->high, 50);
  EXPECT_EQ(range->use, "indices of kiln.embedding of 50 rows");
}

// Compared, or returned: no constraint.
TEST_F(ValueRangesTest, OtherUsesAllowAnything) {
  EXPECT_FALSE(rangeOf(R"(
    func.func @f(%a: tensor<4xi32>, %b: tensor<4xi32>) -> (tensor<4xi1>, tensor<4xi32>) {
      %c = kiln.compare eq, %a, %b : tensor<4xi32>, tensor<4xi32>
      return %c, %a : tensor<4xi1>, tensor<4xi32>
    })",
                       0));
}

} // namespace
} // namespace mlir::kiln::codegen
