#include "tools/kiln-ref/BatchJobs.h"

#include "gtest/gtest.h"

namespace kiln::tools {
namespace {

TEST(BatchJobs, ReadsTabSeparatedRunsAndSkipsCommentsAndBlankLines) {
  std::string error;
  std::vector<BatchJob> jobs =
      parseBatchJobs("runs.txt",
                     "# model function precision inputs output\n"
                     "a.mlir\tforward\tf64\tin.safetensors\tout.safetensors\n"
                     "\n"
                     "b c.mlir\tstep\tf32\t-\tout 2.safetensors\r\n",
                     error);
  ASSERT_EQ(error, "");
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].line, 2u);
  EXPECT_EQ(jobs[0].model, "a.mlir");
  EXPECT_EQ(jobs[0].function, "forward");
  EXPECT_EQ(jobs[0].precision, "f64");
  EXPECT_EQ(jobs[0].inputs, "in.safetensors");
  EXPECT_EQ(jobs[0].output, "out.safetensors");
  EXPECT_EQ(jobs[1].line, 4u);
  EXPECT_EQ(jobs[1].model, "b c.mlir");
  EXPECT_EQ(jobs[1].inputs, "-");
  EXPECT_EQ(jobs[1].output, "out 2.safetensors");
}

TEST(BatchJobs, NamesTheLineOfAWrongFieldCount) {
  std::string error;
  EXPECT_TRUE(
      parseBatchJobs("runs.txt", "\na.mlir f f64 in out\n", error).empty());
  EXPECT_EQ(error, "runs.txt:2: expected 5 tab-separated fields (model, "
                   "function, precision, inputs, output), got 1");
}

TEST(BatchJobs, RefusesABadPrecisionAnEmptyFieldAndOnnx) {
  std::string error;
  parseBatchJobs("r", "a.mlir\tf\tf16\tin\tout\n", error);
  EXPECT_EQ(error, "r:1: precision must be f32 or f64, got 'f16'");
  parseBatchJobs("r", "a.mlir\t\tf64\tin\tout\n", error);
  EXPECT_EQ(error, "r:1: a field is empty");
  parseBatchJobs("r", "m.onnx\tf\tf64\tin\tout\n", error);
  EXPECT_EQ(error, "r:1: 'm.onnx' is an ONNX model: --batch takes kiln .mlir "
                   "models (run an ONNX model on its own)");
}

TEST(BatchJobs, AnEmptyFileHasNoRuns) {
  std::string error;
  EXPECT_TRUE(parseBatchJobs("r", "", error).empty());
  EXPECT_EQ(error, "");
}

} // namespace
} // namespace kiln::tools
