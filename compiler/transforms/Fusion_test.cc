// Fusion only regroups ops (and moves data through exact layout rewrites):
// the fused training entries compute exactly what the unfused ones do,
// checked in the f64 reference on both samples, in f32 and with bf16
// storage.

#include "compiler/transforms/Fusion.h"
#include "compiler/transforms/MixedPrecision.h"

#include "compiler/interpreter/Interpreter.h"
#include "compiler/training/TrainStep.h"
#include "compiler/testing/KilnTestContext.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <random>

namespace mlir::kiln {
namespace {

struct Sample {
  const char *path;
  bool bf16;
};

class FusionTest : public ::testing::TestWithParam<Sample>,
                   protected KilnTestContext {};

TEST_P(FusionTest, FusedEntriesComputeTheSameResults) {
  OwningOpRef<ModuleOp> plain =
      parseSourceFile<ModuleOp>(GetParam().path, &context);
  ASSERT_TRUE(plain) << diagnostics;
  if (GetParam().bf16)
    ASSERT_TRUE(succeeded(narrowStorage(
        plain->lookupSymbol<func::FuncOp>("loss"), FloatType::getBF16(&context))))
        << diagnostics;
  TrainStepOptions options;
  options.transforms.statistics = true;
  options.transforms.clipNorm = 1.0;
  ASSERT_TRUE(succeeded(buildTrainingEntries(*plain, options))) << diagnostics;
  OwningOpRef<ModuleOp> fused = plain->clone();
  for (auto function : fused->getOps<func::FuncOp>())
    ASSERT_TRUE(succeeded(fuseFunction(function)));
  ASSERT_TRUE(succeeded(verify(*fused))) << diagnostics;

  std::mt19937_64 rng(std::random_device{}());
  // Positive, so that optimizer state such as Adam's second moment is valid.
  std::uniform_real_distribution<double> dist(0.05, 1.0);
  for (llvm::StringRef entry : {"forward", "forward_backward", "apply_update", "train_step"}) {
    auto a = plain->lookupSymbol<func::FuncOp>(entry);
    auto b = fused->lookupSymbol<func::FuncOp>(entry);
    ASSERT_TRUE(a && b);
    // Every top-level op of a fused entry is a fusion, a view or the return.
    for (Operation &op : b.getBody().front())
      EXPECT_TRUE((isa<FusionOp, ReshapeOp, func::ReturnOp>(op)))
          << entry.str() << ": " << op.getName().getStringRef().str();
    std::vector<ref::Tensor> inputs;
    for (Type type : a.getArgumentTypes()) {
      ref::Tensor t = ref::Tensor::ofType(cast<RankedTensorType>(type));
      for (double &x : t.data)
        x = t.kind == ref::ElementKind::I32 ? 3 : dist(rng);
      inputs.push_back(std::move(t));
    }
    ref::Interpreter interpreter(ref::Precision::F64);
    auto expected = interpreter.run(a, inputs);
    auto actual = interpreter.run(b, inputs);
    ASSERT_TRUE(succeeded(expected) && succeeded(actual)) << diagnostics;
    ASSERT_EQ(expected->size(), actual->size());
    for (size_t i = 0; i < expected->size(); ++i)
      EXPECT_EQ((*expected)[i].data, (*actual)[i].data) << entry.str() << " result " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Samples, FusionTest,
    ::testing::Values(Sample{"samples/sine_block.mlir", false},
                      Sample{"samples/sine_block.mlir", true},
                      Sample{"samples/mlp.mlir", false},
                      Sample{"samples/mlp.mlir", true}),
    [](const ::testing::TestParamInfo<Sample> &info) {
      std::string name = llvm::StringRef(info.param.path).rsplit('/').second.str();
      name = name.substr(0, name.find('.'));
      return name + (info.param.bf16 ? "_bf16" : "_f32");
    });

} // namespace
} // namespace mlir::kiln
