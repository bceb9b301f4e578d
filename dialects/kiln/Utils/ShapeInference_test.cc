#include "dialects/kiln/Utils/ShapeInference.h"

#include <gtest/gtest.h>

namespace mlir::kiln {
namespace {

Shape S(std::initializer_list<int64_t> dims) { return Shape(dims); }

TEST(BroadcastShapes, EqualShapes) {
  auto r = broadcastShapes({2, 3}, {2, 3});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.shape(), S({2, 3}));
}

TEST(BroadcastShapes, TrailingAlignmentAndOnes) {
  auto r = broadcastShapes({4, 1, 3}, {5, 1});
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r.shape(), S({4, 5, 3}));
}

TEST(BroadcastShapes, ScalarBroadcastsToAnything) {
  auto r = broadcastShapes({}, {7, 2});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.shape(), S({7, 2}));
}

TEST(BroadcastShapes, IncompatibleNamesTheDimension) {
  auto r = broadcastShapes({2, 3}, {4, 3});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(),
            "shapes [2, 3] and [4, 3] are not broadcast-compatible: "
            "dimension 0 of the broadcast result is 2 vs 4");
}

TEST(BroadcastShapes, IsSymmetric) {
  const std::vector<std::vector<int64_t>> shapes = {
      {}, {1}, {3}, {2, 1}, {1, 3}, {2, 3}, {4, 2, 3}, {4, 1, 1}};
  for (const auto &a : shapes)
    for (const auto &b : shapes) {
      auto ab = broadcastShapes(a, b), ba = broadcastShapes(b, a);
      ASSERT_EQ(ab.ok(), ba.ok());
      if (ab.ok()) {
        EXPECT_EQ(ab.shape(), ba.shape());
      }
    }
}

TEST(IsBroadcastableTo, Rules) {
  EXPECT_TRUE(isBroadcastableTo({3}, {2, 3}));
  EXPECT_TRUE(isBroadcastableTo({1, 3}, {2, 3}));
  EXPECT_TRUE(isBroadcastableTo({}, {2, 3}));
  EXPECT_FALSE(isBroadcastableTo({2}, {2, 3}));
  EXPECT_FALSE(isBroadcastableTo({1, 2, 3}, {2, 3}));
}

TEST(ReducedShape, DropAndKeep) {
  auto dropped = reducedShape({2, 3, 4}, {0, 2}, /*keepDim=*/false);
  ASSERT_TRUE(dropped.ok());
  EXPECT_EQ(dropped.shape(), S({3}));
  auto kept = reducedShape({2, 3, 4}, {2, 0}, /*keepDim=*/true);
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(kept.shape(), S({1, 3, 1}));
  auto all = reducedShape({2, 3}, {0, 1}, false);
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(all.shape().empty());
}

TEST(ReducedShape, BadDims) {
  EXPECT_EQ(reducedShape({2, 3}, {2}, false).message(),
            "dimension 2 is out of range for rank 2 (expected 0 <= dim < 2)");
  EXPECT_EQ(reducedShape({2, 3}, {-1}, false).message(),
            "dimension -1 is out of range for rank 2 (expected 0 <= dim < 2)");
  EXPECT_EQ(reducedShape({2, 3}, {1, 1}, false).message(),
            "dimension 1 is listed twice");
}

TEST(MatmulShape, Plain) {
  auto r = matmulShape({4, 8}, {8, 16}, false, false);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.shape(), S({4, 16}));
}

TEST(MatmulShape, TransposesAndBatchBroadcast) {
  auto r = matmulShape({5, 1, 8, 4}, {3, 16, 8}, /*transposeLhs=*/true,
                       /*transposeRhs=*/true);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r.shape(), S({5, 3, 4, 16}));
}

TEST(MatmulShape, ContractionMismatch) {
  auto r = matmulShape({4, 8}, {7, 16}, false, false);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(), "contraction dimensions differ: lhs [4, 8] has K = 8 "
                         "but rhs [7, 16] has K = 7");
}

TEST(MatmulShape, RankTooLow) {
  EXPECT_FALSE(matmulShape({8}, {8, 2}, false, false).ok());
}

TEST(MatmulShape, BatchMismatch) {
  auto r = matmulShape({2, 4, 8}, {3, 8, 16}, false, false);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("batch dimensions"), std::string::npos);
}

TEST(NumElements, Basics) {
  EXPECT_EQ(numElements({}), 1);
  EXPECT_EQ(numElements({2, 3, 4}), 24);
  EXPECT_EQ(numElements({5, 0}), 0);
}

TEST(CheckReshape, EqualCountsPass) {
  EXPECT_EQ(checkReshape({4, 8}, {2, 16}), "");
  EXPECT_EQ(checkReshape({3, 1, 5}, {15}), "");
  EXPECT_EQ(checkReshape({1, 1}, {}), "");
}

TEST(CheckReshape, CountMismatchNamesShapesAndCounts) {
  EXPECT_EQ(
      checkReshape({4, 8}, {2, 15}),
      "input shape [4, 8] has 32 elements but result shape [2, 15] has 30");
}

TEST(CheckBroadcastTo, AgreesWithIsBroadcastableTo) {
  const std::vector<std::vector<int64_t>> shapes = {
      {}, {1}, {3}, {2, 1}, {1, 3}, {2, 3}, {4, 2, 3}, {4, 1, 1}, {5, 3}};
  for (const auto &from : shapes)
    for (const auto &to : shapes)
      EXPECT_EQ(checkBroadcastTo(from, to).empty(), isBroadcastableTo(from, to))
          << formatShape(from) << " -> " << formatShape(to);
}

TEST(CheckBroadcastTo, NamesTheOffendingDimension) {
  EXPECT_EQ(checkBroadcastTo({3, 5}, {2, 4, 5}),
            "cannot broadcast [3, 5] to [2, 4, 5]: input dimension 0 has size "
            "3, which is neither 1 nor the size 4 of result dimension 1");
  EXPECT_EQ(checkBroadcastTo({2, 3, 4}, {3, 4}),
            "cannot broadcast [2, 3, 4] to [3, 4]: the input has rank 3, more "
            "than the result's rank 2");
}

TEST(TransposeShape, Permutes) {
  auto r = transposeShape({2, 3, 5}, {1, 2, 0});
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r.shape(), S({3, 5, 2}));
  auto scalar = transposeShape({}, {});
  ASSERT_TRUE(scalar.ok());
  EXPECT_TRUE(scalar.shape().empty());
}

TEST(TransposeShape, BadPermutations) {
  EXPECT_EQ(transposeShape({2, 3, 5}, {1, 0}).message(),
            "'perm' [1, 0] has 2 entries, expected 3 (the rank of the input)");
  EXPECT_EQ(transposeShape({2, 3}, {0}).message(),
            "'perm' [0] has 1 entry, expected 2 (the rank of the input)");
  EXPECT_EQ(transposeShape({2, 3, 5}, {0, 3, 1}).message(),
            "'perm' [0, 3, 1] is not a permutation of 0..2: entry 3 is out of "
            "range");
  EXPECT_EQ(transposeShape({2, 3, 5}, {0, -1, 1}).message(),
            "'perm' [0, -1, 1] is not a permutation of 0..2: entry -1 is out "
            "of range");
  EXPECT_EQ(transposeShape({2, 3, 5}, {1, 1, 0}).message(),
            "'perm' [1, 1, 0] is not a permutation of 0..2: entry 1 appears "
            "twice");
}

TEST(SliceShape, CeilOfExtentOverStep) {
  auto r = sliceShape({4, 9, 7}, {0, 2, 3}, {4, 9, 3}, {1, 2, 5});
  ASSERT_TRUE(r.ok()) << r.message();
  // 4/1 = 4, ceil(7/2) = 4, empty range gives 0.
  EXPECT_EQ(r.shape(), S({4, 4, 0}));
  auto exact = sliceShape({10}, {1}, {10}, {3});
  ASSERT_TRUE(exact.ok());
  EXPECT_EQ(exact.shape(), S({3}));
}

TEST(SliceShape, BadBounds) {
  EXPECT_EQ(sliceShape({4, 8}, {0}, {4, 8}, {1, 1}).message(),
            "'start' has 1 entry, expected 2 (the rank of the input)");
  EXPECT_EQ(sliceShape({4, 8}, {0, 0}, {4, 8}, {1, 1, 1}).message(),
            "'step' has 3 entries, expected 2 (the rank of the input)");
  EXPECT_EQ(sliceShape({4, 8}, {0, 0}, {4, 8}, {1, 0}).message(),
            "'step' is 0 at dimension 1, expected >= 1");
  EXPECT_EQ(sliceShape({4, 8}, {0, 3}, {4, 2}, {1, 1}).message(),
            "dimension 1 (size 8) has start 3 and limit 2, expected 0 <= start "
            "<= limit <= 8");
  EXPECT_EQ(sliceShape({4, 8}, {0, 0}, {5, 8}, {1, 1}).message(),
            "dimension 0 (size 4) has start 0 and limit 5, expected 0 <= start "
            "<= limit <= 4");
  EXPECT_EQ(
      sliceShape({4, 8}, {-1, 0}, {4, 8}, {1, 1}).message(),
      "dimension 0 (size 4) has start -1 and limit 4, expected 0 <= start "
      "<= limit <= 4");
}

TEST(ConcatShape, SumsTheConcatenationDim) {
  std::vector<int64_t> a = {2, 3, 5}, b = {2, 1, 5}, c = {2, 7, 5};
  auto r = concatShape({a, b, c}, 1);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r.shape(), S({2, 11, 5}));
  auto single = concatShape({a}, 2);
  ASSERT_TRUE(single.ok());
  EXPECT_EQ(single.shape(), S({2, 3, 5}));
}

TEST(ConcatShape, Mismatches) {
  std::vector<int64_t> a = {2, 3}, b = {4, 3}, c = {2, 3, 1};
  EXPECT_EQ(concatShape({}, 0).message(), "expects at least one input");
  EXPECT_EQ(concatShape({a, a}, 2).message(),
            "'dim' 2 is out of range for rank 2 (expected 0 <= dim < 2)");
  EXPECT_EQ(concatShape({a, c}, 0).message(),
            "input 1 has rank 3 (shape [2, 3, 1]) but input 0 has rank 2 "
            "(shape [2, 3])");
  EXPECT_EQ(concatShape({a, a, b}, 1).message(),
            "input 2 has shape [4, 3] but input 0 has shape [2, 3]: dimension "
            "0 differs (only dimension 1, the concatenation dimension, may "
            "differ)");
  // Along dim 0 the same pair is fine.
  EXPECT_TRUE(concatShape({a, b}, 0).ok());
}

TEST(PadShape, AddsLowAndHigh) {
  auto r = padShape({4, 5}, {0, 1}, {2, 0});
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r.shape(), S({6, 6}));
}

TEST(PadShape, BadAmounts) {
  EXPECT_EQ(padShape({4, 5}, {0, 1, 2}, {0, 0}).message(),
            "'low' has 3 entries, expected 2 (the rank of the input)");
  EXPECT_EQ(padShape({4, 5}, {0, 1}, {0}).message(),
            "'high' has 1 entry, expected 2 (the rank of the input)");
  EXPECT_EQ(padShape({4, 5}, {0, 1}, {0, -1}).message(),
            "'high' is -1 at dimension 1, expected >= 0");
  EXPECT_EQ(padShape({4, 5}, {-2, 1}, {0, 0}).message(),
            "'low' is -2 at dimension 0, expected >= 0");
}

} // namespace
} // namespace mlir::kiln
