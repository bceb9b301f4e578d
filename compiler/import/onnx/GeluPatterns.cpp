//===- GeluPatterns.cpp - GELU written out in ONNX ops, as kiln.gelu ------===//
//
// Below opset 20 ONNX has no Gelu, so exporters write it out, each in its
// own order: PyTorch's TorchScript exporter as ((x * (erf(x / sqrt 2) + 1))
// * 0.5) and 0.5 * (x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * (x * (x *
// x)))))), its op library as x * (0.5 * (erf(x / sqrt 2) + 1)) with Pow(x,
// 3), hand-written models as x * 0.5 * (1 + erf(x * (1 / sqrt 2))). After the
// import every such expression, whatever the order of its products and
// sums, becomes one kiln.gelu (approximate = none or tanh): one fused
// activation whose gradient is its own rather than that of a chain of
// element-wise ops. A product is read as its constant coefficient (scalar
// constants multiplied, divisions by them folded in) and its other factors;
// the coefficients must be GELU's to within their element type's rounding.
//
//===----------------------------------------------------------------------===//

#include "compiler/import/onnx/GraphImporter.h"
#include "compiler/import/onnx/OnnxTypes.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <cmath>
#include <optional>

namespace mlir::kiln::onnx_import {
namespace {

/// The value of a single-valued (splat) floating-point constant.
std::optional<double> scalarConstant(Value v) {
  auto constant = v.getDefiningOp<ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto attr = llvm::dyn_cast<DenseElementsAttr>(constant.getValue());
  if (!attr || !attr.isSplat() || !llvm::isa<FloatType>(attr.getElementType()))
    return std::nullopt;
  return attr.getSplatValue<llvm::APFloat>().convertToDouble();
}

/// A product: coefficient * the product of `factors`.
struct Product {
  double coefficient = 1;
  llvm::SmallVector<Value, 4> factors;
  /// The ops it was read from (to erase once unused).
  llvm::SmallVector<Operation *, 8> ops;
};

/// Reads `v` as a product through kiln.mul, kiln.div by a constant and
/// kiln.pow by a small constant integer; gives up past a few factors.
bool readProduct(Value v, Product &p) {
  if (p.factors.size() > 4)
    return false;
  if (std::optional<double> c = scalarConstant(v)) {
    p.coefficient *= *c;
    return true;
  }
  Operation *op = v.getDefiningOp();
  if (auto mul = llvm::dyn_cast_or_null<MulOp>(op)) {
    p.ops.push_back(op);
    return readProduct(mul.getLhs(), p) && readProduct(mul.getRhs(), p);
  }
  if (auto div = llvm::dyn_cast_or_null<DivOp>(op)) {
    std::optional<double> c = scalarConstant(div.getRhs());
    if (c && *c != 0) {
      p.ops.push_back(op);
      p.coefficient /= *c;
      return readProduct(div.getLhs(), p);
    }
  }
  if (auto pow = llvm::dyn_cast_or_null<PowOp>(op)) {
    std::optional<double> c = scalarConstant(pow.getRhs());
    if (c && (*c == 2 || *c == 3)) {
      p.ops.push_back(op);
      for (int i = 0; i < *c; ++i)
        p.factors.push_back(pow.getLhs());
      return true;
    }
  }
  p.factors.push_back(v);
  return true;
}

/// Whether `value` is `expected` to within `type`'s rounding.
bool near(double value, double expected, Type type) {
  double epsilon = std::ldexp(
      1.0, -static_cast<int>(llvm::cast<FloatType>(type).getFPMantissaWidth()));
  return std::fabs(value - expected) <= 2 * epsilon * std::fabs(expected);
}

/// `one + f(...)` (either order) with one a constant 1: the op of f.
Operation *onePlus(Value v, Type element, llvm::SmallVector<Operation *> &ops) {
  auto add = v.getDefiningOp<AddOp>();
  if (!add)
    return nullptr;
  for (auto [a, b] : {std::pair(add.getLhs(), add.getRhs()),
                      std::pair(add.getRhs(), add.getLhs())}) {
    std::optional<double> c = scalarConstant(a);
    if (c && near(*c, 1.0, element) && b.getDefiningOp()) {
      ops.push_back(add);
      return b.getDefiningOp();
    }
  }
  return nullptr;
}

/// Whether `p` is `coefficient` times the factors `x` repeated `n` times.
bool isScaledPower(const Product &p, double coefficient, Value x, size_t n,
                   Type element) {
  return near(p.coefficient, coefficient, element) && p.factors.size() == n &&
         llvm::all_of(p.factors, [&](Value f) { return f == x; });
}

/// erf(u) with u = x / sqrt(2).
bool isExactInner(ErfOp erf, Value x, Type element,
                  llvm::SmallVector<Operation *> &ops) {
  Product u;
  if (!readProduct(erf.getInput(), u) ||
      !isScaledPower(u, M_SQRT1_2, x, 1, element))
    return false;
  ops.append(u.ops.begin(), u.ops.end());
  ops.push_back(erf);
  return true;
}

/// tanh(v) with v = sqrt(2 / pi) * (x + 0.044715 * x^3).
bool isTanhInner(TanhOp tanh, Value x, Type element,
                 llvm::SmallVector<Operation *> &ops) {
  Product v;
  if (!readProduct(tanh.getInput(), v) ||
      !near(v.coefficient, std::sqrt(2.0 / M_PI), element) ||
      v.factors.size() != 1)
    return false;
  auto sum = v.factors[0].getDefiningOp<AddOp>();
  if (!sum)
    return false;
  for (auto [a, b] : {std::pair(sum.getLhs(), sum.getRhs()),
                      std::pair(sum.getRhs(), sum.getLhs())}) {
    Product cube;
    if (a == x && readProduct(b, cube) &&
        isScaledPower(cube, 0.044715, x, 3, element)) {
      ops.append(v.ops.begin(), v.ops.end());
      ops.push_back(sum);
      ops.append(cube.ops.begin(), cube.ops.end());
      ops.push_back(tanh);
      return true;
    }
  }
  return false;
}

/// The GELU of which `root` is the outermost product, if it is one.
std::optional<GeluApproximation>
matchGelu(MulOp root, Value &x, llvm::SmallVector<Operation *> &ops) {
  auto type = llvm::cast<RankedTensorType>(root.getType());
  Type element = type.getElementType();
  if (!llvm::isa<FloatType>(element))
    return std::nullopt;
  Product outer;
  if (!readProduct(root.getResult(), outer) ||
      !near(outer.coefficient, 0.5, element) || outer.factors.size() != 2)
    return std::nullopt;
  for (auto [candidate, other] :
       {std::pair(outer.factors[0], outer.factors[1]),
        std::pair(outer.factors[1], outer.factors[0])}) {
    if (candidate.getType() != type)
      continue;
    llvm::SmallVector<Operation *> inner;
    Operation *f = onePlus(other, element, inner);
    if (auto erf = llvm::dyn_cast_or_null<ErfOp>(f);
        erf && isExactInner(erf, candidate, element, inner)) {
      x = candidate;
      ops.assign(outer.ops.begin(), outer.ops.end());
      ops.append(inner.begin(), inner.end());
      return GeluApproximation::none;
    }
    if (auto tanh = llvm::dyn_cast_or_null<TanhOp>(f);
        tanh && isTanhInner(tanh, candidate, element, inner)) {
      x = candidate;
      ops.assign(outer.ops.begin(), outer.ops.end());
      ops.append(inner.begin(), inner.end());
      return GeluApproximation::tanh;
    }
  }
  return std::nullopt;
}

} // namespace

void fuseGeluPatterns(func::FuncOp function) {
  // Outermost products first: a match consumes the products inside it.
  llvm::SmallVector<MulOp> products;
  function.walk([&](MulOp mul) { products.push_back(mul); });
  llvm::SmallPtrSet<Operation *, 16> erased;
  for (MulOp root : llvm::reverse(products)) {
    if (erased.contains(root))
      continue;
    Value x;
    llvm::SmallVector<Operation *> ops;
    std::optional<GeluApproximation> kind = matchGelu(root, x, ops);
    if (!kind)
      continue;
    OpBuilder b(root);
    Value gelu = b.create<GeluOp>(root.getLoc(), x, *kind);
    root.getResult().replaceAllUsesWith(gelu);
    // The written-out ops and their constants go where nothing else uses
    // them, inner ones last.
    llvm::SetVector<Operation *> dead(ops.begin(), ops.end());
    for (Operation *op : ops)
      for (Value operand : op->getOperands())
        if (auto constant = operand.getDefiningOp<ConstantOp>())
          dead.insert(constant);
    for (bool changed = true; changed;) {
      changed = false;
      for (Operation *op : dead)
        if (!erased.contains(op) && op->use_empty()) {
          erased.insert(op);
          op->erase();
          changed = true;
        }
    }
  }
}

} // namespace mlir::kiln::onnx_import
