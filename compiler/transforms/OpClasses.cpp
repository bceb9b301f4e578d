//===- OpClasses.cpp - how kiln ops map onto kernels ----------------------===//

#include "compiler/transforms/OpClasses.h"

namespace mlir::kiln {

OpClass classify(Operation *op) {
  if (isa<ConstantOp, IotaOp, RandomUniformOp, RandomNormalOp, NegOp, AbsOp,
          SignOp, ReluOp, ExpOp, LogOp, SqrtOp, RsqrtOp, SinOp, CosOp, TanhOp,
          SigmoidOp, SiluOp, GeluOp, LeakyReluOp, FloorOp, CeilOp, RoundOp,
          CastOp, AddOp, SubOp, MulOp, DivOp, PowOp, MaxOp, MinOp, CompareOp,
          SelectOp, BroadcastToOp>(op))
    return OpClass::Pointwise;
  if (isa<TransposeOp, SliceOp, FlipOp, PadOp, ConcatOp, TriuOp, TrilOp, RopeOp,
          EmbeddingOp, DropoutOp>(op))
    return OpClass::Gather;
  if (isa<ReshapeOp>(op))
    return OpClass::View;
  if (isa<ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp, ArgmaxOp,
          SoftmaxOp, LogSoftmaxOp, RmsNormOp, LayerNormOp, RmsNormBackwardOp,
          LayerNormBackwardOp, MseLossOp, CrossEntropyOp,
          CrossEntropyBackwardOp, BinaryCrossEntropyOp,
          BinaryCrossEntropyBackwardOp>(op))
    return OpClass::Reduction;
  if (isa<MatmulOp>(op))
    return OpClass::Gemm;
  if (isa<AttentionOp, AttentionBackwardOp, RnnOp, RnnBackwardOp, Conv2dOp,
          Conv2dBackwardInputOp, Conv2dBackwardFilterOp, MaxPool2dOp,
          AvgPool2dOp, MaxPool2dBackwardOp, AvgPool2dBackwardOp, BatchNormOp,
          BatchNormBackwardOp, EmbeddingBackwardOp>(op))
    return OpClass::Dedicated;
  return OpClass::Other;
}

llvm::StringRef fusionKindOf(Operation *op) {
  switch (classify(op)) {
  case OpClass::Pointwise:
  case OpClass::Gather:
  case OpClass::View:
    return "pointwise";
  case OpClass::Reduction:
    return "reduction";
  case OpClass::Gemm:
    return "gemm";
  case OpClass::Dedicated:
    if (isa<AttentionOp, AttentionBackwardOp>(op))
      return "attention";
    if (isa<RnnOp, RnnBackwardOp>(op))
      return "rnn";
    // Convolutions, pooling, batch norm and embedding gradients share the
    // family of kernels that walk images and tables.
    return "conv";
  case OpClass::Other:
    break;
  }
  return "pointwise";
}

bool remapsWithinOperands(Operation *op) {
  return isa<TransposeOp, SliceOp, FlipOp, RopeOp, ReshapeOp>(op);
}

int64_t remappedReadsPerElement(Operation *op) {
  return isa<RopeOp>(op) ? 2 : 1;
}

llvm::DenseSet<Operation *> optimizerUpdateOps(func::FuncOp function) {
  llvm::DenseSet<Operation *> ops;
  Operation *terminator = function.getBody().front().getTerminator();
  SmallVector<Operation *> worklist;
  for (unsigned i = 0, e = terminator->getNumOperands(); i < e; ++i)
    if (function.getResultAttr(i, KilnDialect::kUpdatesAttrName))
      if (Operation *producer = terminator->getOperand(i).getDefiningOp())
        worklist.push_back(producer);
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (classify(op) != OpClass::Pointwise || !ops.insert(op).second)
      continue;
    for (Value operand : op->getOperands())
      if (Operation *producer = operand.getDefiningOp())
        worklist.push_back(producer);
  }
  return ops;
}

} // namespace mlir::kiln
