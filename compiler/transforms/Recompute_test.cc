// kiln-recompute trades memory for kernels without changing results: the
// training entries with recomputed norms compute exactly what they computed
// before (f64 reference, fresh random inputs), in a smaller planned arena.

#include "compiler/transforms/Fusion.h"
#include "compiler/transforms/MemoryPlan.h"

#include "compiler/interpreter/Interpreter.h"
#include "compiler/testing/KilnTestContext.h"
#include "compiler/training/TrainStep.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <random>

namespace mlir::kiln {
namespace {

// A norm whose output the backward reads again (for w2's gradient) long
// after the forward, from an input it keeps anyway (for the norm's own
// gradient): the candidate kiln-recompute exists for. 512x512 f32 is 1 MiB.
constexpr char kModel[] = R"mlir(
func.func @loss(
    %w1: tensor<512x512xf32> {kiln.param = #kiln.init<xavier>, kiln.name = "w1"},
    %g: tensor<512xf32> {kiln.param = #kiln.init<ones>, kiln.name = "g"},
    %w2: tensor<512x512xf32> {kiln.param = #kiln.init<xavier>, kiln.name = "w2"},
    %w3: tensor<512x512xf32> {kiln.param = #kiln.init<xavier>, kiln.name = "w3"},
    %x: tensor<512x512xf32> {kiln.name = "x"}) -> tensor<f32> {
  %a = kiln.matmul %x, %w1 : tensor<512x512xf32>, tensor<512x512xf32>
  %n = kiln.rms_norm %a, %g eps = 1.0e-05 : tensor<512x512xf32>, tensor<512xf32>
  %b = kiln.matmul %n, %w2 : tensor<512x512xf32>, tensor<512x512xf32>
  %c = kiln.tanh %b : tensor<512x512xf32>
  %d = kiln.matmul %c, %w3 : tensor<512x512xf32>, tensor<512x512xf32>
  %e = kiln.tanh %d : tensor<512x512xf32>
  %l = kiln.reduce_mean %e dims = [0, 1] : tensor<512x512xf32>
  return %l : tensor<f32>
}
)mlir";

// A Linear layer of a scalar feature (an outer product and a bias) whose
// output the norm's gradient reads at the very end of the backward: it is
// computed again there from the batch and the parameters, two ops back,
// since the product it adds the bias to is not kept.
constexpr char kScalarFeatureModel[] = R"mlir(
func.func @loss(
    %w_in: tensor<1x512xf32> {kiln.param = #kiln.init<uniform, low = -1.0, high = 1.0>, kiln.name = "w_in"},
    %b_in: tensor<512xf32> {kiln.param = #kiln.init<uniform, low = -1.0, high = 1.0>, kiln.name = "b_in"},
    %g: tensor<512xf32> {kiln.param = #kiln.init<ones>, kiln.name = "g"},
    %w2: tensor<512x512xf32> {kiln.param = #kiln.init<xavier>, kiln.name = "w2"},
    %w3: tensor<512x512xf32> {kiln.param = #kiln.init<xavier>, kiln.name = "w3"},
    %x: tensor<512x1xf32> {kiln.name = "x"}) -> tensor<f32> {
  %e = kiln.matmul %x, %w_in : tensor<512x1xf32>, tensor<1x512xf32>
  %h = kiln.add %e, %b_in : tensor<512x512xf32>, tensor<512xf32>
  %n = kiln.rms_norm %h, %g eps = 1.0e-05 : tensor<512x512xf32>, tensor<512xf32>
  %b = kiln.matmul %n, %w2 : tensor<512x512xf32>, tensor<512x512xf32>
  %c = kiln.tanh %b : tensor<512x512xf32>
  %d = kiln.matmul %c, %w3 : tensor<512x512xf32>, tensor<512x512xf32>
  %t = kiln.tanh %d : tensor<512x512xf32>
  %l = kiln.reduce_mean %t dims = [0, 1] : tensor<512x512xf32>
  return %l : tensor<f32>
}
)mlir";

class RecomputeTest : protected KilnTestContext, public ::testing::Test {
protected:
  OwningOpRef<ModuleOp> trainingModule(const char *source = kModel) {
    OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(source, &context);
    EXPECT_TRUE(module) << diagnostics;
    TrainStepOptions options;
    options.optimizer.kind = OptimizerKind::SGD;
    EXPECT_TRUE(succeeded(buildTrainingEntries(*module, options)))
        << diagnostics;
    return module;
  }

  LogicalResult recompute(ModuleOp module, uint64_t budget) {
    PassManager pm(&context);
    KilnRecomputeOptions options;
    options.memoryBudget = budget;
    pm.addPass(createKilnRecompute(options));
    return pm.run(module);
  }

  static uint64_t plannedArena(ModuleOp module, StringRef entry) {
    OwningOpRef<ModuleOp> copy = module.clone();
    auto function = copy->lookupSymbol<func::FuncOp>(entry);
    EXPECT_TRUE(succeeded(fuseFunction(function)) &&
                succeeded(planMemory(function)));
    return function->getAttrOfType<IntegerAttr>("kiln.arena_size")
        .getValue()
        .getZExtValue();
  }

  static int norms(func::FuncOp function) {
    return std::distance(function.getOps<RmsNormOp>().begin(),
                         function.getOps<RmsNormOp>().end());
  }

  /// Runs `before` and `after` on the CPU reference (f64) on the same fresh
  /// random inputs and expects every result to be the same.
  void expectSameResults(func::FuncOp before, func::FuncOp after,
                         StringRef entry) {
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    std::vector<ref::Tensor> inputs;
    for (Type type : before.getArgumentTypes()) {
      ref::Tensor t = ref::Tensor::ofType(cast<RankedTensorType>(type));
      for (double &x : t.data)
        x = t.kind == ref::ElementKind::I32 ? 3 : dist(rng);
      inputs.push_back(std::move(t));
    }
    ref::Interpreter interpreter(ref::Precision::F64);
    auto expected = interpreter.run(before, inputs);
    auto actual = interpreter.run(after, inputs);
    ASSERT_TRUE(succeeded(expected) && succeeded(actual)) << diagnostics;
    ASSERT_EQ(expected->size(), actual->size());
    for (size_t i = 0; i < expected->size(); ++i)
      EXPECT_EQ((*expected)[i].data, (*actual)[i].data)
          << entry.str() << " result " << i;
  }

  std::mt19937_64 rng{std::random_device{}()};
};

TEST_F(RecomputeTest, RecomputedNormsGiveIdenticalResultsInLessMemory) {
  OwningOpRef<ModuleOp> plain = trainingModule();
  OwningOpRef<ModuleOp> lean = plain->clone();
  // 1 byte: over budget whatever is recomputed; every gain is taken.
  ASSERT_TRUE(succeeded(recompute(*lean, 1))) << diagnostics;
  ASSERT_TRUE(succeeded(verify(*lean)));
  EXPECT_NE(diagnostics.find("memory budget of 1 bytes not met"),
            std::string::npos)
      << diagnostics;
  for (StringRef entry : {"forward_backward", "train_step"}) {
    auto before = plain->lookupSymbol<func::FuncOp>(entry);
    auto after = lean->lookupSymbol<func::FuncOp>(entry);
    EXPECT_EQ(norms(before), 1) << entry.str();
    // A copy is kept only where the planned arena shrinks: in
    // forward_backward, where the norm's output waits for w2's gradient.
    // (In train_step the update's own buffers set the peak here.)
    auto choices = after->getAttrOfType<ArrayAttr>("kiln.recomputed");
    if (entry == "forward_backward") {
      ASSERT_TRUE(choices && choices.size() == 1);
    }
    uint64_t arenaBefore = plannedArena(*plain, entry);
    uint64_t arenaAfter = plannedArena(*lean, entry);
    if (choices) {
      EXPECT_EQ(norms(after), 1 + static_cast<int>(choices.size()));
      auto choice = cast<DictionaryAttr>(choices[0]);
      EXPECT_TRUE(choice.getAs<StringAttr>("op").getValue().starts_with(
          "kiln.rms_norm"));
      EXPECT_EQ(choice.getAs<IntegerAttr>("bytes").getInt(), 512 * 512 * 4);
      EXPECT_LT(arenaAfter, arenaBefore) << entry.str();
      EXPECT_EQ(cast<DictionaryAttr>(choices[choices.size() - 1])
                    .getAs<IntegerAttr>("arena_after")
                    .getInt(),
                static_cast<int64_t>(arenaAfter));
    } else {
      EXPECT_EQ(norms(after), 1);
      EXPECT_EQ(arenaAfter, arenaBefore);
    }
    expectSameResults(before, after, entry);
  }
  // Only the training entries hold activations for a backward.
  EXPECT_FALSE(lean->lookupSymbol<func::FuncOp>("forward")->hasAttr(
      "kiln.recomputed"));
}

TEST_F(RecomputeTest, ComputesAnOperandAgainWhenItIsNotKept) {
  OwningOpRef<ModuleOp> plain = trainingModule(kScalarFeatureModel);
  OwningOpRef<ModuleOp> lean = plain->clone();
  ASSERT_TRUE(succeeded(recompute(*lean, 1))) << diagnostics;
  ASSERT_TRUE(succeeded(verify(*lean)));
  auto before = plain->lookupSymbol<func::FuncOp>("forward_backward");
  auto after = lean->lookupSymbol<func::FuncOp>("forward_backward");
  auto choices = after->getAttrOfType<ArrayAttr>("kiln.recomputed");
  ASSERT_TRUE(choices) << diagnostics;
  // The bias add is computed again with the outer product it adds to.
  bool addWithProduct = false;
  for (auto choice : choices.getAsRange<DictionaryAttr>())
    if (choice.getAs<StringAttr>("op").getValue().starts_with("kiln.add"))
      addWithProduct = choice.getAs<IntegerAttr>("ops").getInt() == 2;
  EXPECT_TRUE(addWithProduct) << diagnostics;
  auto products = [](func::FuncOp function) {
    return std::distance(function.getOps<MatmulOp>().begin(),
                         function.getOps<MatmulOp>().end());
  };
  EXPECT_GT(products(after), products(before));
  EXPECT_LT(plannedArena(*lean, "forward_backward"),
            plannedArena(*plain, "forward_backward"));
  expectSameResults(before, after, "forward_backward");
}

TEST_F(RecomputeTest, NothingChangesWithinTheBudget) {
  OwningOpRef<ModuleOp> module = trainingModule();
  OwningOpRef<ModuleOp> copy = module->clone();
  ASSERT_TRUE(succeeded(recompute(*copy, uint64_t(1) << 40)));
  for (StringRef entry : {"forward_backward", "train_step"}) {
    auto function = copy->lookupSymbol<func::FuncOp>(entry);
    EXPECT_EQ(norms(function), 1);
    EXPECT_FALSE(function->hasAttr("kiln.recomputed"));
  }
  EXPECT_TRUE(diagnostics.empty()) << diagnostics;
}

} // namespace
} // namespace mlir::kiln
