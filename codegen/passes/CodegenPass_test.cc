#include "codegen/passes/CodegenPass.h"

#include "codegen/dialect/KilnCudaDialect.h"

#include "compiler/pipeline/Pipeline.h"
#include "compiler/testing/KilnTestContext.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
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

TEST(CodegenPassTest, HandsOverTheGeneratedModule) {
  KilnTestContext test;
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(kModel, &test.context);
  ASSERT_TRUE(module) << test.diagnostics;

  PipelineOptions options;
  options.function = "f";
  options.train = "none";
  KilnEmitCudaOptions emitOptions;
  emitOptions.compile = false; // CUDA C++ only: no NVRTC in a unit test
  codegen::CompiledModule compiled;
  PassManager pm(&test.context);
  buildKilnPipeline(pm, options);
  pm.addPass(codegen::createKilnSelectKernelsPass({}));
  pm.addPass(codegen::createKilnEmitCudaPass(emitOptions, &compiled));
  ASSERT_TRUE(succeeded(pm.run(*module))) << test.diagnostics;

  EXPECT_EQ(compiled.arch, "sm_90");
  ASSERT_EQ(compiled.entries.size(), 1u);
  EXPECT_EQ(compiled.entries[0].name, "forward");
  EXPECT_FALSE(compiled.entries[0].launches.empty());
  ASSERT_FALSE(compiled.kernels.empty());
  EXPECT_NE(compiled.kernels[0].source.find("__global__"), std::string::npos);
  EXPECT_TRUE(compiled.kernels[0].binary.ptx.empty());
}

constexpr const char *kGemmModel = R"mlir(
func.func @f(%x: tensor<256x2048xbf16> {kiln.name = "x"},
             %w: tensor<2048x256xbf16> {kiln.name = "w"}) -> tensor<256x256xbf16> {
  %0 = kiln.matmul %x, %w : tensor<256x2048xbf16>, tensor<2048x256xbf16>
  return %0 : tensor<256x256xbf16>
}
)mlir";

/// kGemmModel planned by kilnc's passes before code generation (inference),
/// then its kernels selected when `select` says so; null on a failure.
OwningOpRef<ModuleOp> plannedGemm(KilnTestContext &test, bool select) {
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(kGemmModel, &test.context);
  EXPECT_TRUE(module) << test.diagnostics;
  if (!module)
    return nullptr;
  PipelineOptions options;
  options.function = "f";
  options.train = "none";
  PassManager pm(&test.context);
  buildKilnPipeline(pm, options);
  if (select)
    pm.addPass(codegen::createKilnSelectKernelsPass({}));
  if (failed(pm.run(*module))) {
    ADD_FAILURE() << test.diagnostics;
    return nullptr;
  }
  return module;
}

/// The CUDA source of kGemmModel's kernels after kilnc's passes, its gemm
/// fusion's kiln_cuda.kernel set to `forced` (when not null) between
/// selection and code generation.
std::string gemmSources(KilnTestContext &test, const char *forced) {
  OwningOpRef<ModuleOp> module = plannedGemm(test, /*select=*/true);
  if (!module)
    return "";
  if (forced)
    module->walk([&](FusionOp fusion) {
      fusion->setAttr(cuda::kKernelAttrName,
                      parseAttribute(forced, &test.context));
    });
  KilnEmitCudaOptions emitOptions;
  emitOptions.compile = false;
  codegen::CompiledModule compiled;
  PassManager generate(&test.context);
  generate.addPass(codegen::createKilnEmitCudaPass(emitOptions, &compiled));
  EXPECT_TRUE(succeeded(generate.run(*module))) << test.diagnostics;
  std::string sources;
  for (const codegen::CompiledKernelImage &kernel : compiled.kernels)
    sources += kernel.source;
  return sources;
}

TEST(CodegenPassTest, RendersTheKernelRecordedInTheIr) {
  KilnTestContext test;
  std::string chosen = gemmSources(test, nullptr);
  EXPECT_EQ(chosen.find("BM = 64, BN = 64, BK = 32"), std::string::npos)
      << chosen;
  std::string forced =
      gemmSources(test, "#kiln_cuda.gemm<mma, tile = 64x64x32, stages = 4, "
                        "split = 3>");
  EXPECT_NE(forced.find("BM = 64, BN = 64, BK = 32"), std::string::npos)
      << forced;
  EXPECT_NE(forced.find("SPLIT = 3"), std::string::npos);
  EXPECT_NE(forced.find("kiln::gemm::splitk_reduce"), std::string::npos);
}

TEST(CodegenPassTest, EmissionNeedsTheRecordedKernels) {
  KilnTestContext test;
  test.context.getOrLoadDialect<cuda::KilnCudaDialect>();
  OwningOpRef<ModuleOp> module = plannedGemm(test, /*select=*/false);
  ASSERT_TRUE(module);
  module->walk([&](FusionOp fusion) {
    fusion->setAttr(cuda::kKernelAttrName, parseAttribute(
        "#kiln_cuda.gemm<mma, tile = 64x64x32, stages = 4>", &test.context));
  });
  KilnEmitCudaOptions emitOptions;
  emitOptions.compile = false;
  PassManager generate(&test.context);
  generate.addPass(codegen::createKilnEmitCudaPass(emitOptions, nullptr));
  EXPECT_TRUE(failed(generate.run(*module)));
  EXPECT_NE(test.diagnostics.find("the module has no kiln_cuda.target"),
            std::string::npos)
      << test.diagnostics;

  (*module)->setAttr(cuda::kTargetAttrName,
                     parseAttribute("#kiln_cuda.target<\"sm_90\">",
                                    &test.context));
  module->walk([&](FusionOp fusion) {
    fusion->removeAttr(cuda::kKernelAttrName);
  });
  EXPECT_TRUE(failed(generate.run(*module)));
  EXPECT_NE(test.diagnostics.find("has no kiln_cuda.kernel: kiln-emit-cuda "
                                  "renders the recorded kernels; run "
                                  "--kiln-select-kernels first"),
            std::string::npos)
      << test.diagnostics;
}

TEST(CodegenPassTest, KilnPipelineForwardsTheCodegenOptions) {
  registerKilnPasses();
  registerCodegenPasses();
  OpPassManager pm("builtin.module");
  std::string errors;
  llvm::raw_string_ostream os(errors);
  ASSERT_TRUE(succeeded(parsePassPipeline(
      "kiln-pipeline{train=none codegen=true arch=sm_80 "
      "gemm-schedule=pingpong gemm-cluster=auto custom-kernel-dir=a,b}",
      pm, os)))
      << errors;
  std::string text = textualPipeline(pm);
  EXPECT_NE(text.find("kiln-make-forward"), std::string::npos) << text;
  size_t select = text.find("kiln-select-kernels{arch=sm_80");
  size_t emit = text.find("kiln-emit-cuda{");
  ASSERT_NE(select, std::string::npos) << text;
  ASSERT_NE(emit, std::string::npos) << text;
  EXPECT_LT(select, emit) << text;
  // Each option goes to the one pass that declares it.
  EXPECT_NE(text.find("gemm-schedule=pingpong"), std::string::npos) << text;
  EXPECT_LT(text.find("gemm-cluster=auto"), emit) << text;
  EXPECT_GT(text.find("custom-kernel-dir=a,b"), emit) << text;
  EXPECT_EQ(text.find("arch=", emit), std::string::npos) << text;
}

TEST(CodegenPassTest, EnumeratedOptionsTakeOnlyTheirNames) {
  registerCodegenPasses();
  OpPassManager pm("builtin.module");
  std::string errors;
  llvm::raw_string_ostream os(errors);
  EXPECT_TRUE(
      failed(parsePassPipeline("kiln-select-kernels{gemm-cluster=4}", pm, os)));
  EXPECT_TRUE(
      failed(parsePassPipeline("kiln-emit-cuda{gemm-cluster=2}", pm, os)));
  EXPECT_EQ(parseChoice<codegen::GemmCluster>("2"), codegen::GemmCluster::Two);
  EXPECT_EQ(parseChoice<codegen::GemmSchedule>("fast"), std::nullopt);
  EXPECT_EQ(choiceNames<codegen::AttentionSchedule>(),
            "auto, cooperative or pingpong");
  EXPECT_EQ(choiceName(codegen::GemmSchedule::PingPong), "pingpong");
}

TEST(CodegenPassTest, OptionHelpComesFromThePass) {
  EXPECT_EQ(codegen::codegenOptionHelp("arch"), "Target architecture");
  EXPECT_TRUE(codegen::codegenOptionHelp("gemm-schedule")
                  .starts_with("How the TMA GEMM kernel's consumer"));
  EXPECT_EQ(codegen::codegenOptionHelp("compile"),
            "Compile the kernels (false: generate CUDA C++ only)");
}

} // namespace
} // namespace mlir::kiln
