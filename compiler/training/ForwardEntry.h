//===- ForwardEntry.h - the inference entry ---------------------*- C++ -*-===//
//
// An inference artifact has one entry, `forward`: the loss function itself,
// with the roles of its arguments and results marked for the runtime, and
// every batch norm with running statistics in its eval form (what PyTorch's
// model.eval() does). The training entries' `forward` is made the same way.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_TRAINING_FORWARDENTRY_H
#define KILN_COMPILER_TRAINING_FORWARDENTRY_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::kiln {

/// Renames `function` to `forward` and marks the `kiln.role` of its arguments
/// (param, state, input) and results (output); see --kiln-make-forward.
LogicalResult buildForwardEntry(ModuleOp module, StringRef function);

/// The `kiln.role` of argument `index` of a loss-shaped function: "param"
/// (kiln.param), "state" (kiln.state) or "input".
StringRef argumentRole(func::FuncOp function, unsigned index);

/// Sets `eval` on every kiln.batch_norm of `function` that has running
/// statistics: it normalises with them and updates nothing.
void useRunningStatistics(func::FuncOp function);

#define GEN_PASS_DECL_KILNMAKEFORWARD
#include "compiler/training/Passes.h.inc"

} // namespace mlir::kiln

#endif // KILN_COMPILER_TRAINING_FORWARDENTRY_H
