//===- CustomEval.cpp - kiln.custom on the CPU reference: refused ---------===//
//
// A custom op is CUDA code of the user's; the reference interpreter cannot
// run it and must not pretend to. It says so at the user's op, naming the
// kernel, so that a reference run of a model with a custom op fails
// clearly instead of producing numbers nobody computed.
//
//===----------------------------------------------------------------------===//

#include "compiler/interpreter/Interpreter.h"

#include "dialects/kiln/IR/KilnDialect.h"

namespace mlir::kiln::ref {
namespace {

LogicalResult refuse(Operation *op, StringRef entry, StringRef source) {
  return op->emitOpError()
         << "runs the CUDA function '" << entry << "' of \"" << source
         << "\", which the CPU reference cannot execute: check this model "
            "on the GPU (kilnc and kiln-run), or compare the kernel against "
            "finite differences of its forward there (tests/gpu/custom)";
}

LogicalResult evalCustom(Operation *op, ArrayRef<const Tensor *>,
                         MutableArrayRef<Tensor>, EvalContext &) {
  auto custom = cast<CustomOp>(op);
  return refuse(op, custom.getForward(), custom.getSource());
}

LogicalResult evalCustomBackward(Operation *op, ArrayRef<const Tensor *>,
                                 MutableArrayRef<Tensor>, EvalContext &) {
  auto backward = cast<CustomBackwardOp>(op);
  return refuse(op, backward.getBackward(), backward.getSource());
}

} // namespace

void registerCustomEvaluators(EvaluatorRegistry &registry) {
  registry.add<CustomOp>(evalCustom);
  registry.add<CustomBackwardOp>(evalCustomBackward);
}

} // namespace mlir::kiln::ref
