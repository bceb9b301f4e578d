//===- ActivationImporters.cpp - ONNX activation functions ----------------===//
//
// Relu, Sigmoid, Tanh, LeakyRelu and Gelu map onto kiln ops; the others are
// composed from kiln's elementwise ops with ONNX's formulas (Elu, Selu,
// Celu, Softplus in its overflow-free form, Mish, Softsign, HardSigmoid,
// HardSwish, ThresholdedRelu, PRelu).
//
//===----------------------------------------------------------------------===//

#include "compiler/import/onnx/GraphImporter.h"

namespace mlir::kiln::onnx_import {
namespace {

/// The floating-point input 0, or failure with a diagnostic.
FailureOr<Value> floatInput(OnnxNode &node) {
  if (!node.hasInput(0))
    return node.emitError() << "ONNX " << node.opType() << " needs an input",
           failure();
  Value x = node.input(0);
  if (!x)
    return failure();
  if (!llvm::isa<FloatType>(KilnBuilder::elementOf(x)))
    return static_cast<void>(
               node.unsupported("a non-floating-point " + node.opType())),
           failure();
  return x;
}

/// An importer for `y = f(node, x)` on a floating-point x.
OpImporter activation(std::function<Value(OnnxNode &, Value)> f) {
  return [f](OnnxNode &node) -> LogicalResult {
    auto x = floatInput(node);
    if (failed(x))
      return failure();
    node.setResult(0, f(node, *x));
    return success();
  };
}

/// x > 0 ? x : alpha * (exp(x) - 1)
Value elu(OnnxNode &node, Value x, double alpha) {
  KilnBuilder kb = node.kb();
  Value negative = kb.mul(node.scalarLike(alpha, x),
                          kb.sub(node.builder().create<ExpOp>(node.loc(), x),
                                 node.scalarLike(1.0, x)));
  Value positive = node.builder().create<CompareOp>(
      node.loc(), CmpPredicate::gt, x, node.scalarLike(0.0, x));
  return node.builder().create<SelectOp>(node.loc(), positive, x, negative);
}

LogicalResult importRelu(OnnxNode &node) {
  Value x = node.input(0);
  if (!x)
    return failure();
  if (KilnBuilder::elementOf(x).isInteger(1))
    return node.unsupported("a BOOL Relu");
  node.setResult(0, node.builder().create<ReluOp>(node.loc(), x));
  return success();
}

/// Softplus: log(1 + exp(x)) = max(x, 0) + log(1 + exp(-|x|)), which
/// neither overflows nor loses the small values.
Value softplus(OnnxNode &node, Value x) {
  KilnBuilder kb = node.kb();
  Value e = kb.exp(kb.neg(kb.abs(x)));
  Value l = kb.log(kb.add(node.scalarLike(1.0, x), e));
  return kb.add(kb.max(x, node.scalarLike(0.0, x)), l);
}

LogicalResult importGelu(OnnxNode &node) {
  auto x = floatInput(node);
  if (failed(x))
    return failure();
  std::string approximate = node.stringAttr("approximate", "none");
  GeluApproximation kind;
  if (approximate == "none")
    kind = GeluApproximation::none;
  else if (approximate == "tanh")
    kind = GeluApproximation::tanh;
  else
    return node.unsupported("approximate = '" + approximate + "'");
  node.setResult(0, node.builder().create<GeluOp>(node.loc(), *x, kind));
  return success();
}

LogicalResult importPRelu(OnnxNode &node) {
  auto x = floatInput(node);
  if (failed(x))
    return failure();
  Value slope = node.input(1);
  if (!slope)
    return failure();
  // The slope broadcasts to x (unidirectionally); the result has x's shape.
  if (failed(node.checkBroadcast({*x, slope})))
    return failure();
  Value scaled = node.kb().mul(*x, slope);
  if (KilnBuilder::typeOf(scaled) != KilnBuilder::typeOf(*x))
    return node.emitError() << "the slope of PRelu must broadcast to the "
                               "input's shape";
  Value negative = node.builder().create<CompareOp>(
      node.loc(), CmpPredicate::lt, *x, node.scalarLike(0.0, *x));
  node.setResult(
      0, node.builder().create<SelectOp>(node.loc(), negative, scaled, *x));
  return success();
}

} // namespace

void registerActivationImporters(OpImporterRegistry &registry) {
  registry.add("Relu", importRelu);
  registry.add("Gelu", importGelu);
  registry.add("PRelu", importPRelu);
  registry.add("Sigmoid", activation([](OnnxNode &node, Value x) -> Value {
                 return node.builder().create<SigmoidOp>(node.loc(), x);
               }));
  registry.add("Tanh", activation([](OnnxNode &node, Value x) -> Value {
                 return node.builder().create<TanhOp>(node.loc(), x);
               }));
  registry.add("LeakyRelu", activation([](OnnxNode &node, Value x) -> Value {
                 double alpha = node.floatAttr("alpha", 0.01f);
                 return node.builder().create<LeakyReluOp>(
                     node.loc(), x, llvm::APFloat(alpha));
               }));
  registry.add("Elu", activation([](OnnxNode &node, Value x) -> Value {
                 return elu(node, x, node.floatAttr("alpha", 1.0f));
               }));
  registry.add(
      "Selu", activation([](OnnxNode &node, Value x) -> Value {
        double alpha = node.floatAttr("alpha", 1.67326319217681884765625f);
        double gamma = node.floatAttr("gamma", 1.05070102214813232421875f);
        return node.kb().mul(node.scalarLike(gamma, x), elu(node, x, alpha));
      }));
  // Celu: max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).
  registry.add("Celu", activation([](OnnxNode &node, Value x) -> Value {
                 double alpha = node.floatAttr("alpha", 1.0f);
                 KilnBuilder kb = node.kb();
                 Value zero = node.scalarLike(0.0, x);
                 Value e = node.builder().create<ExpOp>(
                     node.loc(), kb.div(x, node.scalarLike(alpha, x)));
                 Value neg = kb.mul(node.scalarLike(alpha, x),
                                    kb.sub(e, node.scalarLike(1.0, x)));
                 return kb.add(kb.max(x, zero), kb.min(neg, zero));
               }));
  registry.add("Softplus", activation(softplus));
  // Mish: x * tanh(softplus(x)).
  registry.add("Mish", activation([](OnnxNode &node, Value x) -> Value {
                 KilnBuilder kb = node.kb();
                 return kb.mul(x, kb.tanh(softplus(node, x)));
               }));
  registry.add("Softsign", activation([](OnnxNode &node, Value x) -> Value {
                 KilnBuilder kb = node.kb();
                 Value a = node.builder().create<AbsOp>(node.loc(), x);
                 return kb.div(x, kb.add(node.scalarLike(1.0, x), a));
               }));
  registry.add("HardSigmoid", activation([](OnnxNode &node, Value x) -> Value {
                 double alpha = node.floatAttr("alpha", 0.2f);
                 double beta = node.floatAttr("beta", 0.5f);
                 KilnBuilder kb = node.kb();
                 Value y = kb.add(kb.mul(node.scalarLike(alpha, x), x),
                                  node.scalarLike(beta, x));
                 return kb.max(kb.min(y, node.scalarLike(1.0, x)),
                               node.scalarLike(0.0, x));
               }));
  registry.add("HardSwish", activation([](OnnxNode &node, Value x) -> Value {
                 KilnBuilder kb = node.kb();
                 Value y = kb.add(kb.mul(node.scalarLike(1.0 / 6.0, x), x),
                                  node.scalarLike(0.5, x));
                 y = kb.max(kb.min(y, node.scalarLike(1.0, x)),
                            node.scalarLike(0.0, x));
                 return kb.mul(x, y);
               }));
  registry.add(
      "ThresholdedRelu", activation([](OnnxNode &node, Value x) -> Value {
        double alpha = node.floatAttr("alpha", 1.0f);
        Value above = node.builder().create<CompareOp>(
            node.loc(), CmpPredicate::gt, x, node.scalarLike(alpha, x));
        return node.builder().create<SelectOp>(node.loc(), above, x,
                                               node.scalarLike(0.0, x));
      }));
}

} // namespace mlir::kiln::onnx_import
