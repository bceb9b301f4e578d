//===- ShapeGradients.cpp - gradient rules of shape ops and reductions ----===//
//
// Layout ops route the gradient back through the inverse layout op (reshape
// back, inverse permutation, flip again, slice out of a pad or concat, pad
// into a slice). Reductions broadcast the gradient back over the reduced
// dims; matmul's operand gradients are matmuls with the result gradient.
// argmax is not differentiable and has no rule.
//
//===----------------------------------------------------------------------===//

#include "dialects/kiln/Gradients/GradientUtils.h"
#include "dialects/kiln/IR/KilnBuilder.h"

namespace mlir::kiln {
namespace {

/// Pushes a null gradient for every operand of `op` (no gradient flows into
/// its result) and succeeds.
LogicalResult noGradients(Operation *op, SmallVectorImpl<Value> &operandGrads) {
  operandGrads.append(op->getNumOperands(), Value());
  return success();
}

bool isFloatTensor(Value v) {
  return isa<FloatType>(cast<RankedTensorType>(v.getType()).getElementType());
}

/// `grad` of a reduction over `dims` of `inputType`, reshaped so that the
/// reduced dims are present with size 1 (as with keepdim).
Value keepReducedDims(KilnBuilder &kb, Value grad, RankedTensorType inputType,
                      ArrayRef<int64_t> dims) {
  SmallVector<int64_t> kept(inputType.getShape());
  for (int64_t d : dims)
    kept[d] = 1;
  return kb.reshape(grad, kept);
}

/// Number of elements reduced into each result element.
int64_t groupSize(RankedTensorType inputType, ArrayRef<int64_t> dims) {
  int64_t size = 1;
  for (int64_t d : dims)
    size *= inputType.getDimSize(d);
  return size;
}

/// d(reshape x) = g reshaped back to x's shape.
struct ReshapeGradient
    : public GradientOpInterface::ExternalModel<ReshapeGradient, ReshapeOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &builder,
                               ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) const {
    if (!resultGrads[0])
      return noGradients(op, operandGrads);
    KilnBuilder kb(builder, op->getLoc());
    auto input = cast<ReshapeOp>(op).getInput();
    operandGrads.push_back(
        kb.reshape(resultGrads[0], input.getType().getShape()));
    return success();
  }
};

/// d(broadcast_to x) = g summed over the broadcast dims.
struct BroadcastToGradient
    : public GradientOpInterface::ExternalModel<BroadcastToGradient,
                                                BroadcastToOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &builder,
                               ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) const {
    if (!resultGrads[0])
      return noGradients(op, operandGrads);
    operandGrads.push_back(
        sumToShape(builder, op->getLoc(), resultGrads[0],
                   cast<BroadcastToOp>(op).getInput().getType()));
    return success();
  }
};

/// d(transpose x perm) = transpose g by the inverse permutation.
struct TransposeGradient
    : public GradientOpInterface::ExternalModel<TransposeGradient,
                                                TransposeOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &builder,
                               ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) const {
    if (!resultGrads[0])
      return noGradients(op, operandGrads);
    ArrayRef<int64_t> perm = cast<TransposeOp>(op).getPerm();
    SmallVector<int64_t> inverse(perm.size());
    for (size_t k = 0; k < perm.size(); ++k)
      inverse[perm[k]] = static_cast<int64_t>(k);
    KilnBuilder kb(builder, op->getLoc());
    operandGrads.push_back(kb.transpose(resultGrads[0], inverse));
    return success();
  }
};

/// d(slice x) scatters g back to the sliced positions, zeros elsewhere.
///
/// With step 1 this is one pad (low = start, high = size - limit). A dim d
/// with step s > 1 and n > 1 result elements first gets s - 1 zeros after
/// each element: reshape [.., n, ..] -> [.., n, 1, ..], pad the new dim to s,
/// reshape to [.., n * s, ..] and slice off the zeros after the last element,
/// leaving (n - 1) * s + 1 elements with g's elements at multiples of s. The
/// final pad then shifts them to start + j * s. Every step is exact.
struct SliceGradient
    : public GradientOpInterface::ExternalModel<SliceGradient, SliceOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &builder,
                               ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) const {
    if (!resultGrads[0])
      return noGradients(op, operandGrads);
    auto slice = cast<SliceOp>(op);
    Location loc = op->getLoc();
    KilnBuilder kb(builder, loc);
    RankedTensorType inputType = slice.getInput().getType();
    ArrayRef<int64_t> inShape = inputType.getShape();
    RankedTensorType outType = slice.getType();
    ArrayRef<int64_t> outShape = outType.getShape();
    ArrayRef<int64_t> start = slice.getStart(), step = slice.getStep();
    Value g = resultGrads[0];
    if (outType.getNumElements() == 0) {
      operandGrads.push_back(kb.zeros(inputType));
      return success();
    }

    auto interleaved = [&](size_t d) { return step[d] > 1 && outShape[d] > 1; };
    // Length of dim d once the zeros between elements are in place.
    SmallVector<int64_t> spread;
    for (size_t d = 0; d < outShape.size(); ++d)
      spread.push_back(interleaved(d) ? (outShape[d] - 1) * step[d] + 1
                                      : outShape[d]);
    if (llvm::any_of(llvm::seq<size_t>(0, outShape.size()), interleaved)) {
      SmallVector<int64_t> split, high, merged;
      for (size_t d = 0; d < outShape.size(); ++d) {
        split.push_back(outShape[d]);
        high.push_back(0);
        merged.push_back(outShape[d]);
        if (interleaved(d)) {
          split.push_back(1);
          high.push_back(step[d] - 1);
          merged.back() *= step[d];
        }
      }
      SmallVector<int64_t> zeros(split.size(), 0);
      g = kb.reshape(g, split);
      g = kb.pad(g, zeros, high);
      g = kb.reshape(g, merged);
      SmallVector<int64_t> begin(merged.size(), 0), ones(merged.size(), 1);
      g = kb.slice(g, begin, spread, ones);
    }
    SmallVector<int64_t> high;
    for (size_t d = 0; d < inShape.size(); ++d)
      high.push_back(inShape[d] - start[d] - spread[d]);
    operandGrads.push_back(kb.pad(g, start, high));
    return success();
  }
};

/// d(concat) gives input n the slice [o_n, o_n + size_n) of g along dim.
struct ConcatGradient
    : public GradientOpInterface::ExternalModel<ConcatGradient, ConcatOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &builder,
                               ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) const {
    if (!resultGrads[0])
      return noGradients(op, operandGrads);
    auto concat = cast<ConcatOp>(op);
    Value g = resultGrads[0];
    if (concat.getInputs().size() == 1) {
      operandGrads.push_back(g);
      return success();
    }
    KilnBuilder kb(builder, op->getLoc());
    int64_t dim = static_cast<int64_t>(concat.getDim());
    ArrayRef<int64_t> shape = concat.getType().getShape();
    SmallVector<int64_t> start(shape.size(), 0), limit(shape),
        step(shape.size(), 1);
    int64_t offset = 0;
    for (Value input : concat.getInputs()) {
      int64_t size = cast<RankedTensorType>(input.getType()).getDimSize(dim);
      start[dim] = offset;
      limit[dim] = offset + size;
      operandGrads.push_back(kb.slice(g, start, limit, step));
      offset += size;
    }
    return success();
  }
};

/// d(pad x) = the slice of g where x was placed.
struct PadGradient
    : public GradientOpInterface::ExternalModel<PadGradient, PadOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &builder,
                               ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) const {
    if (!resultGrads[0])
      return noGradients(op, operandGrads);
    auto pad = cast<PadOp>(op);
    ArrayRef<int64_t> low = pad.getLow();
    ArrayRef<int64_t> shape = pad.getInput().getType().getShape();
    SmallVector<int64_t> limit, step(shape.size(), 1);
    for (size_t d = 0; d < shape.size(); ++d)
      limit.push_back(low[d] + shape[d]);
    KilnBuilder kb(builder, op->getLoc());
    operandGrads.push_back(kb.slice(resultGrads[0], low, limit, step));
    return success();
  }
};

/// d(flip x dims) = flip g dims (flip is its own inverse).
struct FlipGradient
    : public GradientOpInterface::ExternalModel<FlipGradient, FlipOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &builder,
                               ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) const {
    if (!resultGrads[0])
      return noGradients(op, operandGrads);
    operandGrads.push_back(builder.create<FlipOp>(
        op->getLoc(), resultGrads[0], cast<FlipOp>(op).getDimsAttr()));
    return success();
  }
};

/// triu and tril are masks: the gradient is g with the same mask applied.
template <typename OpTy>
struct TriangularGradient
    : public GradientOpInterface::ExternalModel<TriangularGradient<OpTy>,
                                                OpTy> {
  LogicalResult buildGradients(Operation *op, OpBuilder &builder,
                               ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) const {
    if (!resultGrads[0])
      return noGradients(op, operandGrads);
    operandGrads.push_back(builder.create<OpTy>(
        op->getLoc(), resultGrads[0], cast<OpTy>(op).getDiagonalAttr()));
    return success();
  }
};

/// d(reduce_sum x) = g broadcast back over the reduced dims.
struct ReduceSumGradient
    : public GradientOpInterface::ExternalModel<ReduceSumGradient,
                                                ReduceSumOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &builder,
                               ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) const {
    auto reduce = cast<ReduceSumOp>(op);
    if (!resultGrads[0] || !isFloatTensor(reduce.getInput()))
      return noGradients(op, operandGrads);
    Location loc = op->getLoc();
    RankedTensorType inputType = reduce.getInput().getType();
    Value g = resultGrads[0];
    if (!reduce.getKeepdim()) {
      // Put the reduced dims back as size 1 so numpy broadcasting applies.
      SmallVector<int64_t> kept(inputType.getShape());
      for (int64_t d : reduce.getDims())
        kept[d] = 1;
      g = builder.create<ReshapeOp>(
          loc, RankedTensorType::get(kept, inputType.getElementType()), g);
    }
    operandGrads.push_back(builder.create<BroadcastToOp>(loc, inputType, g));
    return success();
  }
};

/// d(reduce_mean x) = g / N broadcast back over the reduced dims, N the
/// number of reduced elements. Dividing by N (exact in the element type for
/// the usual group sizes) rounds once, where multiplying by a rounded 1/N
/// would round twice in bf16/f16.
struct ReduceMeanGradient
    : public GradientOpInterface::ExternalModel<ReduceMeanGradient,
                                                ReduceMeanOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &builder,
                               ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) const {
    auto reduce = cast<ReduceMeanOp>(op);
    if (!resultGrads[0])
      return noGradients(op, operandGrads);
    KilnBuilder kb(builder, op->getLoc());
    RankedTensorType inputType = reduce.getInput().getType();
    Value g = keepReducedDims(kb, resultGrads[0], inputType, reduce.getDims());
    int64_t n = groupSize(inputType, reduce.getDims());
    if (n > 1)
      g = kb.div(g, kb.scalarLike(static_cast<double>(n), g));
    operandGrads.push_back(kb.broadcastTo(g, inputType));
    return success();
  }
};

/// d(reduce_max x) and d(reduce_min x): the gradient of each group goes to
/// the elements equal to the group's extreme. Ties split it evenly (as
/// torch.amax/amin): with mask = (x == y) as 0/1 and count = sum of mask over
/// the group,
///   dx = mask * (g / count).
/// Where the group's result is NaN no element compares equal, count is 0 and
/// the whole group's gradient is NaN (0 * inf), so a NaN never disappears
/// silently from the backward pass.
template <typename OpTy>
struct ReduceExtremeGradient
    : public GradientOpInterface::ExternalModel<ReduceExtremeGradient<OpTy>,
                                                OpTy> {
  LogicalResult buildGradients(Operation *op, OpBuilder &builder,
                               ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) const {
    auto reduce = cast<OpTy>(op);
    Value x = reduce.getInput();
    if (!resultGrads[0] || !isFloatTensor(x))
      return noGradients(op, operandGrads);
    KilnBuilder kb(builder, op->getLoc());
    auto inputType = cast<RankedTensorType>(x.getType());
    ArrayRef<int64_t> dims = reduce.getDims();
    Value y = keepReducedDims(kb, reduce.getResult(), inputType, dims);
    Value g = keepReducedDims(kb, resultGrads[0], inputType, dims);
    Value isExtreme = kb.compare(CmpPredicate::eq, x, y);
    Value mask =
        kb.select(isExtreme, kb.scalarLike(1.0, x), kb.scalarLike(0.0, x));
    Value count = kb.reduceSum(mask, dims, /*keepDim=*/true);
    operandGrads.push_back(kb.mul(mask, kb.div(g, count)));
    return success();
  }
};

/// With A = op(lhs) [.., M, K], B = op(rhs) [.., K, N] and C = A B:
/// dA = G B^T and dB = A^T G. The operand gradients fold the transposes into
/// the matmul flags:
///   lhs:   dlhs = G B^T          (transpose_lhs: dlhs = dA^T = B G^T)
///   rhs:   drhs = A^T G          (transpose_rhs: drhs = dB^T = G^T A)
/// where B is rhs or rhs^T (and A lhs or lhs^T) as flagged. The products have
/// the result's batch dims; sumToShape undoes the batch broadcast of each
/// operand.
/// The gradient of a matmul's rhs when the rhs has no batch of its own (it
/// is broadcast along every batch dim of a dense, untransposed lhs, as a
/// weight [K, N] applied to activations [B, T, K]): the batch rows are only
/// more rows of one product, so A^T G is one 2-D contraction over all
/// B*...*M rows, [rows, K]^T [rows, N], whose K loop also does the sum over
/// the batch (rather than a batched product and a reduction over the batch).
/// Null where the shapes do not allow it.
Value flatRhsGradient(KilnBuilder &kb, MatmulOp matmul, Value g) {
  auto lhsType = cast<RankedTensorType>(matmul.getLhs().getType());
  auto rhsType = cast<RankedTensorType>(matmul.getRhs().getType());
  auto outType = cast<RankedTensorType>(g.getType());
  ArrayRef<int64_t> lhsShape = lhsType.getShape(),
                    rhsShape = rhsType.getShape();
  if (matmul.getTransposeLhs() || lhsShape.size() <= 2)
    return Value();
  // Every batch dim of the result comes from the lhs, none from the rhs.
  if (lhsShape.drop_back(2) != outType.getShape().drop_back(2) ||
      llvm::any_of(rhsShape.drop_back(2), [](int64_t d) { return d != 1; }))
    return Value();
  int64_t rows = 1;
  for (int64_t d : lhsShape.drop_back())
    rows *= d;
  int64_t k = lhsShape.back(), n = outType.getShape().back();
  Value lhs2 = kb.reshape(matmul.getLhs(), {rows, k});
  Value g2 = kb.reshape(g, {rows, n});
  // [K, N] = A^T G, or [N, K] = G^T A for a transposed rhs.
  Value flat = matmul.getTransposeRhs() ? kb.matmul(g2, lhs2, true, false)
                                        : kb.matmul(lhs2, g2, true, false);
  return kb.reshape(flat, rhsShape);
}

struct MatmulGradient
    : public GradientOpInterface::ExternalModel<MatmulGradient, MatmulOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &builder,
                               ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) const {
    if (!resultGrads[0])
      return noGradients(op, operandGrads);
    auto matmul = cast<MatmulOp>(op);
    Location loc = op->getLoc();
    KilnBuilder kb(builder, loc);
    Value g = resultGrads[0];
    Value lhs = matmul.getLhs(), rhs = matmul.getRhs();
    bool tl = matmul.getTransposeLhs(), tr = matmul.getTransposeRhs();

    // G B^T = matmul(G, rhs, -, !tr); B G^T = matmul(rhs, G, tr, true).
    Value dLhs =
        tl ? kb.matmul(rhs, g, tr, true) : kb.matmul(g, rhs, false, !tr);
    Value dRhs = flatRhsGradient(kb, matmul, g);
    // A^T G = matmul(lhs, G, !tl, -); G^T A = matmul(G, lhs, true, tl).
    if (!dRhs)
      dRhs = tr ? kb.matmul(g, lhs, true, tl) : kb.matmul(lhs, g, !tl, false);
    operandGrads.push_back(
        sumToShape(builder, loc, dLhs, cast<RankedTensorType>(lhs.getType())));
    operandGrads.push_back(
        sumToShape(builder, loc, dRhs, cast<RankedTensorType>(rhs.getType())));
    return success();
  }
};

} // namespace

void registerShapeGradientRules(MLIRContext *context) {
  ReshapeOp::attachInterface<ReshapeGradient>(*context);
  BroadcastToOp::attachInterface<BroadcastToGradient>(*context);
  TransposeOp::attachInterface<TransposeGradient>(*context);
  SliceOp::attachInterface<SliceGradient>(*context);
  ConcatOp::attachInterface<ConcatGradient>(*context);
  PadOp::attachInterface<PadGradient>(*context);
  FlipOp::attachInterface<FlipGradient>(*context);
  TriuOp::attachInterface<TriangularGradient<TriuOp>>(*context);
  TrilOp::attachInterface<TriangularGradient<TrilOp>>(*context);
  ReduceSumOp::attachInterface<ReduceSumGradient>(*context);
  ReduceMeanOp::attachInterface<ReduceMeanGradient>(*context);
  ReduceMaxOp::attachInterface<ReduceExtremeGradient<ReduceMaxOp>>(*context);
  ReduceMinOp::attachInterface<ReduceExtremeGradient<ReduceMinOp>>(*context);
  MatmulOp::attachInterface<MatmulGradient>(*context);
}

} // namespace mlir::kiln
