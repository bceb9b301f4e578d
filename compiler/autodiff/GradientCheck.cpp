//===- GradientCheck.cpp - autodiff against finite differences ------------===//

#include "compiler/autodiff/GradientCheck.h"

#include "compiler/autodiff/Autodiff.h"
#include "compiler/interpreter/Interpreter.h"

#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <limits>

namespace mlir::kiln {

FailureOr<GradientCheckReport>
checkGradients(func::FuncOp function, llvm::ArrayRef<ref::Tensor> inputs,
               llvm::ArrayRef<unsigned> wrt, double step) {
  std::string name = (function.getSymName() + "_gradcheck").str();
  FailureOr<func::FuncOp> gradient = buildGradientFunction(function, wrt, name);
  if (failed(gradient))
    return failure();
  ref::Interpreter interpreter(ref::Precision::F64);
  FailureOr<std::vector<ref::Tensor>> analytic =
      interpreter.run(*gradient, inputs);
  gradient->erase();
  if (failed(analytic))
    return failure();

  auto lossAt = [&](std::vector<ref::Tensor> &values) -> FailureOr<double> {
    FailureOr<std::vector<ref::Tensor>> out = interpreter.run(function, values);
    if (failed(out))
      return failure();
    return (*out)[0].data[0];
  };

  GradientCheckReport report;
  llvm::raw_string_ostream details(report.details);
  std::vector<ref::Tensor> values(inputs.begin(), inputs.end());
  for (auto [position, index] : llvm::enumerate(wrt)) {
    const ref::Tensor &grad = (*analytic)[position + 1];
    ref::Tensor &x = values[index];
    double maxDiff = 0, maxFd = 0;
    int64_t worst = -1;
    std::vector<double> numeric(x.data.size());
    for (size_t i = 0; i < x.data.size(); ++i) {
      double original = x.data[i];
      double h = step * std::max(1.0, std::abs(original));
      x.data[i] = original + h;
      FailureOr<double> plus = lossAt(values);
      x.data[i] = original - h;
      FailureOr<double> minus = lossAt(values);
      x.data[i] = original;
      if (failed(plus) || failed(minus))
        return failure();
      numeric[i] = (*plus - *minus) / (2 * h);
      maxFd = std::max(maxFd, std::abs(numeric[i]));
      double noise = kFiniteDifferenceUlps *
                     std::numeric_limits<double>::epsilon() *
                     (std::abs(*plus) + std::abs(*minus)) / (2 * h);
      double diff = std::abs(numeric[i] - grad.data[i]) - noise;
      if (diff < 0) // keeps NaN
        diff = 0;
      if (!(diff <= maxDiff)) { // NaN counts as the worst
        maxDiff = diff;
        worst = static_cast<int64_t>(i);
      }
    }
    double error = maxDiff / std::max(maxFd, 1e-8);
    if (std::isnan(maxDiff))
      error = INFINITY;
    report.relativeErrors.push_back(error);
    report.maxRelativeError = std::max(report.maxRelativeError, error);
    details << "argument " << index << " (" << argumentName(function, index)
            << "): relative error " << error;
    if (worst >= 0)
      details << ", worst element " << worst << ": autodiff "
              << grad.data[worst] << " vs finite difference " << numeric[worst];
    details << "\n";
  }
  return report;
}

} // namespace mlir::kiln
