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
  EXPECT_EQ(r.message(), "shapes [2, 3] and [4, 3] are not broadcast-compatible: "
                         "dimension 0 of the broadcast result is 2 vs 4");
}

TEST(BroadcastShapes, IsSymmetric) {
  const std::vector<std::vector<int64_t>> shapes = {
      {}, {1}, {3}, {2, 1}, {1, 3}, {2, 3}, {4, 2, 3}, {4, 1, 1}};
  for (const auto &a : shapes)
    for (const auto &b : shapes) {
      auto ab = broadcastShapes(a, b), ba = broadcastShapes(b, a);
      ASSERT_EQ(ab.ok(), ba.ok());
      if (ab.ok())
        EXPECT_EQ(ab.shape(), ba.shape());
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

} // namespace
} // namespace mlir::kiln
