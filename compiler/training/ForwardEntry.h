//===- ForwardEntry.h - the inference entry ---------------------*- C++ -*-===//
//
// An inference artifact has one entry, `forward`: the loss function itself,
// with the roles of its arguments and results marked for the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_TRAINING_FORWARDENTRY_H
#define KILN_COMPILER_TRAINING_FORWARDENTRY_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::kiln {

/// Renames `function` to `forward` and marks the `kiln.role` of its arguments
/// (param, input) and results (output); see --kiln-make-forward.
LogicalResult buildForwardEntry(ModuleOp module, StringRef function);

#define GEN_PASS_DECL_KILNMAKEFORWARD
#include "compiler/training/Passes.h.inc"

} // namespace mlir::kiln

#endif // KILN_COMPILER_TRAINING_FORWARDENTRY_H
