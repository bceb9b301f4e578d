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
  /// Per differentiated argument: max |autodiff - fd| / max(max |fd|, floor),
  /// where each difference first loses the finite difference's own rounding
  /// error (see kFiniteDifferenceUlps).
  std::vector<double> relativeErrors;
  double maxRelativeError = 0;
  /// Human-readable lines for failure messages.
  std::string details;
};

/// The f64 loss carries a few ulps of rounding from the ops that compute it;
/// divided by 2h they become the finite difference's noise floor,
/// kFiniteDifferenceUlps * eps * (|L(x + h)| + |L(x - h)|) / 2h. A difference
/// below it says nothing about the gradient (a loss of 30 with h = 1e-6 puts
/// the floor near 5e-8, where a small gradient's 1e-6 relative tolerance can
/// be 1e-9).
inline constexpr double kFiniteDifferenceUlps = 16;

/// Differentiates `function` (scalar loss first) with respect to `wrt`,
/// runs the gradient function on `inputs`, and compares each gradient element
/// with (L(x + h) - L(x - h)) / 2h where h = step * max(1, |x|).
FailureOr<GradientCheckReport>
checkGradients(func::FuncOp function, llvm::ArrayRef<ref::Tensor> inputs,
               llvm::ArrayRef<unsigned> wrt, double step = 1e-6);

} // namespace mlir::kiln

#endif // KILN_COMPILER_AUTODIFF_GRADIENTCHECK_H
