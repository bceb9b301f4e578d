//===- SequenceEval.cpp - evaluators of attention, rnn and fusion ---------===//

#include "compiler/interpreter/EvalUtils.h"

#include "dialects/kiln/IR/KilnDialect.h"

namespace mlir::kiln::ref {

void registerSequenceEvaluators(EvaluatorRegistry &registry) {}

} // namespace mlir::kiln::ref
