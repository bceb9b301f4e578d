//===- KilnBuilder.h - terse construction of kiln IR -------------*- C++
//-*-===//
//
// A thin wrapper over OpBuilder with one call per common kiln op, for code
// that builds a lot of IR: gradient rules, the training-step builder,
// optimizer updates. Operands broadcast like the ops they create.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_KILN_IR_KILNBUILDER_H
#define KILN_DIALECTS_KILN_IR_KILNBUILDER_H

#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/IR/Builders.h"

namespace mlir::kiln {

class KilnBuilder {
public:
  KilnBuilder(OpBuilder &builder, Location loc) : b(builder), loc(loc) {}

  OpBuilder &builder() { return b; }
  Location location() const { return loc; }

  static RankedTensorType typeOf(Value v) {
    return llvm::cast<RankedTensorType>(v.getType());
  }
  static Type elementOf(Value v) { return typeOf(v).getElementType(); }

  // Constants.
  /// A rank-0 constant of `elementType`.
  Value scalar(double value, Type elementType) {
    return splat(RankedTensorType::get({}, elementType), value);
  }
  /// A rank-0 constant with the element type of `like`.
  Value scalarLike(double value, Value like) {
    return scalar(value, elementOf(like));
  }
  Value splat(RankedTensorType type, double value) {
    Attribute element =
        llvm::isa<FloatType>(type.getElementType())
            ? Attribute(b.getFloatAttr(type.getElementType(), value))
            : Attribute(b.getIntegerAttr(type.getElementType(),
                                         static_cast<int64_t>(value)));
    return b.create<ConstantOp>(loc, DenseElementsAttr::get(type, element));
  }
  Value zerosLike(Value like) { return splat(typeOf(like), 0.0); }
  Value zeros(RankedTensorType type) { return splat(type, 0.0); }

  // Elementwise.
  Value add(Value x, Value y) { return b.create<AddOp>(loc, x, y); }
  Value sub(Value x, Value y) { return b.create<SubOp>(loc, x, y); }
  Value mul(Value x, Value y) { return b.create<MulOp>(loc, x, y); }
  Value div(Value x, Value y) { return b.create<DivOp>(loc, x, y); }
  Value pow(Value x, Value y) { return b.create<PowOp>(loc, x, y); }
  Value max(Value x, Value y) { return b.create<MaxOp>(loc, x, y); }
  Value min(Value x, Value y) { return b.create<MinOp>(loc, x, y); }
  Value neg(Value x) { return b.create<NegOp>(loc, x); }
  Value abs(Value x) { return b.create<AbsOp>(loc, x); }
  Value exp(Value x) { return b.create<ExpOp>(loc, x); }
  Value log(Value x) { return b.create<LogOp>(loc, x); }
  Value sqrt(Value x) { return b.create<SqrtOp>(loc, x); }
  Value rsqrt(Value x) { return b.create<RsqrtOp>(loc, x); }
  Value tanh(Value x) { return b.create<TanhOp>(loc, x); }
  Value sigmoid(Value x) { return b.create<SigmoidOp>(loc, x); }
  Value compare(CmpPredicate predicate, Value x, Value y) {
    return b.create<CompareOp>(loc, predicate, x, y);
  }
  Value select(Value condition, Value x, Value y) {
    return b.create<SelectOp>(loc, condition, x, y);
  }
  /// `x` converted to `elementType` (no op when it already has it).
  Value cast(Value x, Type elementType) {
    if (elementOf(x) == elementType)
      return x;
    return b.create<CastOp>(
        loc, RankedTensorType::get(typeOf(x).getShape(), elementType), x);
  }
  /// `x * factor` with a scalar constant of x's element type.
  Value scale(Value x, double factor) { return mul(x, scalarLike(factor, x)); }

  // Shapes and reductions.
  Value reduceSum(Value x, ArrayRef<int64_t> dims, bool keepDim = false) {
    if (dims.empty())
      return x;
    return b.create<ReduceSumOp>(loc, x, dims, keepDim);
  }
  Value reduceMax(Value x, ArrayRef<int64_t> dims, bool keepDim = false) {
    if (dims.empty())
      return x;
    return b.create<ReduceMaxOp>(loc, x, dims, keepDim);
  }
  /// Sum over every element (rank-0 result).
  Value sumAll(Value x) { return reduceSum(x, allDims(x)); }
  Value maxAll(Value x) { return reduceMax(x, allDims(x)); }
  Value reshape(Value x, ArrayRef<int64_t> shape) {
    if (typeOf(x).getShape() == shape)
      return x;
    return b.create<ReshapeOp>(loc, RankedTensorType::get(shape, elementOf(x)),
                               x);
  }
  Value broadcastTo(Value x, RankedTensorType type) {
    if (typeOf(x) == type)
      return x;
    return b.create<BroadcastToOp>(loc, type, x);
  }
  Value transpose(Value x, ArrayRef<int64_t> permutation) {
    return b.create<TransposeOp>(loc, x, permutation);
  }
  Value slice(Value x, ArrayRef<int64_t> start, ArrayRef<int64_t> limit,
              ArrayRef<int64_t> step) {
    return b.create<SliceOp>(loc, x, start, limit, step);
  }
  /// Zero padding.
  Value pad(Value x, ArrayRef<int64_t> low, ArrayRef<int64_t> high) {
    return b.create<PadOp>(loc, x, low, high, llvm::APFloat(0.0));
  }
  Value matmul(Value x, Value y, bool transposeX = false,
               bool transposeY = false) {
    return b.create<MatmulOp>(loc, x, y, transposeX, transposeY);
  }

  static SmallVector<int64_t> allDims(Value x) {
    SmallVector<int64_t> dims;
    for (int64_t d = 0, e = typeOf(x).getRank(); d < e; ++d)
      dims.push_back(d);
    return dims;
  }

private:
  OpBuilder &b;
  Location loc;
};

} // namespace mlir::kiln

#endif // KILN_DIALECTS_KILN_IR_KILNBUILDER_H
