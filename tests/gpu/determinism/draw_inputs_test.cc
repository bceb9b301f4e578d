#include "tests/gpu/determinism/draw_inputs.h"

#include <cstring>
#include <set>

#include "gtest/gtest.h"
#include "runtime/artifact/interface.h"
#include "runtime/artifact/test_artifacts.h"

namespace kiln {
namespace determinism {
namespace {

using artifact::testing::ClassifierArtifact;
using artifact::testing::TrainingArtifact;

TEST(DrawInputsTest, DrawsEveryCallerInputAndNothingElse) {
  const artifact::Artifact a = TrainingArtifact();
  for (const artifact::Entry& entry : a.entries) {
    auto drawn = DrawInputs(entry, 7);
    ASSERT_TRUE(drawn.ok()) << drawn.status();
    size_t callers = 0;
    for (const artifact::TensorBinding& b : entry.inputs) {
      if (artifact::SourceOf(b) != artifact::InputSource::kCaller) {
        EXPECT_EQ(drawn->tensors.count(b.name), 0u) << b.name;
        continue;
      }
      ++callers;
      ASSERT_EQ(drawn->tensors.count(b.name), 1u) << b.name;
      EXPECT_EQ(drawn->tensors.at(b.name).shape, b.shape);
    }
    EXPECT_EQ(drawn->tensors.size(), callers) << entry.name;
  }
}

TEST(DrawInputsTest, FloatsAreUniformInMinusOneToOne) {
  const artifact::Artifact a = TrainingArtifact();
  const artifact::Entry* entry = a.FindEntry("train_step");
  ASSERT_NE(entry, nullptr);
  auto drawn = DrawInputs(*entry, 3);
  ASSERT_TRUE(drawn.ok()) << drawn.status();
  std::set<float> distinct;
  for (const auto& [name, t] : drawn->tensors) {
    ASSERT_EQ(t.dtype, DType::kF32) << name;
    for (size_t i = 0; i < t.data.size(); i += 4) {
      float v;
      std::memcpy(&v, t.data.data() + i, 4);
      EXPECT_GE(v, -1.0f);
      EXPECT_LT(v, 1.0f);
      distinct.insert(v);
    }
  }
  EXPECT_GT(distinct.size(), 4u);
}

TEST(DrawInputsTest, IntegersStayInTheirValidRange) {
  const artifact::Artifact a = ClassifierArtifact();
  const artifact::Entry* entry = a.FindEntry("train_step");
  ASSERT_NE(entry, nullptr);
  auto drawn = DrawInputs(*entry, 11);
  ASSERT_TRUE(drawn.ok()) << drawn.status();
  for (const artifact::TensorBinding& b : entry->inputs) {
    if (artifact::SourceOf(b) != artifact::InputSource::kCaller) continue;
    ASSERT_TRUE(b.valid_range.has_value()) << b.name;
    const io::HostTensor& t = drawn->tensors.at(b.name);
    ASSERT_EQ(t.dtype, DType::kI32);
    for (size_t i = 0; i < t.data.size(); i += 4) {
      int32_t v;
      std::memcpy(&v, t.data.data() + i, 4);
      EXPECT_GE(v, b.valid_range->low) << b.name;
      EXPECT_LT(v, b.valid_range->high) << b.name;
    }
  }
}

TEST(DrawInputsTest, TheSeedDecidesTheBytes) {
  const artifact::Artifact a = ClassifierArtifact();
  const artifact::Entry* entry = a.FindEntry("train_step");
  ASSERT_NE(entry, nullptr);
  auto first = DrawInputs(*entry, 5);
  auto again = DrawInputs(*entry, 5);
  auto other = DrawInputs(*entry, 6);
  ASSERT_TRUE(first.ok() && again.ok() && other.ok());
  EXPECT_TRUE(*first == *again);
  EXPECT_FALSE(*first == *other);
}

}  // namespace
}  // namespace determinism
}  // namespace kiln
