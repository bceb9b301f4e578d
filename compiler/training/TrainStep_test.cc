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

TEST_F(TrainStepTest, SkippedUpdatesLeaveEverythingUnchangedAndCount) {
  TrainStepOptions options;
  options.optimizer.kind = OptimizerKind::AdamW;
  options.transforms.skipNonFinite = true;
  ModuleOp m = build(options);
  auto skipping = trainer(m), plain = trainer(m);
  NamedTensors before = skipping->state();
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  ref::Tensor bad({3}, ref::ElementKind::F32), good({3}, ref::ElementKind::F32);
  for (double &v : good.data)
    v = f32(dist(rng));
  bad.data = good.data;
  bad.data[1] = NAN;
  NamedTensors gradients;
  gradients["grad.w"] = bad;
  ASSERT_TRUE(succeeded(skipping->applyUpdate(gradients, 0.1))) << diagnostics;
  for (const char *name : {"w", "adam_m.w", "adam_v.w"})
    EXPECT_EQ(skipping->state().lookup(name).data, before.lookup(name).data)
        << name;
  EXPECT_EQ(skipping->state().lookup("grad_stats.skipped_updates").data[0], 1);
  bad.data[1] = -INFINITY;
  gradients["grad.w"] = bad;
  ASSERT_TRUE(succeeded(skipping->applyUpdate(gradients, 0.1)));
  EXPECT_EQ(skipping->state().lookup("w").data, before.lookup("w").data);
  EXPECT_EQ(skipping->state().lookup("grad_stats.skipped_updates").data[0], 2);

  // The first applied update is Adam's first: bias correction counts
  // applied updates, as torch.amp's skipped optimizer.step() leaves Adam's
  // step count alone.
  gradients["grad.w"] = good;
  ASSERT_TRUE(succeeded(skipping->applyUpdate(gradients, 0.1)));
  ASSERT_TRUE(succeeded(plain->applyUpdate(gradients, 0.1)));
  for (const char *name : {"w", "adam_m.w", "adam_v.w"})
    for (int j = 0; j < 3; ++j)
      EXPECT_NEAR(skipping->state().lookup(name).data[j],
                  plain->state().lookup(name).data[j], 1e-15)
          << name;
  EXPECT_EQ(skipping->state().lookup("grad_stats.skipped_updates").data[0], 2);
}

TEST_F(TrainStepTest, DynamicLossScaleScalesTheBackwardAndAdapts) {
  TrainStepOptions options;
  options.optimizer.kind = OptimizerKind::SGD;
  options.transforms.dynamicLossScale = true;
  options.transforms.lossScaleGrowthInterval = 2;
  auto t = trainer(build(options));
  auto exponent = [&] {
    return t->state().lookup("loss_scale.exponent").data[0];
  };
  auto goodSteps = [&] {
    return t->state().lookup("loss_scale.good_steps").data[0];
  };
  for (int update = 0; update < 2; ++update) {
    NamedTensors in = randomInputs(), gradients;
    std::vector<double> w = t->state().lookup("w").data;
    std::vector<double> g = gradient(w, in);
    ASSERT_TRUE(succeeded(t->forwardBackward(in, gradients))) << diagnostics;
    // The backward starts from the loss scale 2^16: gradients are scaled.
    for (int j = 0; j < 3; ++j)
      EXPECT_NEAR(gradients["grad.w"].data[j], 65536.0 * g[j],
                  1e-9 * 65536.0 * std::abs(g[j]));
    ASSERT_TRUE(succeeded(t->applyUpdate(gradients, f32(0.1)))) << diagnostics;
    for (int j = 0; j < 3; ++j)
      EXPECT_NEAR(t->state().lookup("w").data[j], w[j] - f32(0.1) * g[j],
                  1e-12);
  }
  // Two good steps in a row: the scale doubles and the count restarts.
  EXPECT_EQ(exponent(), 1);
  EXPECT_EQ(goodSteps(), 0);
  NamedTensors in = randomInputs(), gradients;
  ASSERT_TRUE(succeeded(t->forwardBackward(in, gradients)));
  std::vector<double> g = gradient(t->state().lookup("w").data, in);
  EXPECT_NEAR(gradients["grad.w"].data[0], 131072.0 * g[0],
              1e-9 * 131072.0 * std::abs(g[0]));

  // An overflow: no update, the scale halves.
  std::vector<double> w = t->state().lookup("w").data;
  gradients["grad.w"].data[2] = INFINITY;
  ASSERT_TRUE(succeeded(t->applyUpdate(gradients, 0.1)));
  EXPECT_EQ(t->state().lookup("w").data, w);
  EXPECT_EQ(exponent(), 0);
  EXPECT_EQ(goodSteps(), 0);
  EXPECT_EQ(t->state().lookup("grad_stats.skipped_updates").data[0], 1);
}

TEST_F(TrainStepTest, DynamicLossScaleTrainsAsUnscaled) {
  TrainStepOptions scaledOptions, plainOptions;
  scaledOptions.transforms.dynamicLossScale = true;
  scaledOptions.transforms.lossScaleGrowthInterval = 3;
  auto scaled = trainer(build(scaledOptions));
  // The next build replaces `module`; the scaled trainer keeps running its.
  OwningOpRef<ModuleOp> scaledModule = std::move(module);
  auto plain = trainer(build(plainOptions));
  for (int step = 0; step < 8; ++step) {
    NamedTensors in = randomInputs();
    FailureOr<double> a = scaled->step(in, 1e-2), b = plain->step(in, 1e-2);
    ASSERT_TRUE(succeeded(a) && succeeded(b)) << diagnostics;
    EXPECT_EQ(*a, *b) << "the loss is not scaled";
  }
  // Powers of two scale and unscale exactly.
  for (int j = 0; j < 3; ++j)
    EXPECT_NEAR(scaled->state().lookup("w").data[j],
                plain->state().lookup("w").data[j], 1e-12);
  EXPECT_EQ(scaled->state().lookup("loss_scale.exponent").data[0], 2);
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

// Batch norm with running statistics as model state (kiln.state).
constexpr const char *kBatchNormModel = R"mlir(
  func.func @loss(%x: tensor<4x3x2xf32> {kiln.name = "x"},
                  %g: tensor<3xf32> {kiln.param = #kiln.init<ones>, kiln.name = "g"},
                  %b: tensor<3xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "b"},
                  %rm: tensor<3xf32> {kiln.state = #kiln.init<zeros>, kiln.name = "rm"},
                  %rv: tensor<3xf32> {kiln.state = #kiln.init<ones>, kiln.name = "rv"},
                  %t: tensor<4x3x2xf32> {kiln.name = "t"}) -> tensor<f32> {
    %y, %m, %v, %rm1, %rv1 = kiln.batch_norm %x, %g, %b running %rm, %rv momentum = 0.2
        : tensor<4x3x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
    %l = kiln.mse_loss %y, %t reduction = mean : tensor<4x3x2xf32>
    return %l : tensor<f32>
  })mlir";

class BatchNormStateTest : public TrainStepTest {
protected:
  ModuleOp buildBatchNorm(const TrainStepOptions &options) {
    module = parseSourceString<ModuleOp>(kBatchNormModel, &context);
    EXPECT_TRUE(module) << diagnostics;
    EXPECT_TRUE(succeeded(buildTrainingEntries(*module, options)))
        << diagnostics;
    EXPECT_TRUE(succeeded(verify(*module))) << diagnostics;
    return *module;
  }

  NamedTensors batch() {
    NamedTensors inputs;
    std::uniform_real_distribution<double> dist(-2.0, 2.0);
    for (const char *name : {"x", "t"}) {
      ref::Tensor t({4, 3, 2}, ref::ElementKind::F32);
      for (double &v : t.data)
        v = dist(rng);
      inputs[name] = std::move(t);
    }
    return inputs;
  }

  /// Channel c's batch mean and sum of squared deviations of x.
  static std::pair<double, double> moments(const ref::Tensor &x, int c) {
    double mean = 0, m2 = 0;
    for (int n = 0; n < 4; ++n)
      for (int l = 0; l < 2; ++l)
        mean += x.data[(n * 3 + c) * 2 + l] / 8;
    for (int n = 0; n < 4; ++n)
      for (int l = 0; l < 2; ++l)
        m2 += std::pow(x.data[(n * 3 + c) * 2 + l] - mean, 2);
    return {mean, m2};
  }
};

TEST_F(BatchNormStateTest, TrainingUpdatesRunningStatisticsLikePyTorch) {
  TrainStepOptions options;
  options.optimizer.kind = OptimizerKind::SGD;
  auto t = trainer(buildBatchNorm(options));
  std::vector<double> rm(3, 0.0), rv(3, 1.0);
  EXPECT_EQ(t->state().lookup("rm").data, rm);
  EXPECT_EQ(t->state().lookup("rv").data, rv);
  for (int step = 0; step < 3; ++step) {
    NamedTensors in = batch();
    ASSERT_TRUE(succeeded(t->step(in, 0.1))) << diagnostics;
    for (int c = 0; c < 3; ++c) {
      auto [mean, m2] = moments(in.lookup("x"), c);
      rm[c] = 0.8 * rm[c] + 0.2 * mean;
      rv[c] = 0.8 * rv[c] + 0.2 * m2 / 7; // unbiased
      EXPECT_NEAR(t->state().lookup("rm").data[c], rm[c], 1e-12);
      EXPECT_NEAR(t->state().lookup("rv").data[c], rv[c], 1e-12);
    }
  }
  // No gradients or optimizer state for model state.
  NamedTensors gradients;
  ASSERT_TRUE(succeeded(t->forwardBackward(batch(), gradients)));
  EXPECT_EQ(gradients.size(), 2u);
  EXPECT_TRUE(gradients.count("grad.g") && gradients.count("grad.b"));

  // forward (evaluation) normalises with the running statistics and leaves
  // them alone.
  NamedTensors in = batch();
  std::vector<double> before = t->state().lookup("rm").data;
  FailureOr<double> loss = t->evaluate(in);
  ASSERT_TRUE(succeeded(loss)) << diagnostics;
  EXPECT_EQ(t->state().lookup("rm").data, before);
  const std::vector<double> &g = t->state().lookup("g").data,
                            &b = t->state().lookup("b").data,
                            &m = t->state().lookup("rm").data,
                            &v = t->state().lookup("rv").data;
  double expected = 0;
  for (int i = 0; i < 24; ++i) {
    int c = (i / 2) % 3;
    double y = (in.lookup("x").data[i] - m[c]) / std::sqrt(v[c] + 1e-5) * g[c] +
               b[c];
    expected += std::pow(y - in.lookup("t").data[i], 2) / 24;
  }
  EXPECT_NEAR(*loss, expected, 1e-12);
}

TEST_F(BatchNormStateTest, SplitEntriesEqualTrainStep) {
  TrainStepOptions options;
  ModuleOp m = buildBatchNorm(options);
  auto whole = trainer(m, ref::Precision::F32),
       split = trainer(m, ref::Precision::F32);
  for (int step = 0; step < 3; ++step) {
    NamedTensors in = batch();
    ASSERT_TRUE(succeeded(whole->step(in, 0.05))) << diagnostics;
    NamedTensors gradients;
    ASSERT_TRUE(succeeded(split->forwardBackward(in, gradients)));
    ASSERT_TRUE(succeeded(split->applyUpdate(gradients, 0.05)));
    for (const auto &entry : whole->state())
      EXPECT_EQ(entry.second.data, split->state().lookup(entry.first()).data)
          << entry.first().str() << " at step " << step;
  }
  EXPECT_TRUE(whole->state().count("rm") && whole->state().count("rv"));
}

TEST_F(BatchNormStateTest, EntriesBindStateInPlace) {
  ModuleOp m = buildBatchNorm({});
  auto forward = m.lookupSymbol<func::FuncOp>("forward");
  auto forwardBackward = m.lookupSymbol<func::FuncOp>("forward_backward");
  auto trainStep = m.lookupSymbol<func::FuncOp>("train_step");
  auto role = [](func::FuncOp f, unsigned i) {
    return f.getArgAttrOfType<StringAttr>(i, KilnDialect::kRoleAttrName)
        .getValue();
  };
  EXPECT_EQ(role(forward, 3), "state");
  bool eval = false;
  forward.walk([&](BatchNormOp norm) { eval = norm.getEval(); });
  EXPECT_TRUE(eval);
  // forward_backward: loss, grad.g, grad.b, then rm and rv in place.
  ASSERT_EQ(forwardBackward.getNumResults(), 5u);
  for (unsigned r : {3u, 4u}) {
    auto updates = forwardBackward.getResultAttrOfType<IntegerAttr>(
        r, KilnDialect::kUpdatesAttrName);
    ASSERT_TRUE(updates);
    EXPECT_EQ(updates.getInt(), r);
    EXPECT_EQ(role(forwardBackward, r), "state");
  }
  // train_step: g, b, adam_m/v of each, rm, rv, x, t, lr, step.
  ASSERT_EQ(trainStep.getNumArguments(), 12u);
  EXPECT_EQ(role(trainStep, 6), "state");
  EXPECT_EQ(role(trainStep, 7), "state");
  EXPECT_EQ(role(trainStep, 8), "input");
  auto updates = trainStep.getResultAttrOfType<IntegerAttr>(
      7, KilnDialect::kUpdatesAttrName);
  ASSERT_TRUE(updates);
  EXPECT_EQ(updates.getInt(), 6);
}

TEST_F(BatchNormStateTest, StateWithAnotherUseIsAnError) {
  module = parseSourceString<ModuleOp>(R"mlir(
    func.func @loss(%x: tensor<4x3xf32>, %g: tensor<3xf32> {kiln.param = #kiln.init<ones>},
                    %rm: tensor<3xf32> {kiln.state = #kiln.init<zeros>, kiln.name = "rm"},
                    %rv: tensor<3xf32> {kiln.state = #kiln.init<ones>}) -> tensor<f32> {
      %y:5 = kiln.batch_norm %x, %g, %g running %rm, %rv
          : tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
      %s = kiln.add %y#0, %rm : tensor<4x3xf32>, tensor<3xf32>
      %l = kiln.reduce_sum %s dims = [0, 1] : tensor<4x3xf32>
      return %l : tensor<f32>
    })mlir",
                                       &context);
  ASSERT_TRUE(module) << diagnostics;
  EXPECT_TRUE(failed(buildTrainingEntries(*module, {})));
  EXPECT_NE(diagnostics.find("state argument 'rm' of @loss must be used only as "
                             "the running mean or variance of one "
                             "kiln.batch_norm"),
            std::string::npos)
      << diagnostics;
}

} // namespace
} // namespace mlir::kiln
