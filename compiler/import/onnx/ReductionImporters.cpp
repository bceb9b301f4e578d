//===- ReductionImporters.cpp - ONNX reductions, ArgMax and ArgMin --------===//
//
// ReduceSum/Mean/Max/Min map onto kiln's reductions (ReduceMax and ReduceMin
// of BOOL, from version 20, through i32); L1, L2, SumSquare,
// LogSum and LogSumExp (max-shifted, so it does not overflow) are composed.
// ReduceProd is exp(sum(log|x|)) with the sign from the count of negative
// elements (0 where any element is 0). ArgMin is ArgMax of -x;
// select_last_index flips the axis first. CumSum is a log-step scan of
// shifted additions.
//
//===----------------------------------------------------------------------===//

#include "compiler/import/onnx/GraphImporter.h"

namespace mlir::kiln::onnx_import {
namespace {

enum class Reduction {
  Sum,
  Mean,
  Max,
  Min,
  Prod,
  L1,
  L2,
  LogSum,
  LogSumExp,
  SumSquare
};

OpImporter reduce(Reduction kind) {
  return [kind](OnnxNode &node) -> LogicalResult {
    Value x = node.input(0);
    if (!x)
      return failure();
    auto type = KilnBuilder::typeOf(x);
    bool isFloat = llvm::isa<FloatType>(type.getElementType());
    // ReduceMax and ReduceMin of BOOL (from version 20) are any and all.
    bool isBool = type.getElementType().isInteger(1);
    bool extremum = kind == Reduction::Max || kind == Reduction::Min;
    if (isBool && !(extremum && node.version() >= 20))
      return node.unsupported("a BOOL " + node.opType());
    bool floatOnly = kind != Reduction::Sum && !extremum;
    if (floatOnly && !isFloat)
      return node.unsupported("an integer " + node.opType());
    // The axes are an input from version 13 of ReduceSum and version 18 of
    // the others on, an attribute before.
    bool axesFromInput = node.opType() == "ReduceSum" ? node.version() >= 13
                                                      : node.version() >= 18;
    llvm::SmallVector<int64_t> axes;
    if (axesFromInput) {
      if (node.hasInput(1)) {
        auto ints = node.constantInts(1, "the axes");
        if (failed(ints))
          return failure();
        axes = *ints;
      }
    } else {
      axes = node.intsAttr("axes");
    }
    bool keep = node.intAttr("keepdims", 1) != 0;
    bool noop = axesFromInput && node.intAttr("noop_with_empty_axes", 0) != 0;
    if (axes.empty() && noop) {
      node.setResult(0, x);
      return success();
    }
    llvm::SmallVector<int64_t> dims;
    llvm::SmallVector<bool> seen(type.getRank(), false);
    for (int64_t axis : axes) {
      auto a = node.normalizeAxis(axis, type.getRank());
      if (failed(a))
        return failure();
      if (!seen[*a])
        dims.push_back(*a);
      seen[*a] = true;
    }
    if (axes.empty())
      dims = KilnBuilder::allDims(x);
    llvm::sort(dims);
    if (dims.empty())
      return node.unsupported("a reduction of a rank-0 tensor");
    OpBuilder &b = node.builder();
    Location loc = node.loc();
    KilnBuilder kb = node.kb();
    if (isBool) {
      Value asInt = kb.cast(x, b.getI32Type());
      Value r = kind == Reduction::Max
                    ? b.create<ReduceMaxOp>(loc, asInt, dims, keep).getResult()
                    : b.create<ReduceMinOp>(loc, asInt, dims, keep).getResult();
      node.setResult(0,
                     kb.compare(CmpPredicate::ne, r, node.scalarLike(0.0, r)));
      return success();
    }
    auto sum = [&](Value v) {
      return b.create<ReduceSumOp>(loc, v, dims, keep).getResult();
    };
    Value result;
    switch (kind) {
    case Reduction::Sum:
      result = sum(x);
      break;
    case Reduction::Mean:
      result = b.create<ReduceMeanOp>(loc, x, dims, keep);
      break;
    case Reduction::Max:
      result = b.create<ReduceMaxOp>(loc, x, dims, keep);
      break;
    case Reduction::Min:
      result = b.create<ReduceMinOp>(loc, x, dims, keep);
      break;
    case Reduction::L1:
      result = sum(kb.abs(x));
      break;
    case Reduction::L2:
      result = kb.sqrt(sum(kb.mul(x, x)));
      break;
    case Reduction::SumSquare:
      result = sum(kb.mul(x, x));
      break;
    case Reduction::LogSum:
      result = kb.log(sum(x));
      break;
    case Reduction::LogSumExp: {
      Value m = b.create<ReduceMaxOp>(loc, x, dims, /*keepdim=*/true);
      Value s = b.create<ReduceSumOp>(loc, kb.exp(kb.sub(x, m)), dims, keep);
      Value mk = keep ? m : kb.reshape(m, KilnBuilder::typeOf(s).getShape());
      result = kb.add(kb.log(s), mk);
      break;
    }
    case Reduction::Prod: {
      Value zero = node.scalarLike(0.0, x);
      Value magnitude = kb.exp(sum(kb.log(kb.abs(x))));
      Value negative =
          kb.cast(kb.compare(CmpPredicate::lt, x, zero), type.getElementType());
      Value count = sum(negative);
      // (-1)^count = 1 - 2 * (count - 2 * floor(count / 2)).
      Value half =
          b.create<FloorOp>(loc, kb.mul(count, node.scalarLike(0.5, x)));
      Value odd = kb.sub(count, kb.mul(half, node.scalarLike(2.0, x)));
      Value sign =
          kb.sub(node.scalarLike(1.0, x), kb.mul(odd, node.scalarLike(2.0, x)));
      result = kb.mul(sign, magnitude);
      break;
    }
    }
    node.setResult(0, result);
    return success();
  };
}

OpImporter argReduce(bool isMin) {
  return [isMin](OnnxNode &node) -> LogicalResult {
    Value x = node.input(0);
    if (!x)
      return failure();
    auto type = KilnBuilder::typeOf(x);
    if (type.getElementType().isInteger(1))
      return node.unsupported("a BOOL " + node.opType());
    auto axis = node.normalizeAxis(node.intAttr("axis", 0), type.getRank());
    if (failed(axis))
      return failure();
    bool keep = node.intAttr("keepdims", 1) != 0;
    bool last = node.intAttr("select_last_index", 0) != 0;
    OpBuilder &b = node.builder();
    KilnBuilder kb = node.kb();
    if (isMin) {
      if (!llvm::isa<FloatType>(type.getElementType()))
        return node.unsupported("an integer ArgMin (negation wraps at -2^31)");
      x = kb.neg(x);
    }
    if (last)
      x = b.create<FlipOp>(node.loc(), x, llvm::ArrayRef<int64_t>{*axis});
    Value index = b.create<ArgmaxOp>(node.loc(), x, *axis, keep);
    if (last)
      index = kb.sub(node.scalarLike(type.getDimSize(*axis) - 1, index), index);
    node.setResult(0, index);
    return success();
  };
}

/// CumSum as a log-step scan (Hillis and Steele): after the step of shift s
/// each element holds the sum of the 2s elements ending at it, so
/// ceil(log2 n) shifted additions (pads and slices: exact for i32, and for
/// floats in another order of the same sum) give the inclusive sum.
/// exclusive shifts the result by one; reverse scans the flipped axis.
LogicalResult importCumSum(OnnxNode &node) {
  Value x = node.input(0);
  if (!x)
    return failure();
  auto type = KilnBuilder::typeOf(x);
  if (type.getElementType().isInteger(1))
    return node.unsupported("a BOOL CumSum");
  auto axes = node.constantInts(1, "the axis of CumSum");
  if (failed(axes))
    return failure();
  if (axes->size() != 1)
    return node.emitError() << "CumSum's axis must hold one value";
  auto axis = node.normalizeAxis(axes->front(), type.getRank());
  if (failed(axis))
    return failure();
  bool exclusive = node.intAttr("exclusive", 0) != 0;
  bool reverse = node.intAttr("reverse", 0) != 0;
  int64_t n = type.getDimSize(*axis), rank = type.getRank();
  OpBuilder &b = node.builder();
  KilnBuilder kb = node.kb();
  // `v` moved `s` places along the axis, zeros coming in.
  auto shifted = [&](Value v, int64_t s) {
    llvm::SmallVector<int64_t> start(rank, 0), limit(type.getShape()),
        step(rank, 1), low(rank, 0), high(rank, 0);
    limit[*axis] = n - s;
    low[*axis] = s;
    return kb.pad(kb.slice(v, start, limit, step), low, high);
  };
  Value y = x;
  if (reverse)
    y = b.create<FlipOp>(node.loc(), y, llvm::ArrayRef<int64_t>{*axis});
  for (int64_t s = 1; s < n; s *= 2)
    y = kb.add(y, shifted(y, s));
  if (exclusive && n > 0)
    y = shifted(y, 1);
  if (reverse)
    y = b.create<FlipOp>(node.loc(), y, llvm::ArrayRef<int64_t>{*axis});
  node.setResult(0, y);
  return success();
}

} // namespace

void registerReductionImporters(OpImporterRegistry &registry) {
  registry.add("CumSum", importCumSum);
  registry.add("ReduceSum", reduce(Reduction::Sum));
  registry.add("ReduceMean", reduce(Reduction::Mean));
  registry.add("ReduceMax", reduce(Reduction::Max));
  registry.add("ReduceMin", reduce(Reduction::Min));
  registry.add("ReduceProd", reduce(Reduction::Prod));
  registry.add("ReduceL1", reduce(Reduction::L1));
  registry.add("ReduceL2", reduce(Reduction::L2));
  registry.add("ReduceLogSum", reduce(Reduction::LogSum));
  registry.add("ReduceLogSumExp", reduce(Reduction::LogSumExp));
  registry.add("ReduceSumSquare", reduce(Reduction::SumSquare));
  registry.add("ArgMax", argReduce(false));
  registry.add("ArgMin", argReduce(true));
}

} // namespace mlir::kiln::onnx_import
