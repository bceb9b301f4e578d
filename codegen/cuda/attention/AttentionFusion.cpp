//===- AttentionFusion.cpp - attention fusions taken apart ----------------===//

#include "codegen/cuda/attention/AttentionFusion.h"

#include "codegen/cuda/EmitterUtils.h"

#include <cmath>

namespace mlir::kiln::codegen {
namespace {

SmallVector<int64_t> rowMajorStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;)
    strides[d - 1] = strides[d] * shape[d];
  return strides;
}

int64_t headsOf(Value v) { return cast<ShapedType>(v.getType()).getDimSize(1); }

/// A dense buffer of the op's own shape.
AttentionTensor dense(Value v, LaunchArg arg) {
  SmallVector<int64_t> st =
      rowMajorStrides(cast<ShapedType>(v.getType()).getShape());
  return {headsOf(v), st[0], st[1], st[2], arg};
}

/// The op reads transpose(buffer, perm): its dim k is the buffer's perm[k].
AttentionTensor transposedOperand(Value v, ArrayRef<int64_t> bufferShape,
                                  ArrayRef<int64_t> perm, LaunchArg arg) {
  SmallVector<int64_t> st = rowMajorStrides(bufferShape);
  return {headsOf(v), st[perm[0]], st[perm[1]], st[perm[2]], arg};
}

/// The op's result is stored as transpose(result, perm): its dim j is the
/// buffer's dim k with perm[k] == j.
AttentionTensor transposedResult(Value v, ArrayRef<int64_t> bufferShape,
                                 ArrayRef<int64_t> perm, LaunchArg arg) {
  SmallVector<int64_t> st = rowMajorStrides(bufferShape), of(4);
  for (size_t k = 0; k < 4; ++k)
    of[perm[k]] = st[k];
  return {headsOf(v), of[0], of[1], of[2], arg};
}

bool keepsHeadDim(TransposeOp transpose) {
  ArrayRef<int64_t> perm = transpose.getPerm();
  return perm.size() == 4 && perm[3] == 3;
}

/// Sizes, mask, scale and types of the op.
void describeProblem(Operation *op, FusionOp fusion, AttentionProblem &p) {
  auto query = cast<ShapedType>(op->getOperand(0).getType());
  auto key = cast<ShapedType>(op->getOperand(1).getType());
  auto value = cast<ShapedType>(op->getOperand(2).getType());
  p.backward = isa<AttentionBackwardOp>(op);
  p.batchHeads = query.getDimSize(0) * query.getDimSize(1);
  p.tq = query.getDimSize(2);
  p.tk = key.getDimSize(2);
  p.d = query.getDimSize(3);
  p.dv = value.getDimSize(3);
  std::optional<APFloat> scale;
  if (auto a = dyn_cast<AttentionOp>(op)) {
    p.causal = a.getCausal();
    scale = a.getScale();
  } else {
    auto b = cast<AttentionBackwardOp>(op);
    p.causal = b.getCausal();
    scale = b.getScale();
  }
  p.scale = scale ? scale->convertToDouble() : 1.0 / std::sqrt(double(p.d));
  p.elem = cudaType(op->getOperand(0));
  int64_t largest = 0;
  for (Type t : fusion->getOperandTypes())
    largest = std::max(largest, cast<ShapedType>(t).getNumElements());
  p.wideIndex = largest >= (int64_t(1) << 31) - (int64_t(1) << 20);
}

} // namespace

FailureOr<AttentionFusion> analyzeAttentionFusion(FusionOp fusion) {
  Block &body = fusion.getBody().front();
  AttentionFusion result;
  size_t transposes = 0;
  for (Operation &op : body.without_terminator()) {
    if (isa<AttentionOp, AttentionBackwardOp>(op)) {
      if (result.op)
        return failure();
      result.op = &op;
    } else if (isa<TransposeOp>(op)) {
      ++transposes;
    } else {
      return failure();
    }
  }
  if (!result.op)
    return failure();
  Operation *op = result.op;
  AttentionProblem &problem = result.problem;
  size_t placed = 0;
  auto backwardOp = dyn_cast<AttentionBackwardOp>(op);
  Value lseOperand = backwardOp ? backwardOp.getRowLse() : Value();
  for (Value operand : op->getOperands()) {
    if (operand == lseOperand) {
      // Dense [B, H, Tq] f32, read as it is.
      auto argument = dyn_cast<BlockArgument>(operand);
      if (!argument || argument.getOwner() != &body)
        return failure();
      problem.rowLse = LaunchArg::operand(argument.getArgNumber());
      continue;
    }
    if (auto argument = dyn_cast<BlockArgument>(operand)) {
      if (argument.getOwner() != &body)
        return failure();
      problem.operands.push_back(
          dense(operand, LaunchArg::operand(argument.getArgNumber())));
      continue;
    }
    auto transpose = operand.getDefiningOp<TransposeOp>();
    auto argument = transpose ? dyn_cast<BlockArgument>(transpose.getInput())
                              : BlockArgument();
    if (!argument || argument.getOwner() != &body || !keepsHeadDim(transpose) ||
        !transpose->hasOneUse())
      return failure();
    problem.operands.push_back(transposedOperand(
        operand, cast<ShapedType>(argument.getType()).getShape(),
        transpose.getPerm(), LaunchArg::operand(argument.getArgNumber())));
    ++placed;
  }
  Operation *yield = body.getTerminator();
  auto yieldIndex = [&](Value value) -> int64_t {
    int64_t index = -1;
    for (auto [i, yielded] : llvm::enumerate(yield->getOperands()))
      if (yielded == value) {
        if (index >= 0)
          return -2; // yielded twice
        index = i;
      }
    return index;
  };
  bool any = false;
  auto forwardOp = dyn_cast<AttentionOp>(op);
  Value lseResult = forwardOp ? forwardOp.getRowLse() : Value();
  for (Value opResult : op->getResults()) {
    if (opResult == lseResult) {
      if (opResult.use_empty())
        continue;
      int64_t index = yieldIndex(opResult);
      if (index < 0 || llvm::any_of(opResult.getUsers(),
                                    [&](Operation *u) { return u != yield; }))
        return failure();
      problem.rowLse = LaunchArg::result(index);
      continue;
    }
    std::optional<AttentionTensor> tensor;
    if (opResult.hasOneUse() &&
        isa<TransposeOp>(*opResult.getUsers().begin())) {
      auto transpose = cast<TransposeOp>(*opResult.getUsers().begin());
      if (!keepsHeadDim(transpose) || !transpose->hasOneUse() ||
          *transpose->getUsers().begin() != yield)
        return failure();
      int64_t index = yieldIndex(transpose.getResult());
      if (index < 0)
        return failure();
      tensor = transposedResult(
          opResult, cast<ShapedType>(transpose.getType()).getShape(),
          transpose.getPerm(), LaunchArg::result(index));
      ++placed;
    } else if (!opResult.use_empty()) {
      if (llvm::any_of(opResult.getUsers(),
                       [&](Operation *u) { return u != yield; }))
        return failure();
      int64_t index = yieldIndex(opResult);
      if (index < 0)
        return failure();
      tensor = dense(opResult, LaunchArg::result(index));
    }
    any |= tensor.has_value();
    problem.results.push_back(tensor);
  }
  if (placed != transposes || !any)
    return failure();
  describeProblem(op, fusion, problem);
  return result;
}

} // namespace mlir::kiln::codegen
