// Training the MLP sample with forward_backward + apply_update gives
// bit-identical parameters and optimizer state to train_step, step by step
// (f32 mode, AdamW with the sample's settings, a cosine schedule).

#include "compiler/training/ReferenceTrainer.h"
#include "compiler/training/TrainStep.h"
#include "dialects/kiln/Gradients/GradientUtils.h"
#include "dialects/kiln/IR/KilnDialect.h"
#include "samples/data/sine_task.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>

namespace mlir::kiln {
namespace {

class SplitEntriesTest : public ::testing::Test {
protected:
  SplitEntriesTest() {
    DialectRegistry registry;
    registry.insert<KilnDialect, func::FuncDialect>();
    registerGradientRules(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    context.getDiagEngine().registerHandler([this](Diagnostic &diag) {
      diagnostics += diag.str() + "\n";
      return success();
    });
  }

  MLIRContext context;
  std::string diagnostics;
};

NamedTensors regressionBatch(std::mt19937_64 &rng) {
  ::kiln::samples::RegressionBatch data =
      ::kiln::samples::MakeRegressionBatch(rng, 64);
  ref::Tensor x({64, ::kiln::samples::kRegressionFeatures}, ref::ElementKind::F32);
  ref::Tensor y({64, 1}, ref::ElementKind::F32);
  x.data.assign(data.x.begin(), data.x.end());
  y.data.assign(data.y.begin(), data.y.end());
  NamedTensors batch;
  batch["x"] = std::move(x);
  batch["y"] = std::move(y);
  return batch;
}

bool bitEqual(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST_F(SplitEntriesTest, MlpSplitEntriesMatchTrainStepBitForBit) {
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>("samples/mlp.mlir", &context);
  ASSERT_TRUE(module) << diagnostics;
  TrainStepOptions options; // AdamW
  options.optimizer.beta2 = 0.99;
  options.optimizer.weightDecay = 0.01;
  options.transforms.clipNorm = 1.0;
  ASSERT_TRUE(succeeded(buildTrainingEntries(*module, options))) << diagnostics;
  ASSERT_TRUE(succeeded(verify(*module))) << diagnostics;

  auto whole = ReferenceTrainer::create(*module, /*seed=*/5, ref::Precision::F32);
  auto split = ReferenceTrainer::create(*module, /*seed=*/5, ref::Precision::F32);
  ASSERT_TRUE(succeeded(whole) && succeeded(split)) << diagnostics;

  std::mt19937_64 rng(11);
  constexpr int kSteps = 20;
  for (int step = 0; step < kSteps; ++step) {
    NamedTensors batch = regressionBatch(rng);
    double lr = ::kiln::samples::CosineLearningRate(step, kSteps, 1e-2, 1e-3, 2);
    FailureOr<double> wholeLoss = (*whole)->step(batch, lr);
    NamedTensors gradients;
    FailureOr<double> splitLoss = (*split)->forwardBackward(batch, gradients);
    ASSERT_TRUE(succeeded(wholeLoss) && succeeded(splitLoss)) << diagnostics;
    ASSERT_EQ(gradients.size(), 4u);
    ASSERT_TRUE(succeeded((*split)->applyUpdate(gradients, lr))) << diagnostics;
    EXPECT_TRUE(bitEqual(*wholeLoss, *splitLoss))
        << "step " << step << ": " << *wholeLoss << " vs " << *splitLoss;

    const NamedTensors &a = (*whole)->state(), &b = (*split)->state();
    ASSERT_EQ(a.size(), b.size());
    for (const auto &entry : a) {
      auto other = b.find(entry.getKey());
      ASSERT_NE(other, b.end()) << entry.getKey().str();
      const std::vector<double> &x = entry.getValue().data, &y = other->getValue().data;
      ASSERT_EQ(x.size(), y.size());
      for (size_t i = 0; i < x.size(); ++i)
        ASSERT_TRUE(bitEqual(x[i], y[i]))
            << entry.getKey().str() << "[" << i << "] after step " << step + 1
            << ": " << x[i] << " vs " << y[i];
    }
  }
  // Parameters and both Adam moments of the four parameters.
  EXPECT_EQ((*whole)->state().size(), 12u);
  EXPECT_EQ((*whole)->stepCount(), kSteps);
  EXPECT_EQ((*split)->stepCount(), kSteps);
}

} // namespace
} // namespace mlir::kiln
