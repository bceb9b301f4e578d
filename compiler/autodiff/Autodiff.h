//===- Autodiff.h - symbolic reverse-mode differentiation --------*- C++
//-*-===//

#ifndef KILN_COMPILER_AUTODIFF_AUTODIFF_H
#define KILN_COMPILER_AUTODIFF_AUTODIFF_H

#include "dialects/kiln/IR/KilnNaming.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

#include <memory>

namespace mlir::kiln {

/// Adds, next to `function`, a function named `gradientName` returning the
/// loss (result 0 of `function`, a rank-0 float tensor) and the gradient of
/// each argument in `wrt` (positions, ascending). Gradients of arguments the
/// loss does not depend on are zeros. Errors are emitted on the offending op.
/// With `seedArgument` the gradient function takes one more argument, last,
/// of the loss's type: the gradient of the loss that the backward starts from
/// (1 otherwise), e.g. a loss scale.
FailureOr<func::FuncOp> buildGradientFunction(func::FuncOp function,
                                              ArrayRef<unsigned> wrt,
                                              StringRef gradientName,
                                              bool seedArgument = false);

/// Positions of the `kiln.param` arguments of `function`.
SmallVector<unsigned> parameterPositions(func::FuncOp function);

#define GEN_PASS_DECL_KILNAUTODIFF
#include "compiler/autodiff/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/autodiff/Passes.h.inc"

} // namespace mlir::kiln

#endif // KILN_COMPILER_AUTODIFF_AUTODIFF_H
