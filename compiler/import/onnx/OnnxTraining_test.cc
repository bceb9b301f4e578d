//===- OnnxTraining_test.cc - an imported ONNX model trains correctly -----===//
//
// Builds an ONNX MLP (Gemm with transB, Tanh, Gemm: what torch.onnx exports
// for nn.Linear layers) with libonnx's protobuf classes, imports it with
// every initializer trainable and --loss=mse, builds the training entries
// (SGD) and trains it on the f64 reference. Each step's loss and the final
// weights must match a hand-written f64 forward and backward pass of the
// same network, on fresh random weights and data every run.
//
//===----------------------------------------------------------------------===//

#include "compiler/import/onnx/OnnxImporter.h"
#include "compiler/training/ReferenceTrainer.h"
#include "compiler/training/TrainStep.h"
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

/// One SGD step of the MLP with MSE in f64; returns the loss before it.
double referenceStep(Weights &w, const Matrix &x, const Matrix &t, double lr) {
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
  Weights g{Matrix(w.w1.size()), Matrix(w.b1.size()), Matrix(w.w2.size()),
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
  auto update = [lr](Matrix &p, const Matrix &grad) {
    for (size_t i = 0; i < p.size(); ++i)
      p[i] -= lr * grad[i];
  };
  update(w.w1, g.w1);
  update(w.b1, g.b1);
  update(w.w2, g.w2);
  update(w.b2, g.b2);
  return loss;
}

ref::Tensor tensorOf(std::vector<int64_t> shape, const Matrix &values) {
  ref::Tensor tensor(shape, ref::ElementKind::F32);
  tensor.data = values;
  return tensor;
}

TEST(OnnxTrainingTest, ImportedMlpTrainsLikeTheHandWrittenReference) {
  std::random_device device;
  const unsigned seed = device();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1, 1);
  auto draw = [&](size_t n) {
    Matrix m(n);
    for (double &v : m)
      v = uniform(rng); // f32 values, exact in the f32 initializers
    return m;
  };
  Weights weights{draw(kHidden * kIn), draw(kHidden), draw(kOut * kHidden),
                  draw(kOut)};
  Matrix x = draw(kBatch * kIn), t = draw(kBatch * kOut);

  DialectRegistry registry;
  registry.insert<KilnDialect, func::FuncDialect>();
  registerGradientRules(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  std::string diagnostics;
  context.getDiagEngine().registerHandler([&](Diagnostic &diag) {
    diagnostics += diag.str() + "\n";
    return success();
  });

  OnnxImportOptions options;
  options.trainable = "all";
  options.loss = "mse";
  options.target = "t";
  OwningOpRef<ModuleOp> module =
      importOnnxModel(mlpModel(weights), &context, options, "mlp.onnx");
  ASSERT_TRUE(module) << diagnostics;
  TrainStepOptions trainOptions;
  trainOptions.optimizer.kind = OptimizerKind::SGD;
  ASSERT_TRUE(succeeded(buildTrainingEntries(*module, trainOptions)))
      << diagnostics;
  ASSERT_TRUE(succeeded(verify(*module))) << diagnostics;
  auto trainer =
      ReferenceTrainer::create(*module, /*seed=*/1, ref::Precision::F64);
  ASSERT_TRUE(succeeded(trainer)) << diagnostics;
  // Start from the ONNX weights (kilnc --onnx-weights), not a fresh init.
  NamedTensors &state = (*trainer)->mutableState();
  state["w1"] = tensorOf({kHidden, kIn}, weights.w1);
  state["b1"] = tensorOf({kHidden}, weights.b1);
  state["w2"] = tensorOf({kOut, kHidden}, weights.w2);
  state["b2"] = tensorOf({kOut}, weights.b2);

  NamedTensors batch;
  batch["x"] = tensorOf({kBatch, kIn}, x);
  batch["t"] = tensorOf({kBatch, kOut}, t);
  constexpr double kLr = 0.1;
  for (int step = 0; step < 5; ++step) {
    double expected = referenceStep(weights, x, t, kLr);
    FailureOr<double> loss = (*trainer)->step(batch, kLr);
    ASSERT_TRUE(succeeded(loss)) << diagnostics;
    EXPECT_NEAR(*loss, expected, 1e-12 * std::max(1.0, expected))
        << "step " << step;
  }
  auto expectWeights = [&](const char *name, const Matrix &expected) {
    const ref::Tensor &got = (*trainer)->state().find(name)->second;
    ASSERT_EQ(got.data.size(), expected.size()) << name;
    for (size_t i = 0; i < expected.size(); ++i)
      EXPECT_NEAR(got.data[i], expected[i], 1e-12) << name << "[" << i << "]";
  };
  expectWeights("w1", weights.w1);
  expectWeights("b1", weights.b1);
  expectWeights("w2", weights.w2);
  expectWeights("b2", weights.b2);
}

TEST(OnnxTrainingTest, UnknownTrainableNameIsAnError) {
  MLIRContext context;
  std::string diagnostics;
  context.getDiagEngine().registerHandler([&](Diagnostic &diag) {
    diagnostics += diag.str() + "\n";
    return success();
  });
  Weights weights{Matrix(kHidden * kIn, 0.5), Matrix(kHidden, 0.5),
                  Matrix(kOut * kHidden, 0.5), Matrix(kOut, 0.5)};
  OnnxImportOptions options;
  options.trainable = "w1,fc3";
  EXPECT_FALSE(importOnnxModel(mlpModel(weights), &context, options, "m"));
  EXPECT_NE(diagnostics.find("--trainable names 'fc3'"), std::string::npos)
      << diagnostics;
}

} // namespace
} // namespace mlir::kiln
