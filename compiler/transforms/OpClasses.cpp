//===- OpClasses.cpp - how kiln ops map onto kernels ----------------------===//

#include "compiler/transforms/OpClasses.h"

namespace mlir::kiln {

OpClass classify(Operation *op) {
  namespace traits = OpTrait::kiln;
  if (op->hasTrait<traits::Pointwise>())
    return OpClass::Pointwise;
  if (op->hasTrait<traits::Layout>())
    return OpClass::Gather;
  if (op->hasTrait<traits::View>())
    return OpClass::View;
  if (op->hasTrait<traits::Reduces>())
    return OpClass::Reduction;
  if (op->hasTrait<traits::Gemm>())
    return OpClass::Gemm;
  if (op->hasTrait<traits::DedicatedKernel>())
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
    return cast<DedicatedKernelOpInterface>(op).getFusionKind();
  case OpClass::Other:
    break;
  }
  return "pointwise";
}

bool remapsOperands(Operation *op) {
  return isa<RemapsOperandsOpInterface>(op);
}

int64_t remappedReadsPerElement(Operation *op) {
  auto remapping = dyn_cast<RemapsOperandsOpInterface>(op);
  return remapping ? remapping.getRemappedReadsPerElement() : 1;
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

llvm::SmallPtrSet<Value, 4> argumentsUpdatedInPlace(func::FuncOp function) {
  llvm::SmallPtrSet<Value, 4> arguments;
  for (unsigned i = 0, e = function.getNumResults(); i < e; ++i)
    if (auto updates = function.getResultAttrOfType<IntegerAttr>(
            i, KilnDialect::kUpdatesAttrName))
      if (updates.getInt() < function.getNumArguments())
        arguments.insert(function.getArgument(updates.getInt()));
  return arguments;
}

/// `value`, or the value the chain of views that `value` is read through
/// aliases.
static Value viewedValue(Value value) {
  while (Operation *producer = value.getDefiningOp()) {
    if (classify(producer) != OpClass::View)
      break;
    value = producer->getOperand(0);
  }
  return value;
}

bool readsThroughView(Operation *op,
                      const llvm::SmallPtrSet<Value, 4> &arguments) {
  if (classify(op) == OpClass::View)
    return arguments.contains(viewedValue(op->getOperand(0)));
  return llvm::any_of(op->getOperands(), [&](Value operand) {
    Value viewed = viewedValue(operand);
    return viewed != operand && arguments.contains(viewed);
  });
}

} // namespace mlir::kiln
