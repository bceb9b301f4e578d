// kiln::FindOutput: an entry's output by name, or an error naming the outputs
// there are (no GPU: the map holds default-constructed tensors).
#include <string>

#include "gtest/gtest.h"
#include "kiln/runtime.h"

namespace kiln {
namespace {

TEST(FindOutputTest, FindsByNameOrNamesTheOutputs) {
  Outputs outputs;
  outputs.emplace("loss", Tensor());
  outputs.emplace("predicted", Tensor());
  EXPECT_TRUE(FindOutput(outputs, "predicted").ok());
  absl::StatusOr<Tensor> missing = FindOutput(outputs, "logits");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(),
            "no output 'logits'; the outputs are: loss, predicted");
}

}  // namespace
}  // namespace kiln
