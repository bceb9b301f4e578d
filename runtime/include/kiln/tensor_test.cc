#include "kiln/tensor.h"

#include <memory>
#include <numeric>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/memory/fake_allocator.h"

namespace kiln {
namespace {

using ::testing::HasSubstr;

class TensorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    allocator_ = std::make_shared<FakeAllocator>();
    pool_ =
        DevicePool::Create(allocator_, std::make_shared<FakeFenceRecorder>());
  }
  Tensor Make(Shape shape, DType dtype = DType::kF32) {
    auto t = Tensor::Allocate(*pool_, dtype, std::move(shape), /*stream=*/1);
    EXPECT_TRUE(t.ok()) << t.status();
    return *t;
  }
  std::shared_ptr<FakeAllocator> allocator_;
  std::shared_ptr<DevicePool> pool_;
};

// Reference gather: element offsets of `shape` under `strides` and `offset`.
std::vector<int64_t> Iota(int64_t n) {
  std::vector<int64_t> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

TEST_F(TensorTest, AllocateIsDenseRowMajor) {
  Tensor t = Make({2, 3, 4}, DType::kBF16);
  EXPECT_EQ(t.rank(), 3);
  EXPECT_EQ(t.num_elements(), 24);
  EXPECT_EQ(t.size_bytes(), 48u);
  EXPECT_EQ(t.strides(), (std::vector<int64_t>{12, 4, 1}));
  EXPECT_TRUE(t.IsContiguous());
  EXPECT_GE(t.buffer().size(), 48u);
  EXPECT_EQ(t.data(), t.buffer().data());
  EXPECT_EQ(t.ElementOffsets(), Iota(24));
  EXPECT_EQ(t.DebugString(), "bf16[2, 3, 4] strides [12, 4, 1] offset 0");
}

TEST_F(TensorTest, ScalarAndEmpty) {
  Tensor scalar = Make({});
  EXPECT_EQ(scalar.num_elements(), 1);
  EXPECT_TRUE(scalar.IsContiguous());
  EXPECT_EQ(scalar.ElementOffsets(), std::vector<int64_t>{0});
  Tensor empty = Make({3, 0, 2});
  EXPECT_EQ(empty.num_elements(), 0);
  EXPECT_TRUE(empty.IsContiguous());
  EXPECT_TRUE(empty.ElementOffsets().empty());
}

TEST_F(TensorTest, BadShapes) {
  auto negative = Tensor::Allocate(*pool_, DType::kF32, {2, -1});
  EXPECT_EQ(negative.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(negative.status().message()),
              HasSubstr("[2, -1] has a negative dimension"));
  auto huge =
      Tensor::Allocate(*pool_, DType::kF32, {1 << 30, 1 << 30, 1 << 30});
  EXPECT_EQ(huge.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(TensorTest, ViewsShareTheBuffer) {
  Tensor t = Make({4, 6});
  auto v = t.Transpose({1, 0});
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->buffer().data(), t.buffer().data());
  EXPECT_EQ(t.buffer().use_count(), 2);
  EXPECT_EQ(allocator_->allocate_calls(), 1);
  // The view keeps the block alive after the original is gone.
  DevicePtr base = t.buffer().data();
  t = Tensor();
  EXPECT_EQ(pool_->stats().blocks_in_use, 1);
  EXPECT_EQ(v->buffer().data(), base);
  v = Tensor();
  EXPECT_EQ(pool_->stats().blocks_in_use, 0);
}

TEST_F(TensorTest, Reshape) {
  Tensor t = Make({2, 3, 4});
  auto r = t.Reshape({6, -1});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->shape(), (Shape{6, 4}));
  EXPECT_EQ(r->strides(), (std::vector<int64_t>{4, 1}));
  EXPECT_EQ(r->ElementOffsets(), Iota(24));

  EXPECT_THAT(std::string(t.Reshape({5, 5}).status().message()),
              HasSubstr("cannot reshape [2, 3, 4] (24 elements) to [5, 5] "
                        "(25 elements)"));
  EXPECT_FALSE(t.Reshape({-1, -1}).ok());
  EXPECT_FALSE(t.Reshape({7, -1}).ok());
  EXPECT_FALSE(t.Reshape({-2, 12}).ok());

  // A transposed view is not contiguous: reshaping it would need a copy.
  Tensor tt = *t.Transpose({0, 2, 1});
  EXPECT_FALSE(tt.IsContiguous());
  auto bad = tt.Reshape({24});
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(bad.status().message()),
              HasSubstr("non-contiguous view"));

  // A slice of leading rows stays contiguous, with an offset.
  Tensor rows = *t.Slice(0, 1, 2);
  EXPECT_TRUE(rows.IsContiguous());
  auto flat = rows.Reshape({12});
  ASSERT_TRUE(flat.ok());
  EXPECT_EQ(flat->offset(), 12);
  EXPECT_EQ(flat->data(), t.buffer().data() + 12 * 4);
}

TEST_F(TensorTest, Transpose) {
  Tensor t = Make({2, 3, 4});
  Tensor p = *t.Transpose({2, 0, 1});
  EXPECT_EQ(p.shape(), (Shape{4, 2, 3}));
  EXPECT_EQ(p.strides(), (std::vector<int64_t>{1, 12, 4}));
  std::vector<int64_t> expected;
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) expected.push_back(i * 12 + j * 4 + k);
  EXPECT_EQ(p.ElementOffsets(), expected);
  EXPECT_FALSE(t.Transpose({0, 1}).ok());
  EXPECT_THAT(std::string(t.Transpose({0, 0, 1}).status().message()),
              HasSubstr("not a permutation of 0..2"));
  EXPECT_FALSE(t.Transpose({0, 1, 3}).ok());
}

TEST_F(TensorTest, Slice) {
  Tensor t = Make({5, 7});
  Tensor s = *t.Slice(1, 1, 7, 2);  // columns 1, 3, 5
  EXPECT_EQ(s.shape(), (Shape{5, 3}));
  EXPECT_EQ(s.strides(), (std::vector<int64_t>{7, 2}));
  EXPECT_EQ(s.offset(), 1);
  EXPECT_FALSE(s.IsContiguous());
  Tensor s2 = *s.Slice(0, 2, 5, 2);  // rows 2, 4
  std::vector<int64_t> expected = {15, 17, 19, 29, 31, 33};
  EXPECT_EQ(s2.ElementOffsets(), expected);
  EXPECT_EQ(t.Slice(1, 3, 3).value().num_elements(), 0);
  EXPECT_EQ(t.Slice(1, 7, 7).value().offset(), 0);
  EXPECT_EQ(t.Slice(0, 0, 6).status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(std::string(t.Slice(0, 3, 2).status().message()),
              HasSubstr("slice [3, 2) of dimension 0 (size 5)"));
  EXPECT_EQ(t.Slice(2, 0, 1).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(t.Slice(0, 0, 1, 0).status().message()),
              HasSubstr("step must be >= 1"));
}

TEST_F(TensorTest, Broadcast) {
  Tensor t = Make({3, 1});
  Tensor b = *t.Broadcast({2, 3, 4});
  EXPECT_EQ(b.shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(b.strides(), (std::vector<int64_t>{0, 1, 0}));
  EXPECT_FALSE(b.IsContiguous());
  std::vector<int64_t> expected;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) expected.push_back(j);
  EXPECT_EQ(b.ElementOffsets(), expected);
  EXPECT_THAT(std::string(t.Broadcast({3, 4, 2}).status().message()),
              HasSubstr("cannot broadcast [3, 1] to [3, 4, 2]: dimension 0 "
                        "has size 3, expected 1 or 4"));
  EXPECT_THAT(std::string(t.Broadcast({3}).status().message()),
              HasSubstr("lower rank"));
  // Broadcasting to the same shape is the identity.
  EXPECT_EQ(t.Broadcast({3, 1})->strides(), t.strides());
  // Size-1 dims of any stride count as contiguous.
  EXPECT_TRUE(t.Broadcast({1, 3, 1})->IsContiguous());
}

TEST_F(TensorTest, FromBufferChecksBounds) {
  DeviceBuffer buffer = *pool_->Allocate(100 * 4, 1);
  auto ok = Tensor::FromBuffer(buffer, DType::kF32, {10, 10});
  ASSERT_TRUE(ok.ok());
  auto too_big = Tensor::FromBuffer(buffer, DType::kF32, {10, 11});
  EXPECT_EQ(too_big.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(std::string(too_big.status().message()),
              HasSubstr("reaches element 109 but the buffer holds 100"));
  auto strided = Tensor::FromBuffer(buffer, DType::kF32, {5, 5}, {20, 2}, 8);
  ASSERT_TRUE(strided.ok()) << strided.status();
  EXPECT_EQ(strided->ElementOffsets().back(), 8 + 80 + 8);
  EXPECT_FALSE(Tensor::FromBuffer(buffer, DType::kF32, {5, 5}, {20}, 0).ok());
  EXPECT_FALSE(
      Tensor::FromBuffer(buffer, DType::kF32, {5, 5}, {20, -1}, 10).ok());
  EXPECT_FALSE(Tensor::FromBuffer(buffer, DType::kF32, {2}, {1}, -1).ok());
  // Bytes count: 400 bytes hold 200 bf16 elements.
  EXPECT_TRUE(Tensor::FromBuffer(buffer, DType::kBF16, {200}).ok());
  EXPECT_FALSE(Tensor::FromBuffer(buffer, DType::kBF16, {201}).ok());
}

TEST_F(TensorTest, ComposedViewsMatchReference) {
  // transpose -> slice -> broadcast chain against direct index arithmetic.
  Tensor t = Make({4, 5, 6});
  Tensor v = *t.Transpose({2, 0, 1});  // [6, 4, 5]
  v = *v.Slice(0, 1, 6, 2);            // k = 1, 3, 5 -> [3, 4, 5]
  v = *v.Slice(2, 4, 5);               // j = 4 -> [3, 4, 1]
  v = *v.Broadcast({2, 3, 4, 3});      // [2, 3, 4, 3]
  std::vector<int64_t> expected;
  for (int b = 0; b < 2; ++b)
    for (int k : {1, 3, 5})
      for (int i = 0; i < 4; ++i)
        for (int r = 0; r < 3; ++r) expected.push_back(i * 30 + 4 * 6 + k);
  EXPECT_EQ(v.ElementOffsets(), expected);
}

TEST(ShapeHelpersTest, Basics) {
  EXPECT_EQ(ShapeString({}), "[]");
  EXPECT_EQ(ShapeString({2, 3}), "[2, 3]");
  EXPECT_EQ(ContiguousStrides({2, 3, 4}), (std::vector<int64_t>{12, 4, 1}));
  EXPECT_EQ(NumElements({}), 1);
  EXPECT_EQ(NumElements({2, 0}), 0);
}

}  // namespace
}  // namespace kiln
