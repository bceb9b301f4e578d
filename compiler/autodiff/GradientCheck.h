//===- GradientCheck.h - autodiff against finite differences ----*- C++ -*-===//
//
// Compares the gradients the autodiff pass builds with central finite
// differences, both evaluated by the reference interpreter in f64.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_AUTODIFF_GRADIENTCHECK_H
#define KILN_COMPILER_AUTODIFF_GRADIENTCHECK_H

#include "compiler/interpreter/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>
#include <vector>

namespace mlir::kiln {

struct GradientCheckReport {
  /// Per differentiated argument: max |autodiff - fd| / max(max |fd|, floor).
  std::vector<double> relativeErrors;
  double maxRelativeError = 0;
  /// Human-readable lines for failure messages.
  std::string details;
};

/// Differentiates `function` (scalar loss first) with respect to `wrt`,
/// runs the gradient function on `inputs`, and compares each gradient element
/// with (L(x + h) - L(x - h)) / 2h where h = step * max(1, |x|).
FailureOr<GradientCheckReport>
checkGradients(func::FuncOp function, llvm::ArrayRef<ref::Tensor> inputs,
               llvm::ArrayRef<unsigned> wrt, double step = 1e-6);

} // namespace mlir::kiln

#endif // KILN_COMPILER_AUTODIFF_GRADIENTCHECK_H
