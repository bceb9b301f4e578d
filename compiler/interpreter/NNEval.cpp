//===- NNEval.cpp - evaluators of neural-network ops and losses -----------===//

#include "compiler/interpreter/EvalUtils.h"

#include "dialects/kiln/IR/KilnDialect.h"

namespace mlir::kiln::ref {

void registerNNEvaluators(EvaluatorRegistry &registry) {}

} // namespace mlir::kiln::ref
