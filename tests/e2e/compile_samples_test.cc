// kilnc's pipeline on the samples: every kernel it generates is assembled by
// ptxas for sm_90, and the artifact passes the runtime's loader (the checks it
// runs before touching a GPU).

#include "codegen/artifact/ArtifactEmitter.h"
#include "codegen/cuda/ModuleCodegen.h"
#include "compiler/training/TrainStep.h"
#include "compiler/transforms/Fusion.h"
#include "compiler/transforms/MemoryPlan.h"
#include "compiler/testing/KilnTestContext.h"
#include "dialects/kiln/IR/KilnDialect.h"
#include "runtime/artifact/artifact.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

namespace mlir::kiln {
namespace {

class CompileSamplesTest : public ::testing::TestWithParam<const char *> {};

TEST_P(CompileSamplesTest, KernelsAssembleAndArtifactLoads) {
  KilnTestContext test;
  MLIRContext &context = test.context;
  std::string &diagnostics = test.diagnostics;
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(GetParam(), &context);
  ASSERT_TRUE(module) << diagnostics;
  TrainStepOptions options;
  options.transforms.statistics = true;
  options.transforms.clipNorm = 1.0;
  ASSERT_TRUE(succeeded(buildTrainingEntries(*module, options))) << diagnostics;
  for (auto function : module->getOps<func::FuncOp>())
    ASSERT_TRUE(succeeded(fuseFunction(function)) && succeeded(planMemory(function)))
        << diagnostics;
  ASSERT_TRUE(succeeded(verify(*module))) << diagnostics;

  FailureOr<codegen::CompiledModule> compiled =
      codegen::generateModule(*module, codegen::CodegenOptions{});
  ASSERT_TRUE(succeeded(compiled)) << diagnostics;
  EXPECT_EQ(compiled->entries.size(), 4u);

  std::string dir = ::testing::TempDir();
  for (const codegen::CompiledKernelImage &kernel : compiled->kernels) {
    std::string path = dir + "/" + kernel.name + ".ptx";
    std::ofstream(path) << kernel.binary.ptx;
    std::string command = "/usr/local/cuda/bin/ptxas -arch=" + kernel.arch + " -o " + dir +
                          "/k.cubin " + path + " 2>&1";
    EXPECT_EQ(std::system(command.c_str()), 0) << kernel.name;
    EXPECT_FALSE(kernel.binary.cubin.empty()) << kernel.name;
  }

  std::string error;
  FailureOr<::kiln::artifact::ArtifactFile> file =
      codegen::writeArtifact(*compiled, error);
  ASSERT_TRUE(succeeded(file)) << error;
  absl::StatusOr<::kiln::artifact::Artifact> loaded =
      ::kiln::artifact::LoadArtifact(file->Join());
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  for (const char *entry : {"forward", "forward_backward", "apply_update", "train_step"})
    EXPECT_NE(loaded->FindEntry(entry), nullptr) << entry;
  EXPECT_FALSE(loaded->parameters.empty());
}

INSTANTIATE_TEST_SUITE_P(Samples, CompileSamplesTest,
                         ::testing::Values("samples/sine_block.mlir",
                                           "samples/mlp.mlir"));

} // namespace
} // namespace mlir::kiln
