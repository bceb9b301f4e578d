//===- OnnxTraining_test.cc - an imported ONNX model trains correctly -----===//
//
// Builds an ONNX MLP (Gemm with transB, Tanh, Gemm: what torch.onnx exports
// for nn.Linear layers) with libonnx's protobuf classes, imports it with
// every initializer trainable and --loss=mse, builds the training entries
// (every optimizer) and trains it on the f64 reference from the model's own
// weights, which the import carries (nothing is set by hand). Each step's
// loss and the final weights must match a hand-written f64 forward and
// backward pass of the same network with PyTorch's SGD (with and without
// momentum), Adam and AdamW (buffers from zero), on fresh random weights
// and data every run; stored in bf16, parameters start rounded and master
// weights exact.
//
//===----------------------------------------------------------------------===//

#include "compiler/import/onnx/OnnxImporter.h"
#include "compiler/training/ReferenceTrainer.h"
#include "compiler/training/TrainStep.h"
#include "compiler/transforms/MixedPrecision.h"
#include "dialects/kiln/Gradients/GradientUtils.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace mlir::kiln {
namespace {

constexpr int kBatch = 8, kIn = 3, kHidden = 5, kOut = 2;

using Matrix = std::vector<double>; // row-major

onnx::TensorProto floatTensor(const std::string &name,
                              std::vector<int64_t> dims, const Matrix &values) {
  onnx::TensorProto tensor;
  tensor.set_name(name);
  tensor.set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims)
    tensor.add_dims(d);
  for (double v : values)
    tensor.add_float_data(static_cast<float>(v));
  return tensor;
}

void addValueInfo(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> *to,
                  const std::string &name, std::vector<int64_t> dims) {
  onnx::ValueInfoProto *info = to->Add();
  info->set_name(name);
  auto *tensor = info->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims)
    tensor->mutable_shape()->add_dim()->set_dim_value(d);
}

void addGemm(onnx::GraphProto *graph, const std::string &name,
             std::vector<std::string> inputs, const std::string &output) {
  onnx::NodeProto *node = graph->add_node();
  node->set_name(name);
  node->set_op_type("Gemm");
  for (const std::string &input : inputs)
    node->add_input(input);
  node->add_output(output);
  onnx::AttributeProto *transB = node->add_attribute();
  transB->set_name("transB");
  transB->set_type(onnx::AttributeProto::INT);
  transB->set_i(1);
}

struct Weights {
  Matrix w1, b1, w2, b2; // w1 [H, I], w2 [O, H] (nn.Linear's layout)
};

onnx::ModelProto mlpModel(const Weights &w) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  onnx::OperatorSetIdProto *opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(17);
  onnx::GraphProto *graph = model.mutable_graph();
  graph->set_name("mlp");
  addGemm(graph, "fc1", {"x", "w1", "b1"}, "h");
  onnx::NodeProto *tanh = graph->add_node();
  tanh->set_name("act");
  tanh->set_op_type("Tanh");
  tanh->add_input("h");
  tanh->add_output("a");
  addGemm(graph, "fc2", {"a", "w2", "b2"}, "y");
  addValueInfo(graph->mutable_input(), "x", {kBatch, kIn});
  addValueInfo(graph->mutable_output(), "y", {kBatch, kOut});
  *graph->add_initializer() = floatTensor("w1", {kHidden, kIn}, w.w1);
  *graph->add_initializer() = floatTensor("b1", {kHidden}, w.b1);
  *graph->add_initializer() = floatTensor("w2", {kOut, kHidden}, w.w2);
  *graph->add_initializer() = floatTensor("b2", {kOut}, w.b2);
  return model;
}

/// The MLP's MSE loss in f64 and its gradients `g`.
double lossAndGradients(const Weights &w, const Matrix &x, const Matrix &t,
                        Weights &g) {
  Matrix a(kBatch * kHidden), y(kBatch * kOut);
  for (int n = 0; n < kBatch; ++n)
    for (int h = 0; h < kHidden; ++h) {
      double s = w.b1[h];
      for (int i = 0; i < kIn; ++i)
        s += x[n * kIn + i] * w.w1[h * kIn + i];
      a[n * kHidden + h] = std::tanh(s);
    }
  double loss = 0;
  Matrix dy(kBatch * kOut);
  for (int n = 0; n < kBatch; ++n)
    for (int o = 0; o < kOut; ++o) {
      double s = w.b2[o];
      for (int h = 0; h < kHidden; ++h)
        s += a[n * kHidden + h] * w.w2[o * kHidden + h];
      double d = s - t[n * kOut + o];
      loss += d * d / (kBatch * kOut);
      dy[n * kOut + o] = 2 * d / (kBatch * kOut);
    }
  g = Weights{Matrix(w.w1.size()), Matrix(w.b1.size()), Matrix(w.w2.size()),
              Matrix(w.b2.size())};
  for (int n = 0; n < kBatch; ++n) {
    for (int o = 0; o < kOut; ++o) {
      g.b2[o] += dy[n * kOut + o];
      for (int h = 0; h < kHidden; ++h)
        g.w2[o * kHidden + h] += dy[n * kOut + o] * a[n * kHidden + h];
    }
    for (int h = 0; h < kHidden; ++h) {
      double da = 0;
      for (int o = 0; o < kOut; ++o)
        da += dy[n * kOut + o] * w.w2[o * kHidden + h];
      double dh = da * (1 - a[n * kHidden + h] * a[n * kHidden + h]);
      g.b1[h] += dh;
      for (int i = 0; i < kIn; ++i)
        g.w1[h * kIn + i] += dh * x[n * kIn + i];
    }
  }
  return loss;
}

/// The four tensors of `w` (and of `g`, `m`, `v` alike), in one order.
std::vector<Matrix *> tensorsOf(Weights &w) {
  return {&w.w1, &w.b1, &w.w2, &w.b2};
}

/// A number as the f32 constant the training step holds it in.
double f32(double value) { return static_cast<float>(value); }

/// PyTorch's optimizers in f64 with kiln's hyperparameters (f32 constants;
/// Adam's bias corrections 1 - beta^t of the f32 betas), every buffer
/// starting from zero: SGD with momentum (Nesterov's or not) and L2 decay,
/// Adam with L2 decay, AdamW with decoupled decay.
struct ReferenceOptimizer {
  ReferenceOptimizer(const OptimizerOptions &options, const Weights &w)
      : options(options),
        m{Matrix(w.w1.size()), Matrix(w.b1.size()), Matrix(w.w2.size()),
          Matrix(w.b2.size())},
        v(m) {}

  /// One step; returns the loss before it.
  double step(Weights &w, const Matrix &x, const Matrix &t, double lr) {
    Weights g;
    double loss = lossAndGradients(w, x, t, g);
    ++steps;
    for (auto [p, grad, mt, vt] :
         llvm::zip(tensorsOf(w), tensorsOf(g), tensorsOf(m), tensorsOf(v)))
      for (size_t i = 0; i < p->size(); ++i)
        (*p)[i] -= lr * update((*p)[i], (*grad)[i], (*mt)[i], (*vt)[i]);
    return loss;
  }

private:
  /// The step of one element `p` with gradient `g` and buffers `m`, `v`.
  double update(double p, double g, double &m, double &v) const {
    double decay = f32(options.weightDecay);
    if (options.kind != OptimizerKind::AdamW)
      g += decay * p;
    if (options.kind == OptimizerKind::SGD) {
      if (options.momentum == 0)
        return g;
      double momentum = f32(options.momentum);
      m = momentum * m + g;
      return options.nesterov ? g + momentum * m : m;
    }
    double beta1 = f32(options.beta1), beta2 = f32(options.beta2);
    m = beta1 * m + f32(1 - options.beta1) * g;
    v = beta2 * v + f32(1 - options.beta2) * g * g;
    double mHat = m / (1 - std::pow(beta1, steps));
    double vHat = v / (1 - std::pow(beta2, steps));
    double step = mHat / (std::sqrt(vHat) + f32(options.epsilon));
    return options.kind == OptimizerKind::AdamW ? step + decay * p : step;
  }

  OptimizerOptions options;
  Weights m, v; // momentum; Adam's first and second moments
  int steps = 0;
};

ref::Tensor tensorOf(std::vector<int64_t> shape, const Matrix &values) {
  ref::Tensor tensor(shape, ref::ElementKind::F32);
  tensor.data = values;
  return tensor;
}

/// The MLP imported with every initializer trainable and --loss=mse, on
/// fresh random weights and data (f32 values, exact in the initializers).
class OnnxTrainingTest : public ::testing::Test {
protected:
  OnnxTrainingTest() : rng(seed), context(registryWithGradients()) {
    context.loadAllAvailableDialects();
    context.getDiagEngine().registerHandler([this](Diagnostic &diag) {
      diagnostics += diag.str() + "\n";
      return success();
    });
    weights = Weights{draw(kHidden * kIn), draw(kHidden), draw(kOut * kHidden),
                      draw(kOut)};
    x = draw(kBatch * kIn);
    t = draw(kBatch * kOut);
    batch["x"] = tensorOf({kBatch, kIn}, x);
    batch["t"] = tensorOf({kBatch, kOut}, t);
  }

  static DialectRegistry registryWithGradients() {
    DialectRegistry registry;
    registry.insert<KilnDialect, func::FuncDialect>();
    registerGradientRules(registry);
    return registry;
  }

  Matrix draw(size_t n) {
    std::uniform_real_distribution<float> uniform(-1, 1);
    Matrix m(n);
    for (double &v : m)
      v = uniform(rng);
    return m;
  }

  /// The imported model's training entries under `optimizer`, stored in
  /// `storage` (bf16: with f32 master weights), on the reference trainer:
  /// nothing is set by hand, so it starts where the model says.
  std::unique_ptr<ReferenceTrainer> trainer(const OptimizerOptions &optimizer,
                                            ref::Precision precision,
                                            FloatType storage = {}) {
    OnnxImportOptions options;
    options.trainable = "all";
    options.loss = "mse";
    options.target = "t";
    module = importOnnxModel(mlpModel(weights), &context, options, "mlp.onnx");
    if (!module)
      return nullptr;
    if (storage && failed(narrowStorage(
                       module->lookupSymbol<func::FuncOp>("loss"), storage)))
      return nullptr;
    TrainStepOptions trainOptions;
    trainOptions.optimizer = optimizer;
    if (failed(buildTrainingEntries(*module, trainOptions)) ||
        failed(verify(*module)))
      return nullptr;
    auto created = ReferenceTrainer::create(*module, /*seed=*/1, precision);
    return succeeded(created) ? std::move(*created) : nullptr;
  }

  const Matrix &state(ReferenceTrainer &trainer, const std::string &name) {
    static const Matrix missing;
    auto it = trainer.state().find(name);
    EXPECT_NE(it, trainer.state().end()) << name;
    return it == trainer.state().end() ? missing : it->second.data;
  }

  void expectWeights(ReferenceTrainer &trainer, const Weights &expected) {
    Weights w = expected;
    for (auto [name, values] : llvm::zip(
             std::vector<std::string>{"w1", "b1", "w2", "b2"}, tensorsOf(w))) {
      const Matrix &got = state(trainer, name);
      ASSERT_EQ(got.size(), values->size()) << name;
      for (size_t i = 0; i < got.size(); ++i)
        EXPECT_NEAR(got[i], (*values)[i], 1e-12) << name << "[" << i << "]";
    }
  }

  const unsigned seed = std::random_device()();
  std::mt19937 rng;
  MLIRContext context;
  std::string diagnostics;
  OwningOpRef<ModuleOp> module;
  Weights weights;
  Matrix x, t;
  NamedTensors batch;
};

/// The optimizers kilnc offers (--train, --momentum, --nesterov,
/// --weight-decay), by name.
std::vector<std::pair<std::string, OptimizerOptions>> everyOptimizer() {
  OptimizerOptions momentum{OptimizerKind::SGD};
  momentum.momentum = 0.9;
  momentum.weightDecay = 0.01;
  OptimizerOptions nesterov = momentum;
  nesterov.nesterov = true;
  OptimizerOptions adam{OptimizerKind::Adam};
  adam.weightDecay = 0.01;
  OptimizerOptions adamw{OptimizerKind::AdamW};
  adamw.weightDecay = 0.01;
  return {{"sgd", OptimizerOptions{OptimizerKind::SGD}},
          {"sgd momentum", momentum},
          {"sgd nesterov", nesterov},
          {"adam", adam},
          {"adamw", adamw}};
}

// Every optimizer trains from the model's own weights with its buffers
// (momentum, Adam's moments) starting at zero, as PyTorch's do, and each
// step matches PyTorch's update in f64.
TEST_F(OnnxTrainingTest, EveryOptimizerStartsFromTheWeightsWithZeroState) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (const auto &[name, options] : everyOptimizer()) {
    SCOPED_TRACE(name);
    auto optimizer = trainer(options, ref::Precision::F64);
    ASSERT_TRUE(optimizer) << diagnostics;
    Weights expected = weights;
    expectWeights(*optimizer, expected);
    size_t buffers = 0;
    for (const auto &entry : optimizer->state()) {
      llvm::StringRef state = entry.getKey();
      if (!state.starts_with("momentum.") && !state.starts_with("adam_"))
        continue;
      ++buffers;
      for (double v : entry.getValue().data)
        ASSERT_EQ(v, 0.0) << state.str();
    }
    size_t perParameter = options.kind != OptimizerKind::SGD ? 2
                          : options.momentum != 0            ? 1
                                                             : 0;
    EXPECT_EQ(buffers, 4 * perParameter);
    ReferenceOptimizer reference(options, expected);
    constexpr double kLr = 0.05;
    for (int step = 0; step < 5; ++step) {
      double want = reference.step(expected, x, t, kLr);
      FailureOr<double> loss = optimizer->step(batch, kLr);
      ASSERT_TRUE(succeeded(loss)) << diagnostics;
      EXPECT_NEAR(*loss, want, 1e-12 * std::max(1.0, want)) << "step " << step;
    }
    expectWeights(*optimizer, expected);
  }
}

// Stored in bf16, a parameter starts from its value rounded to nearest even
// and its f32 master weight from the value itself.
TEST_F(OnnxTrainingTest, Bf16ParametersAndMasterWeightsStartFromTheWeights) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  auto adamw = trainer(OptimizerOptions{OptimizerKind::AdamW},
                       ref::Precision::F32, BFloat16Type::get(&context));
  ASSERT_TRUE(adamw) << diagnostics;
  for (auto [name, values] :
       llvm::zip(std::vector<std::string>{"w1", "b1", "w2", "b2"},
                 tensorsOf(weights))) {
    const Matrix &param = state(*adamw, name);
    const Matrix &master = state(*adamw, "master." + name);
    ASSERT_EQ(param.size(), values->size()) << name;
    ASSERT_EQ(master.size(), values->size()) << name;
    for (size_t i = 0; i < param.size(); ++i) {
      llvm::APFloat rounded(static_cast<float>((*values)[i]));
      bool lost;
      rounded.convert(llvm::APFloat::BFloat(),
                      llvm::APFloat::rmNearestTiesToEven, &lost);
      EXPECT_EQ(param[i], rounded.convertToDouble()) << name << "[" << i << "]";
      EXPECT_EQ(master[i], (*values)[i]) << name << "[" << i << "]";
    }
  }
}

TEST_F(OnnxTrainingTest, UnknownTrainableNameIsAnError) {
  OnnxImportOptions options;
  options.trainable = "w1,fc3";
  EXPECT_FALSE(importOnnxModel(mlpModel(weights), &context, options, "m"));
  EXPECT_NE(diagnostics.find("--trainable names 'fc3'"), std::string::npos)
      << diagnostics;
}

} // namespace
} // namespace mlir::kiln
