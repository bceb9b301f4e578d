#include "compiler/pipeline/Pipeline.h"

#include "mlir/Pass/PassRegistry.h"

#include <gtest/gtest.h>

namespace mlir::kiln {
namespace {

std::string textualPipeline(OpPassManager &pm) {
  std::string text;
  llvm::raw_string_ostream os(text);
  pm.printAsTextualPipeline(os);
  return text;
}

TEST(PipelineTest, StagesFollowTheOptions) {
  PipelineOptions options;
  OpPassManager training("builtin.module");
  buildKilnPipeline(training, options);
  std::string text = textualPipeline(training);
  EXPECT_EQ(text.find("kiln-mixed-precision"), std::string::npos) << text;
  EXPECT_EQ(text.find("kiln-emit-cuda"), std::string::npos) << text;
  size_t step = text.find("kiln-make-train-step{");
  size_t fuse = text.find("kiln-fuse");
  size_t plan = text.find("kiln-plan-memory{reuse-delay=1}");
  ASSERT_NE(step, std::string::npos) << text;
  EXPECT_NE(text.find("optimizer=adamw"), std::string::npos) << text;
  EXPECT_LT(step, fuse);
  EXPECT_LT(fuse, plan);
  EXPECT_NE(plan, std::string::npos) << text;

  options.train = "none";
  options.precision = "bf16";
  options.reuseDelay = 0;
  options.codegen = true; // the registered pipeline's: not built here
  OpPassManager inference("builtin.module");
  buildKilnPipeline(inference, options);
  text = textualPipeline(inference);
  size_t mixed =
      text.find("kiln-mixed-precision{function=loss precision=bf16}");
  size_t forward = text.find("kiln-make-forward{function=loss}");
  ASSERT_NE(mixed, std::string::npos) << text;
  ASSERT_NE(forward, std::string::npos) << text;
  EXPECT_LT(mixed, forward);
  EXPECT_EQ(text.find("kiln-emit-cuda"), std::string::npos) << text;
  EXPECT_NE(text.find("kiln-plan-memory{reuse-delay=0}"), std::string::npos);
  EXPECT_EQ(text.find("kiln-make-train-step"), std::string::npos) << text;
}

TEST(PipelineTest, RejectsUnknownTrainAndPrecision) {
  std::string error;
  auto collect = [&](const Twine &message) {
    error = message.str();
    return failure();
  };
  PipelineOptions options;
  EXPECT_TRUE(succeeded(verifyPipelineOptions(options, collect)));
  options.train = "lion";
  EXPECT_TRUE(failed(verifyPipelineOptions(options, collect)));
  EXPECT_NE(error.find("got 'lion'"), std::string::npos) << error;
  options.train = "sgd";
  options.precision = "fp8";
  EXPECT_TRUE(failed(verifyPipelineOptions(options, collect)));
  EXPECT_NE(error.find("got 'fp8'"), std::string::npos) << error;
}

TEST(PipelineTest, RegisteredAsKilnPipeline) {
  registerKilnPasses();
  registerKilnPasses(); // registering twice is harmless
  OpPassManager pm("builtin.module");
  std::string errors;
  llvm::raw_string_ostream os(errors);
  ASSERT_TRUE(succeeded(
      parsePassPipeline("kiln-pipeline{train=none precision=f16}", pm, os)))
      << errors;
  std::string text = textualPipeline(pm);
  EXPECT_NE(text.find("precision=f16"), std::string::npos) << text;
  EXPECT_NE(text.find("kiln-make-forward"), std::string::npos) << text;

  OpPassManager bad("builtin.module");
  EXPECT_TRUE(failed(parsePassPipeline("kiln-pipeline{train=lion}", bad, os)));
  EXPECT_NE(errors.find("train must be adamw, adam, sgd or none"),
            std::string::npos)
      << errors;
}

TEST(PipelineTest, CodegenOptionsNeedCodegen) {
  registerKilnPasses();
  std::string errors;
  llvm::raw_string_ostream os(errors);
  // Options the pipeline does not declare are code generation's.
  OpPassManager without("builtin.module");
  EXPECT_TRUE(failed(parsePassPipeline(
      "kiln-pipeline{train=none gemm-schedule=pingpong}", without, os)));
  EXPECT_NE(errors.find("'gemm-schedule=pingpong': not options of "
                        "kiln-pipeline (those of code generation need "
                        "codegen=true)"),
            std::string::npos)
      << errors;
  // This test links no code generator: kiln-cuda is not registered.
  OpPassManager unregistered("builtin.module");
  EXPECT_TRUE(failed(
      parsePassPipeline("kiln-pipeline{codegen=true}", unregistered, os)));
  EXPECT_NE(errors.find("codegen=true needs kiln-cuda (code generation), "
                        "which this program does not register"),
            std::string::npos)
      << errors;
}

} // namespace
} // namespace mlir::kiln
