//===- ShapeEval.cpp - evaluators of shape ops, reductions and matmul -----===//

#include "compiler/interpreter/EvalUtils.h"

#include "dialects/kiln/IR/KilnDialect.h"

namespace mlir::kiln::ref {

/// Reshape is a copy of the row-major data under another shape.
static LogicalResult evalReshape(Operation *, llvm::ArrayRef<const Tensor *> operands,
                                 llvm::MutableArrayRef<Tensor> results,
                                 EvalContext &) {
  results[0].data = operands[0]->data;
  return success();
}

static LogicalResult evalBroadcastTo(Operation *,
                                     llvm::ArrayRef<const Tensor *> operands,
                                     llvm::MutableArrayRef<Tensor> results,
                                     EvalContext &) {
  const Tensor &in = *operands[0];
  Tensor &out = results[0];
  std::array<Shape, 1> strides = {broadcastStrides(in.shape, out.shape)};
  forEachStrided<1>(out.shape, strides,
                    [&](int64_t i, const std::array<int64_t, 1> &from) {
                      out.data[i] = in.data[from[0]];
                    });
  return success();
}

void registerShapeEvaluators(EvaluatorRegistry &registry) {
  registry.add<ReshapeOp>(evalReshape);
  registry.add<BroadcastToOp>(evalBroadcastTo);
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
