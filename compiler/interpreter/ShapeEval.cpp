//===- ShapeEval.cpp - evaluators of shape ops, reductions and matmul -----===//

#include "compiler/interpreter/EvalUtils.h"

#include "dialects/kiln/IR/KilnDialect.h"

namespace mlir::kiln::ref {

void registerShapeEvaluators(EvaluatorRegistry &registry) {
  registry.add<ReduceSumOp>([](Operation *op, llvm::ArrayRef<const Tensor *> operands,
                               llvm::MutableArrayRef<Tensor> results,
                               EvalContext &) {
    reduceOver(*operands[0], cast<ReduceSumOp>(op).getDims(), results[0], 0.0,
               [](double acc, double x) { return acc + x; },
               [](double acc, int64_t) { return acc; });
    return success();
  });
}

} // namespace mlir::kiln::ref
