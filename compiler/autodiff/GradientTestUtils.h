//===- GradientTestUtils.h - fixture for gradient-check tests ----*- C++
//-*-===//
//
// Parses a loss function, draws fresh random inputs from its argument types,
// and checks its gradients against finite differences:
//
//   EXPECT_GRADIENTS_MATCH(R"mlir(func.func @loss(...) -> tensor<f32>
//   {...})mlir",
//                          /*wrt=*/{0, 1});
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_AUTODIFF_GRADIENTTESTUTILS_H
#define KILN_COMPILER_AUTODIFF_GRADIENTTESTUTILS_H

#include "compiler/autodiff/GradientCheck.h"
#include "compiler/testing/KilnTestContext.h"

#include "dialects/kiln/Gradients/GradientUtils.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <random>

namespace mlir::kiln {

/// How to draw the inputs of one gradient check.
struct InputSpec {
  /// Floats are uniform in [low, high] (keep away from kinks and poles).
  double low = -1.5, high = 1.5;
  /// Integer arguments are uniform in [0, intBound).
  int64_t intBound = 4;
  /// Per-argument overrides: argument index -> (low, high).
  std::map<unsigned, std::pair<double, double>> ranges;
};

class GradientCheckTest : public ::testing::Test, protected KilnTestContext {
protected:
  /// Parses `source` and checks the gradients of its first function with
  /// respect to `wrt` against central finite differences (relative error
  /// below `tolerance`), on fresh random inputs.
  void expectGradientsMatch(llvm::StringRef source, std::vector<unsigned> wrt,
                            const InputSpec &spec = {},
                            double tolerance = 1e-6) {
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(source, &context);
    ASSERT_TRUE(module) << diagnostics;
    func::FuncOp function = *module->getOps<func::FuncOp>().begin();
    std::vector<ref::Tensor> inputs;
    for (auto [index, type] : llvm::enumerate(function.getArgumentTypes())) {
      ref::Tensor t = ref::Tensor::ofType(cast<RankedTensorType>(type));
      auto [low, high] = spec.ranges.count(index)
                             ? spec.ranges.at(index)
                             : std::make_pair(spec.low, spec.high);
      std::uniform_real_distribution<double> real(low, high);
      std::uniform_int_distribution<int64_t> integer(0, spec.intBound - 1);
      for (double &x : t.data)
        x = ref::isFloatKind(t.kind) ? real(rng) : double(integer(rng));
      inputs.push_back(std::move(t));
    }
    FailureOr<GradientCheckReport> report =
        checkGradients(function, inputs, wrt);
    ASSERT_TRUE(succeeded(report)) << diagnostics;
    EXPECT_LT(report->maxRelativeError, tolerance)
        << report->details << "inputs drawn with seed " << seed
        << " (rerun with KILN_GRADIENT_TEST_SEED=" << seed << ")";
  }

  /// Fresh inputs on every run; KILN_GRADIENT_TEST_SEED replays a failure.
  static uint64_t drawSeed() {
    if (const char *fixed = std::getenv("KILN_GRADIENT_TEST_SEED"))
      return std::strtoull(fixed, nullptr, 10);
    return std::random_device{}();
  }

  uint64_t seed = drawSeed();
  std::mt19937_64 rng{seed};
};

} // namespace mlir::kiln

#endif // KILN_COMPILER_AUTODIFF_GRADIENTTESTUTILS_H
