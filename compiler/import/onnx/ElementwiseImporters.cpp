//===- ElementwiseImporters.cpp - arithmetic, comparison, logic, cast -----===//
//
// ONNX's elementwise ops onto kiln's, which broadcast like numpy as ONNX's
// multidirectional broadcasting does. ONNX ops without a kiln counterpart
// are composed exactly (Reciprocal, Mean, logic on masks, IsNaN, ...).
//
//===----------------------------------------------------------------------===//

#include "compiler/import/onnx/GraphImporter.h"
#include "compiler/import/onnx/OnnxTypes.h"

#include <cmath>
#include <limits>

namespace mlir::kiln::onnx_import {
namespace {

bool isFloat(Value v) {
  return llvm::isa<FloatType>(KilnBuilder::elementOf(v));
}
bool isMask(Value v) { return KilnBuilder::elementOf(v).isInteger(1); }

/// Fetches inputs [0, n) (all required), failing on a missing one.
FailureOr<llvm::SmallVector<Value>> requiredInputs(OnnxNode &node, unsigned n) {
  llvm::SmallVector<Value> inputs;
  for (unsigned i = 0; i < n; ++i) {
    if (!node.hasInput(i))
      return node.emitError()
                 << "ONNX " << node.opType() << " needs input " << i,
             failure();
    Value v = node.input(i);
    if (!v)
      return failure();
    inputs.push_back(v);
  }
  return inputs;
}

template <typename OpTy> OpImporter unary(bool floatOnly) {
  return [floatOnly](OnnxNode &node) -> LogicalResult {
    auto in = requiredInputs(node, 1);
    if (failed(in))
      return failure();
    Value x = (*in)[0];
    if (isMask(x) || (floatOnly && !isFloat(x)))
      return node.unsupported("element type " +
                              std::string(isMask(x) ? "BOOL" : "integer") +
                              " (" + node.opType().str() +
                              " is defined on "
                              "floating point here)");
    node.setResult(0, node.builder().create<OpTy>(node.loc(), x));
    return success();
  };
}

template <typename OpTy> OpImporter binary(bool floatOnly) {
  return [floatOnly](OnnxNode &node) -> LogicalResult {
    auto in = requiredInputs(node, 2);
    if (failed(in))
      return failure();
    Value a = (*in)[0], b = (*in)[1];
    if (failed(node.checkBroadcast({a, b})))
      return failure();
    if (isMask(a) || (floatOnly && !isFloat(a)))
      return node.unsupported("this element type for " + node.opType());
    node.setResult(0, node.builder().create<OpTy>(node.loc(), a, b));
    return success();
  };
}

/// Min, Max, Sum and Mean take one or more inputs.
template <typename OpTy> OpImporter variadic(bool mean) {
  return [mean](OnnxNode &node) -> LogicalResult {
    if (node.numInputs() == 0)
      return node.emitError()
             << "ONNX " << node.opType() << " needs at least one input";
    auto in = requiredInputs(node, node.numInputs());
    if (failed(in))
      return failure();
    if (failed(node.checkBroadcast(*in)))
      return failure();
    Value acc = (*in)[0];
    if (isMask(acc) || (mean && !isFloat(acc)))
      return node.unsupported("this element type for " + node.opType());
    for (Value v : llvm::drop_begin(*in))
      acc = node.builder().create<OpTy>(node.loc(), acc, v);
    if (mean && in->size() > 1)
      acc = node.kb().div(acc, node.scalarLike(in->size(), acc));
    // With one input every one of them is the identity.
    node.setResult(0, acc);
    return success();
  };
}

OpImporter compare(CmpPredicate predicate) {
  return [predicate](OnnxNode &node) -> LogicalResult {
    auto in = requiredInputs(node, 2);
    if (failed(in))
      return failure();
    Value a = (*in)[0], b = (*in)[1];
    if (failed(node.checkBroadcast({a, b})))
      return failure();
    if (isMask(a)) {
      // Masks compare as 0/1 integers.
      auto asInt = [&](Value v) {
        auto type = KilnBuilder::typeOf(v);
        return node.builder()
            .create<CastOp>(node.loc(),
                            RankedTensorType::get(type.getShape(),
                                                  node.builder().getI32Type()),
                            v)
            .getResult();
      };
      a = asInt(a);
      b = asInt(b);
    }
    node.setResult(
        0, node.builder().create<CompareOp>(node.loc(), predicate, a, b));
    return success();
  };
}

/// Logic on i1 masks through select: and(a, b) = a ? b : false, ...
enum class Logic { And, Or, Xor };
OpImporter logic(Logic kind) {
  return [kind](OnnxNode &node) -> LogicalResult {
    auto in = requiredInputs(node, 2);
    if (failed(in))
      return failure();
    Value a = (*in)[0], b = (*in)[1];
    if (!isMask(a) || !isMask(b))
      return node.emitError()
             << "ONNX " << node.opType() << " needs BOOL operands";
    if (failed(node.checkBroadcast({a, b})))
      return failure();
    OpBuilder &builder = node.builder();
    auto i1 = RankedTensorType::get({}, builder.getI1Type());
    Value falseV = node.splat(i1, 0), trueV = node.splat(i1, 1);
    Value result;
    switch (kind) {
    case Logic::And:
      result = builder.create<SelectOp>(node.loc(), a, b, falseV);
      break;
    case Logic::Or:
      result = builder.create<SelectOp>(node.loc(), a, trueV, b);
      break;
    case Logic::Xor: {
      Value notB = builder.create<SelectOp>(node.loc(), b, falseV, trueV);
      result = builder.create<SelectOp>(node.loc(), a, notB, b);
      break;
    }
    }
    node.setResult(0, result);
    return success();
  };
}

LogicalResult importNot(OnnxNode &node) {
  auto in = requiredInputs(node, 1);
  if (failed(in))
    return failure();
  Value x = (*in)[0];
  if (!isMask(x))
    return node.emitError() << "ONNX Not needs a BOOL operand";
  auto i1 = RankedTensorType::get({}, node.builder().getI1Type());
  node.setResult(0, node.builder().create<SelectOp>(
                        node.loc(), x, node.splat(i1, 0), node.splat(i1, 1)));
  return success();
}

LogicalResult importWhere(OnnxNode &node) {
  auto in = requiredInputs(node, 3);
  if (failed(in))
    return failure();
  if (!isMask((*in)[0]))
    return node.emitError() << "ONNX Where needs a BOOL condition";
  if (failed(node.checkBroadcast({(*in)[0], (*in)[1], (*in)[2]},
                                 /*sameElementType=*/false)) ||
      failed(node.checkBroadcast({(*in)[1], (*in)[2]})))
    return failure();
  node.setResult(0, node.builder().create<SelectOp>(node.loc(), (*in)[0],
                                                    (*in)[1], (*in)[2]));
  return success();
}

LogicalResult importReciprocal(OnnxNode &node) {
  auto in = requiredInputs(node, 1);
  if (failed(in))
    return failure();
  Value x = (*in)[0];
  if (!isFloat(x))
    return node.unsupported("an integer Reciprocal");
  node.setResult(0, node.kb().div(node.scalarLike(1.0, x), x));
  return success();
}

LogicalResult importPow(OnnxNode &node) {
  auto in = requiredInputs(node, 2);
  if (failed(in))
    return failure();
  Value base = (*in)[0], exponent = (*in)[1];
  if (!isFloat(base))
    return node.unsupported("an integer base for Pow (kiln.pow is floating "
                            "point only)");
  if (KilnBuilder::elementOf(exponent) != KilnBuilder::elementOf(base)) {
    // Integer exponents: exact in the base's type when small, which kiln's
    // narrowing to i32 already bounds for f32; f16/bf16 need |e| < 2^11.
    if (!isFloat(exponent) && !KilnBuilder::elementOf(base).isF32())
      return node.unsupported("an integer exponent with a 16-bit base");
    auto type = KilnBuilder::typeOf(exponent);
    exponent = node.builder().create<CastOp>(
        node.loc(),
        RankedTensorType::get(type.getShape(), KilnBuilder::elementOf(base)),
        exponent);
  }
  if (failed(node.checkBroadcast({base, exponent})))
    return failure();
  node.setResult(0, node.kb().pow(base, exponent));
  return success();
}

LogicalResult importClip(OnnxNode &node) {
  Value x = node.input(0);
  if (!x)
    return failure();
  if (isMask(x))
    return node.unsupported("a BOOL Clip");
  Value result = x;
  if (node.opset() < 11) {
    float lo = node.floatAttr("min", -std::numeric_limits<float>::max());
    float hi = node.floatAttr("max", std::numeric_limits<float>::max());
    result = node.kb().max(result, node.scalarLike(lo, x));
    result = node.kb().min(result, node.scalarLike(hi, x));
  } else {
    if (node.hasInput(1)) {
      Value lo = node.input(1);
      if (!lo || failed(node.checkBroadcast({x, lo})))
        return failure();
      result = node.kb().max(result, lo);
    }
    if (node.hasInput(2)) {
      Value hi = node.input(2);
      if (!hi || failed(node.checkBroadcast({x, hi})))
        return failure();
      result = node.kb().min(result, hi);
    }
    if (result == x) // No bounds: a copy.
      result = node.kb().max(x, x);
  }
  node.setResult(0, result);
  return success();
}

LogicalResult importCast(OnnxNode &node, Type target, llvm::StringRef what) {
  Value x = node.input(0);
  if (!x)
    return failure();
  if (!target)
    return failure();
  auto type = KilnBuilder::typeOf(x);
  node.setResult(
      0, node.builder().create<CastOp>(
             node.loc(), RankedTensorType::get(type.getShape(), target), x));
  return success();
}

/// Cast's and CastLike's saturate (version 19) and round_mode (version 24)
/// apply to float8 targets only, which kiln does not have.
void ignoreFloat8Attributes(OnnxNode &node) {
  if (node.version() >= 19)
    node.ignoreAttr("saturate");
  if (node.version() >= 24)
    node.ignoreAttr("round_mode");
}

LogicalResult importCastOp(OnnxNode &node) {
  int64_t to = node.intAttr("to", 0);
  ignoreFloat8Attributes(node);
  Type target = kilnElementType(node.builder().getContext(), to);
  if (!target)
    return node.unsupported("casting to " + onnxTypeName(to));
  return importCast(node, target, "to");
}

LogicalResult importCastLike(OnnxNode &node) {
  RankedTensorType like = node.inputType(1);
  if (!like)
    return failure();
  ignoreFloat8Attributes(node);
  return importCast(node, like.getElementType(), "target_type");
}

LogicalResult importIdentity(OnnxNode &node) {
  if (!node.hasInput(0))
    return node.emitError() << "ONNX Identity needs an input";
  if (node.isConstant(0)) {
    auto type = node.inputType(0);
    if (!type)
      return failure();
    if (type.getElementType().isIntOrIndex()) {
      auto ints = node.constantInts(0, "input");
      if (failed(ints))
        return failure();
      node.setConstantResult(0, type.getShape(), *ints, type.getElementType());
      return success();
    }
  }
  Value x = node.input(0);
  if (!x)
    return failure();
  node.setResult(0, x);
  return success();
}

LogicalResult importSign(OnnxNode &node) {
  Value x = node.input(0);
  if (!x)
    return failure();
  if (isMask(x))
    return node.unsupported("a BOOL Sign");
  node.setResult(0, node.builder().create<SignOp>(node.loc(), x));
  return success();
}

LogicalResult importIsNaN(OnnxNode &node) {
  Value x = node.input(0);
  if (!x)
    return failure();
  if (!isFloat(x))
    return node.emitError() << "ONNX IsNaN needs a floating-point input";
  node.setResult(
      0, node.builder().create<CompareOp>(node.loc(), CmpPredicate::ne, x, x));
  return success();
}

LogicalResult importIsInf(OnnxNode &node) {
  Value x = node.input(0);
  if (!x)
    return failure();
  if (!isFloat(x))
    return node.emitError() << "ONNX IsInf needs a floating-point input";
  bool positive = node.intAttr("detect_positive", 1) != 0;
  bool negative = node.intAttr("detect_negative", 1) != 0;
  double inf = std::numeric_limits<double>::infinity();
  OpBuilder &b = node.builder();
  Value pos = b.create<CompareOp>(node.loc(), CmpPredicate::eq, x,
                                  node.scalarLike(inf, x));
  Value neg = b.create<CompareOp>(node.loc(), CmpPredicate::eq, x,
                                  node.scalarLike(-inf, x));
  auto i1 = RankedTensorType::get({}, b.getI1Type());
  Value result;
  if (positive && negative)
    result = b.create<SelectOp>(node.loc(), pos, node.splat(i1, 1), neg);
  else if (positive)
    result = pos;
  else if (negative)
    result = neg;
  else
    result = b.create<SelectOp>(node.loc(), pos, node.splat(i1, 0),
                                node.splat(i1, 0));
  node.setResult(0, result);
  return success();
}

LogicalResult importConstant(OnnxNode &node) {
  OpBuilder &b = node.builder();
  MLIRContext *context = b.getContext();
  auto setInts = [&](llvm::ArrayRef<int64_t> shape,
                     llvm::ArrayRef<int64_t> ints) {
    node.setConstantResult(0, shape, ints, b.getI32Type());
    return success();
  };
  auto setFloats = [&](llvm::ArrayRef<int64_t> shape,
                       llvm::ArrayRef<float> floats) {
    auto type = RankedTensorType::get(shape, b.getF32Type());
    std::vector<double> numbers(floats.begin(), floats.end());
    node.setResult(0, b.create<ConstantOp>(node.loc(),
                                           elementsFromNumbers(type, numbers)));
    return success();
  };
  if (const onnx::TensorProto *tensor = node.tensorAttr("value")) {
    Type element = kilnElementType(context, tensor->data_type());
    if (element && element.isIntOrIndex()) {
      auto ints = readInt64s(*tensor, node.loc(), "the value");
      if (failed(ints))
        return failure();
      llvm::SmallVector<int64_t> dims(tensor->dims().begin(),
                                      tensor->dims().end());
      node.setConstantResult(0, dims, *ints, element);
      return success();
    }
    auto attr = toElementsAttr(*tensor, node.loc(), "the value");
    if (failed(attr))
      return failure();
    node.setResult(0, b.create<ConstantOp>(node.loc(), *attr));
    return success();
  }
  if (node.hasAttr("value_float"))
    return setFloats({}, {node.floatAttr("value_float", 0)});
  if (node.hasAttr("value_floats")) {
    auto floats = node.floatsAttr("value_floats");
    return setFloats({static_cast<int64_t>(floats.size())}, floats);
  }
  if (node.hasAttr("value_int"))
    return setInts({}, {node.intAttr("value_int", 0)});
  if (node.hasAttr("value_ints")) {
    auto ints = node.intsAttr("value_ints");
    return setInts({static_cast<int64_t>(ints.size())}, ints);
  }
  if (node.hasAttr("sparse_value"))
    return node.unsupported("a sparse constant");
  return node.unsupported("a constant of strings or without a value");
}

LogicalResult importConstantOfShape(OnnxNode &node) {
  auto shape = node.constantInts(0, "the shape of ConstantOfShape");
  if (failed(shape))
    return failure();
  OpBuilder &b = node.builder();
  const onnx::TensorProto *value = node.tensorAttr("value");
  Type element = b.getF32Type();
  double fill = 0;
  if (value) {
    element = kilnElementType(b.getContext(), value->data_type());
    if (!element)
      return node.unsupported("a value of element type " +
                              onnxTypeName(value->data_type()));
    auto numbers = readNumbers(*value, node.loc(), "the value");
    if (failed(numbers))
      return failure();
    if (numbers->size() != 1)
      return node.emitError() << "the value of ConstantOfShape must hold one "
                                 "element";
    fill = numbers->front();
  }
  for (int64_t d : *shape)
    if (d < 0)
      return node.emitError() << "ConstantOfShape has a negative dimension";
  if (element.isIntOrIndex()) {
    int64_t count = 1;
    for (int64_t d : *shape)
      count *= d;
    node.setConstantResult(
        0, *shape, llvm::SmallVector<int64_t>(count, (int64_t)fill), element);
    return success();
  }
  node.setResult(0, node.splat(RankedTensorType::get(*shape, element), fill));
  return success();
}

/// Functions without a kiln op, composed from their definitions on floats.
OpImporter composite(std::function<Value(KilnBuilder &, OnnxNode &, Value)> f) {
  return [f](OnnxNode &node) -> LogicalResult {
    Value x = node.input(0);
    if (!x)
      return failure();
    if (!isFloat(x))
      return node.unsupported("a non-floating-point " + node.opType());
    KilnBuilder kb = node.kb();
    node.setResult(0, f(kb, node, x));
    return success();
  };
}

LogicalResult importShrink(OnnxNode &node) {
  Value x = node.input(0);
  if (!x)
    return failure();
  if (isMask(x))
    return node.unsupported("a BOOL Shrink");
  double bias = node.floatAttr("bias", 0.0f);
  double lambd = node.floatAttr("lambd", 0.5f);
  KilnBuilder kb = node.kb();
  if (!isFloat(x) && (bias != std::floor(bias) || lambd != std::floor(lambd)))
    return node.unsupported("fractional bias or lambd on integers");
  // x < -lambd ? x + bias : (x > lambd ? x - bias : 0)
  Value below = kb.compare(CmpPredicate::lt, x, node.scalarLike(-lambd, x));
  Value above = kb.compare(CmpPredicate::gt, x, node.scalarLike(lambd, x));
  Value upper = kb.select(above, kb.sub(x, node.scalarLike(bias, x)),
                          node.scalarLike(0.0, x));
  node.setResult(0,
                 kb.select(below, kb.add(x, node.scalarLike(bias, x)), upper));
  return success();
}

/// Integer Mod: the truncated remainder r = a - (a / b) * b (kiln's i32
/// division truncates) for fmod = 1; for fmod = 0 the result takes the
/// divisor's sign, r + b where r != 0 and the signs differ. Floating-point
/// Mod is not exact this way and is rejected.
LogicalResult importMod(OnnxNode &node) {
  auto in = requiredInputs(node, 2);
  if (failed(in))
    return failure();
  Value a = (*in)[0], b = (*in)[1];
  if (failed(node.checkBroadcast({a, b})))
    return failure();
  bool fmod = node.intAttr("fmod", 0) != 0;
  if (!KilnBuilder::elementOf(a).isInteger(32))
    return node.unsupported("Mod of " +
                            std::string(isMask(a) ? "BOOL" : "floating-point") +
                            " values");
  KilnBuilder kb = node.kb();
  Value zero = node.scalarLike(0, a);
  Value r = kb.sub(a, kb.mul(kb.div(a, b), b));
  if (!fmod) {
    Value rNegative = kb.compare(CmpPredicate::lt, r, zero);
    Value bNegative = kb.compare(CmpPredicate::lt, b, zero);
    Value nonzero = kb.compare(CmpPredicate::ne, r, zero);
    auto asInt = [&](Value mask) {
      return kb.cast(mask, KilnBuilder::elementOf(a));
    };
    Value differ =
        kb.compare(CmpPredicate::ne, asInt(rNegative), asInt(bNegative));
    Value never =
        node.splat(RankedTensorType::get({}, node.builder().getI1Type()), 0);
    Value adjust = kb.select(nonzero, differ, never);
    r = kb.select(adjust, kb.add(r, b), r);
  }
  node.setResult(0, r);
  return success();
}

/// OneHot: values[1] where the class equals the index (negative indices
/// count from depth), values[0] elsewhere, the class dimension at `axis`.
LogicalResult importOneHot(OnnxNode &node) {
  auto indexType = node.inputType(0);
  Value values = node.input(2);
  if (!indexType || !values)
    return failure();
  auto depth = node.constantNumbers(1, "the depth of OneHot");
  if (failed(depth))
    return failure();
  auto valuesType = KilnBuilder::typeOf(values);
  if (valuesType.getNumElements() != 2 || valuesType.getRank() != 1)
    return node.emitError() << "OneHot's values must be [off, on]";
  if (!indexType.getElementType().isInteger(32))
    return node.unsupported("floating-point indices for OneHot");
  int64_t classes = static_cast<int64_t>(depth->front());
  if (classes <= 0 || classes != depth->front())
    return node.emitError() << "OneHot's depth must be a positive integer";
  int64_t rank = indexType.getRank() + 1;
  auto axis = node.normalizeAxis(node.intAttr("axis", -1), rank);
  if (failed(axis))
    return failure();
  OpBuilder &b = node.builder();
  KilnBuilder kb = node.kb();
  Value indices = node.input(0);
  Value negative =
      kb.compare(CmpPredicate::lt, indices, node.scalarLike(0, indices));
  indices = kb.select(
      negative, kb.add(indices, node.scalarLike(classes, indices)), indices);
  llvm::SmallVector<int64_t> shape(indexType.getShape()), spread(shape);
  shape.insert(shape.begin() + *axis, classes);
  spread.insert(spread.begin() + *axis, 1);
  Value iota = b.create<IotaOp>(
      node.loc(), RankedTensorType::get(shape, b.getI32Type()), *axis);
  Value hot = kb.compare(CmpPredicate::eq, iota, node.reshape(indices, spread));
  auto scalar = [&](int64_t i) {
    return node.reshape(kb.slice(values, {i}, {i + 1}, {1}), {});
  };
  node.setResult(0, kb.select(hot, scalar(1), scalar(0)));
  return success();
}

} // namespace

void registerElementwiseImporters(OpImporterRegistry &registry) {
  registry.add("Mod", importMod);
  registry.add("OneHot", importOneHot);
  registry.add("Tan", composite([](KilnBuilder &kb, OnnxNode &, Value x) {
                 return kb.div(kb.builder().create<SinOp>(kb.location(), x),
                               kb.builder().create<CosOp>(kb.location(), x));
               }));
  // sinh and cosh: (e^x -+ e^-x) / 2.
  registry.add("Sinh", composite([](KilnBuilder &kb, OnnxNode &node, Value x) {
                 return kb.mul(kb.sub(kb.exp(x), kb.exp(kb.neg(x))),
                               node.scalarLike(0.5, x));
               }));
  registry.add("Cosh", composite([](KilnBuilder &kb, OnnxNode &node, Value x) {
                 return kb.mul(kb.add(kb.exp(x), kb.exp(kb.neg(x))),
                               node.scalarLike(0.5, x));
               }));
  // asinh(x) = sign(x) log(|x| + sqrt(x^2 + 1)), odd so that large negative
  // x do not cancel.
  registry.add(
      "Asinh", composite([](KilnBuilder &kb, OnnxNode &node, Value x) {
        Value a = kb.abs(x);
        Value r = kb.log(
            kb.add(a, kb.sqrt(kb.add(kb.mul(x, x), node.scalarLike(1.0, x)))));
        return kb.mul(kb.builder().create<SignOp>(kb.location(), x), r);
      }));
  registry.add(
      "Acosh", composite([](KilnBuilder &kb, OnnxNode &node, Value x) {
        return kb.log(
            kb.add(x, kb.sqrt(kb.sub(kb.mul(x, x), node.scalarLike(1.0, x)))));
      }));
  registry.add("Atanh", composite([](KilnBuilder &kb, OnnxNode &node, Value x) {
                 Value one = node.scalarLike(1.0, x);
                 return kb.mul(kb.log(kb.div(kb.add(one, x), kb.sub(one, x))),
                               node.scalarLike(0.5, x));
               }));
  registry.add("Shrink", importShrink);
  registry.add("Add", binary<AddOp>(false));
  registry.add("Sub", binary<SubOp>(false));
  registry.add("Mul", binary<MulOp>(false));
  registry.add("Div", binary<DivOp>(false));
  registry.add("Pow", importPow);
  registry.add("Max", variadic<MaxOp>(false));
  registry.add("Min", variadic<MinOp>(false));
  registry.add("Sum", variadic<AddOp>(false));
  registry.add("Mean", variadic<AddOp>(true));
  registry.add("Equal", compare(CmpPredicate::eq));
  registry.add("Less", compare(CmpPredicate::lt));
  registry.add("LessOrEqual", compare(CmpPredicate::le));
  registry.add("Greater", compare(CmpPredicate::gt));
  registry.add("GreaterOrEqual", compare(CmpPredicate::ge));
  registry.add("And", logic(Logic::And));
  registry.add("Or", logic(Logic::Or));
  registry.add("Xor", logic(Logic::Xor));
  registry.add("Not", importNot);
  registry.add("Where", importWhere);
  registry.add("Abs", unary<AbsOp>(false));
  registry.add("Neg", unary<NegOp>(false));
  registry.add("Exp", unary<ExpOp>(true));
  registry.add("Log", unary<LogOp>(true));
  registry.add("Sqrt", unary<SqrtOp>(true));
  registry.add("Sin", unary<SinOp>(true));
  registry.add("Cos", unary<CosOp>(true));
  registry.add("Erf", unary<ErfOp>(true));
  registry.add("Floor", unary<FloorOp>(true));
  registry.add("Ceil", unary<CeilOp>(true));
  registry.add("Round", unary<RoundOp>(true));
  registry.add("Sign", importSign);
  registry.add("Reciprocal", importReciprocal);
  registry.add("Clip", importClip);
  registry.add("Cast", importCastOp);
  registry.add("CastLike", importCastLike);
  registry.add("Identity", importIdentity);
  registry.add("IsNaN", importIsNaN);
  registry.add("IsInf", importIsInf);
  registry.add("Constant", importConstant);
  registry.add("ConstantOfShape", importConstantOfShape);
}

} // namespace mlir::kiln::onnx_import
