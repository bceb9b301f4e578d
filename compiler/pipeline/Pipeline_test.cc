#include "compiler/pipeline/Pipeline.h"

#include "codegen/cuda/ModuleCodegen.h"
#include "compiler/testing/KilnTestContext.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassRegistry.h"

#include <gtest/gtest.h>

namespace mlir::kiln {
namespace {

constexpr const char *kModel = R"mlir(
func.func @f(%w: tensor<8xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "w"},
             %x: tensor<4x8xf32> {kiln.name = "x"}) -> tensor<f32> {
  %0 = kiln.add %x, %w : tensor<4x8xf32>, tensor<8xf32>
  %1 = kiln.tanh %0 : tensor<4x8xf32>
  %2 = kiln.reduce_sum %1 dims = [0, 1] : tensor<4x8xf32>
  return %2 : tensor<f32>
}
)mlir";

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
  EXPECT_EQ(text.find("kiln-codegen"), std::string::npos) << text;
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
  options.codegen = true;
  options.arch = "sm_80";
  OpPassManager inference("builtin.module");
  buildKilnPipeline(inference, options);
  text = textualPipeline(inference);
  size_t mixed =
      text.find("kiln-mixed-precision{function=loss precision=bf16}");
  size_t forward = text.find("kiln-make-forward{function=loss}");
  size_t codegen = text.find("kiln-codegen{arch=sm_80");
  ASSERT_NE(mixed, std::string::npos) << text;
  ASSERT_NE(forward, std::string::npos) << text;
  ASSERT_NE(codegen, std::string::npos) << text;
  EXPECT_LT(mixed, forward);
  EXPECT_LT(forward, codegen);
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

TEST(PipelineTest, CodegenHandsOverTheGeneratedModule) {
  KilnTestContext test;
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(kModel, &test.context);
  ASSERT_TRUE(module) << test.diagnostics;

  PipelineOptions options;
  options.function = "f";
  options.train = "none";
  options.codegen = true;
  options.compile = false; // CUDA C++ only: no NVRTC in a unit test
  codegen::CompiledModule compiled;
  PassManager pm(&test.context);
  buildKilnPipeline(pm, options, &compiled);
  ASSERT_TRUE(succeeded(pm.run(*module))) << test.diagnostics;

  EXPECT_EQ(compiled.arch, "sm_90");
  ASSERT_EQ(compiled.entries.size(), 1u);
  EXPECT_EQ(compiled.entries[0].name, "forward");
  EXPECT_FALSE(compiled.entries[0].launches.empty());
  ASSERT_FALSE(compiled.kernels.empty());
  EXPECT_NE(compiled.kernels[0].source.find("__global__"), std::string::npos);
  EXPECT_TRUE(compiled.kernels[0].binary.ptx.empty());
}

} // namespace
} // namespace mlir::kiln
