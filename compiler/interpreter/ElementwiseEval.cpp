//===- ElementwiseEval.cpp - evaluators of constants and elementwise ops --===//

#include "compiler/interpreter/EvalUtils.h"

#include "dialects/kiln/IR/KilnDialect.h"

#include <cmath>

namespace mlir::kiln::ref {

void registerElementwiseEvaluators(EvaluatorRegistry &registry) {
  registry.add<ExpOp>(unaryEvaluator([](double x) { return std::exp(x); }));
  registry.add<AddOp>(binaryEvaluator([](double a, double b) { return a + b; }));
}

} // namespace mlir::kiln::ref
