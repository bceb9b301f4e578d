#include "compiler/training/TrainStep.h"

#include "compiler/testing/KilnTestContext.h"
#include "compiler/training/ReferenceTrainer.h"
#include "dialects/kiln/Gradients/GradientUtils.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace mlir::kiln {
namespace {

// loss = sum(exp(x + w) * c): dL/dw = sum over rows of exp(x + w) * c.
constexpr const char *kModel = R"mlir(
  func.func @loss(%w: tensor<3x{T}> {kiln.param = #kiln.init<uniform, low = -0.5, high = 0.5>, kiln.name = "w"},
                  %x: tensor<2x3x{T}> {kiln.name = "x"},
                  %c: tensor<2x3x{T}> {kiln.name = "c"}) -> tensor<{T}> {
    %0 = kiln.add %x, %w : tensor<2x3x{T}>, tensor<3x{T}>
    %1 = kiln.exp %0 : tensor<2x3x{T}>
    %2 = kiln.mul %1, %c : tensor<2x3x{T}>, tensor<2x3x{T}>
    %3 = kiln.reduce_sum %2 dims = [0, 1] : tensor<2x3x{T}>
    return %3 : tensor<{T}>
  })mlir";

class TrainStepTest : public ::testing::Test, protected KilnTestContext {
protected:
  /// Parses the model with element type `type` and builds the entries.
  ModuleOp build(const TrainStepOptions &options,
                 llvm::StringRef type = "f32") {
    std::string source = kModel;
    for (size_t at; (at = source.find("{T}")) != std::string::npos;)
      source.replace(at, 3, type.str());
    module = parseSourceString<ModuleOp>(source, &context);
    EXPECT_TRUE(module) << diagnostics;
    EXPECT_TRUE(succeeded(buildTrainingEntries(*module, options)))
        << diagnostics;
    EXPECT_TRUE(succeeded(verify(*module))) << diagnostics;
    return *module;
  }

  NamedTensors randomInputs(ref::ElementKind kind = ref::ElementKind::F32) {
    NamedTensors inputs;
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    for (const char *name : {"x", "c"}) {
      ref::Tensor t({2, 3}, kind);
      for (double &v : t.data)
        v = ref::roundToStorage(dist(rng), kind, ref::Precision::F32);
      inputs[name] = std::move(t);
    }
    return inputs;
  }

  /// dL/dw of the model, in double.
  static std::vector<double> gradient(const std::vector<double> &w,
                                      const NamedTensors &in) {
    std::vector<double> g(3, 0.0);
    for (int r = 0; r < 2; ++r)
      for (int j = 0; j < 3; ++j)
        g[j] += std::exp(in.lookup("x").data[r * 3 + j] + w[j]) *
                in.lookup("c").data[r * 3 + j];
    return g;
  }

  std::unique_ptr<ReferenceTrainer>
  trainer(ModuleOp m, ref::Precision p = ref::Precision::F64) {
    auto t = ReferenceTrainer::create(m, /*seed=*/7, p);
    EXPECT_TRUE(succeeded(t)) << diagnostics;
    return std::move(*t);
  }

  OwningOpRef<ModuleOp> module;
  std::mt19937_64 rng{std::random_device{}()};
};

/// Constants are f32 in the IR, so the reference uses their f32 values.
double f32(double x) { return static_cast<float>(x); }

TEST_F(TrainStepTest, AdamWMatchesHandWrittenUpdate) {
  TrainStepOptions options;
  options.optimizer.kind = OptimizerKind::AdamW;
  options.optimizer.weightDecay = 0.05;
  auto t = trainer(build(options));
  std::vector<double> w = t->state().lookup("w").data, m(3, 0), v(3, 0);
  const double b1 = f32(0.9), b2 = f32(0.999), eps = f32(1e-8), wd = f32(0.05);
  for (int step = 1; step <= 4; ++step) {
    NamedTensors in = randomInputs();
    double lr = f32(0.01 * step);
    std::vector<double> g = gradient(w, in);
    ASSERT_TRUE(succeeded(t->step(in, lr))) << diagnostics;
    for (int j = 0; j < 3; ++j) {
      m[j] = b1 * m[j] + f32(1 - 0.9) * g[j];
      v[j] = b2 * v[j] + f32(1 - 0.999) * g[j] * g[j];
      double mHat = m[j] / (1 - std::pow(b1, step));
      double vHat = v[j] / (1 - std::pow(b2, step));
      w[j] -= lr * (mHat / (std::sqrt(vHat) + eps) + wd * w[j]);
    }
    for (int j = 0; j < 3; ++j) {
      EXPECT_NEAR(t->state().lookup("w").data[j], w[j], 1e-12)
          << "step " << step;
      EXPECT_NEAR(t->state().lookup("adam_m.w").data[j], m[j], 1e-12);
      EXPECT_NEAR(t->state().lookup("adam_v.w").data[j], v[j], 1e-12);
    }
  }
  EXPECT_EQ(t->stepCount(), 4);
}

TEST_F(TrainStepTest, AdamAddsL2ToTheGradient) {
  TrainStepOptions options;
  options.optimizer.kind = OptimizerKind::Adam;
  options.optimizer.weightDecay = 0.1;
  auto t = trainer(build(options));
  std::vector<double> w = t->state().lookup("w").data;
  NamedTensors in = randomInputs();
  std::vector<double> g = gradient(w, in);
  ASSERT_TRUE(succeeded(t->step(in, f32(0.02))));
  for (int j = 0; j < 3; ++j) {
    double gj = g[j] + f32(0.1) * w[j];
    double mHat = f32(1 - 0.9) * gj / (1 - f32(0.9));
    double vHat = f32(1 - 0.999) * gj * gj / (1 - f32(0.999));
    double expected = w[j] - f32(0.02) * mHat / (std::sqrt(vHat) + f32(1e-8));
    EXPECT_NEAR(t->state().lookup("w").data[j], expected, 1e-12);
  }
}

TEST_F(TrainStepTest, SgdNesterovMomentum) {
  TrainStepOptions options;
  options.optimizer.kind = OptimizerKind::SGD;
  options.optimizer.momentum = 0.9;
  options.optimizer.nesterov = true;
  auto t = trainer(build(options));
  std::vector<double> w = t->state().lookup("w").data, buf(3, 0);
  const double mu = f32(0.9), lr = f32(0.05);
  for (int step = 1; step <= 3; ++step) {
    NamedTensors in = randomInputs();
    std::vector<double> g = gradient(w, in);
    ASSERT_TRUE(succeeded(t->step(in, lr)));
    for (int j = 0; j < 3; ++j) {
      buf[j] = mu * buf[j] + g[j];
      w[j] -= lr * (g[j] + mu * buf[j]);
      EXPECT_NEAR(t->state().lookup("w").data[j], w[j], 1e-12);
      EXPECT_NEAR(t->state().lookup("momentum.w").data[j], buf[j], 1e-12);
    }
  }
}

TEST_F(TrainStepTest, Bf16ParametersKeepF32MasterWeights) {
  TrainStepOptions options;
  auto t = trainer(build(options, "bf16"), ref::Precision::F32);
  ASSERT_TRUE(t->state().count("master.w"));
  for (int step = 0; step < 5; ++step) {
    ASSERT_TRUE(succeeded(t->step(randomInputs(ref::ElementKind::BF16), 1e-3)))
        << diagnostics;
    const ref::Tensor &w = t->state().lookup("w");
    const ref::Tensor &master = t->state().lookup("master.w");
    EXPECT_EQ(w.kind, ref::ElementKind::BF16);
    EXPECT_EQ(master.kind, ref::ElementKind::F32);
    for (int j = 0; j < 3; ++j)
      EXPECT_EQ(w.data[j],
                ref::roundToStorage(master.data[j], ref::ElementKind::BF16,
                                    ref::Precision::F32));
  }
  // Small updates accumulate in the master copy even when bf16 cannot see them.
  EXPECT_NE(t->state().lookup("master.w").data, t->state().lookup("w").data);
}

TEST_F(TrainStepTest, GradientTransformsAndStatistics) {
  TrainStepOptions options;
  options.optimizer.kind = OptimizerKind::SGD;
  options.transforms.statistics = true;
  options.transforms.scale = 0.5;
  options.transforms.clipValue = 0.8;
  options.transforms.clipNorm = 0.3;
  auto t = trainer(build(options));
  std::vector<double> w = t->state().lookup("w").data;
  NamedTensors in = randomInputs();
  std::vector<double> g = gradient(w, in);
  ASSERT_TRUE(succeeded(t->step(in, f32(0.1)))) << diagnostics;

  double norm = 0, maxAbs = 0;
  for (double x : g) {
    norm += x * x;
    maxAbs = std::max(maxAbs, std::abs(x));
  }
  ASSERT_EQ(t->lastStatistics().size(), 3u);
  EXPECT_NEAR(t->lastStatistics()[0], std::sqrt(norm), 1e-12);
  EXPECT_NEAR(t->lastStatistics()[1], maxAbs, 1e-12);
  EXPECT_EQ(t->lastStatistics()[2], 0.0);

  double clippedNorm = 0;
  for (double &x : g) {
    x = std::clamp(x * 0.5, -f32(0.8), f32(0.8));
    clippedNorm += x * x;
  }
  double factor =
      std::min(1.0, f32(0.3) / (std::sqrt(clippedNorm) + f32(1e-6)));
  for (int j = 0; j < 3; ++j)
    EXPECT_NEAR(t->state().lookup("w").data[j], w[j] - f32(0.1) * g[j] * factor,
                1e-12);
}

TEST_F(TrainStepTest, StatisticsCountNonFiniteGradients) {
  TrainStepOptions options;
  options.optimizer.kind = OptimizerKind::SGD;
  options.transforms.statistics = true;
  auto t = trainer(build(options));
  NamedTensors gradients;
  ref::Tensor g({3}, ref::ElementKind::F32);
  g.data = {NAN, INFINITY, 0.25};
  gradients["grad.w"] = g;
  ASSERT_TRUE(succeeded(t->applyUpdate(gradients, 0.1))) << diagnostics;
  EXPECT_EQ(t->lastStatistics()[2], 2.0);
}

TEST_F(TrainStepTest, GradientNoiseIsSeededAndFreshEachStep) {
  TrainStepOptions options;
  options.optimizer.kind = OptimizerKind::SGD;
  options.transforms.noiseScale = 0.5;
  options.transforms.noiseSeed = 11;
  auto a = trainer(build(options)), b = trainer(*module);
  NamedTensors zero;
  zero["grad.w"] = ref::Tensor({3}, ref::ElementKind::F32);
  std::vector<double> start = a->state().lookup("w").data;
  ASSERT_TRUE(succeeded(a->applyUpdate(zero, 1.0)));
  ASSERT_TRUE(succeeded(b->applyUpdate(zero, 1.0)));
  std::vector<double> first = a->state().lookup("w").data;
  EXPECT_EQ(first, b->state().lookup("w").data);
  EXPECT_NE(first, start);
  ASSERT_TRUE(succeeded(a->applyUpdate(zero, 1.0)));
  std::vector<double> delta1(3), delta2(3);
  for (int j = 0; j < 3; ++j) {
    delta1[j] = first[j] - start[j];
    delta2[j] = a->state().lookup("w").data[j] - first[j];
  }
  EXPECT_NE(delta1, delta2);
}

TEST_F(TrainStepTest, SplitEntriesEqualTrainStep) {
  TrainStepOptions options;
  options.optimizer.weightDecay = 0.01;
  options.transforms.clipNorm = 1.0;
  ModuleOp m = build(options);
  auto whole = trainer(m, ref::Precision::F32),
       split = trainer(m, ref::Precision::F32);
  for (int step = 0; step < 5; ++step) {
    NamedTensors in = randomInputs();
    double lr = 1e-2 / (step + 1);
    FailureOr<double> loss = whole->step(in, lr);
    NamedTensors gradients;
    FailureOr<double> splitLoss = split->forwardBackward(in, gradients);
    ASSERT_TRUE(succeeded(loss) && succeeded(splitLoss)) << diagnostics;
    EXPECT_EQ(*loss, *splitLoss);
    ASSERT_TRUE(gradients.count("grad.w"));
    ASSERT_TRUE(succeeded(split->applyUpdate(gradients, lr)));
    for (const auto &entry : whole->state())
      EXPECT_EQ(entry.second.data, split->state().lookup(entry.first()).data)
          << entry.first().str() << " at step " << step;
  }
}

TEST_F(TrainStepTest, ParametersStartFromTheirInitialiser) {
  auto a = trainer(build({})), b = trainer(*module);
  const std::vector<double> &w = a->state().lookup("w").data;
  EXPECT_EQ(w, b->state().lookup("w").data);
  for (double x : w) {
    EXPECT_GE(x, -0.5);
    EXPECT_LT(x, 0.5);
  }
  EXPECT_NE(w[0], w[1]);
}

} // namespace
} // namespace mlir::kiln
