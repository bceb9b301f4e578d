//===- SequenceEval.cpp - evaluators of attention, rnn and fusion ---------===//
//
// Registers the family's evaluators and evaluates kiln.fusion, whose region
// the interpreter runs like a function body.
//
//===----------------------------------------------------------------------===//

#include "compiler/interpreter/SequenceEval.h"

#include "compiler/interpreter/EvalUtils.h"

#include "dialects/kiln/IR/KilnDialect.h"

namespace mlir::kiln::ref {

/// A fusion computes what its region computes on its operands; the region's
/// ops round their own results, so the yielded values are taken as they are.
static LogicalResult evalFusion(Operation *op,
                                llvm::ArrayRef<const Tensor *> operands,
                                llvm::MutableArrayRef<Tensor> results,
                                EvalContext &context) {
  auto fusion = cast<FusionOp>(op);
  FailureOr<std::vector<Tensor>> values =
      context.interpreter.runRegion(fusion.getBody(), operands);
  if (failed(values))
    return failure();
  if (values->size() != results.size())
    return op->emitOpError("region yielded ")
           << values->size() << " values for " << results.size() << " results";
  for (auto [index, value] : llvm::enumerate(*values)) {
    if (value.shape != results[index].shape ||
        value.kind != results[index].kind)
      return op->emitOpError("region yielded ")
             << value.typeString() << " for result #" << index << " of type "
             << results[index].typeString();
    results[index] = std::move(value);
  }
  return success();
}

void registerSequenceEvaluators(EvaluatorRegistry &registry) {
  registerAttentionEvaluators(registry);
  registerRnnEvaluators(registry);
  registry.add<FusionOp>(evalFusion);
}

} // namespace mlir::kiln::ref
