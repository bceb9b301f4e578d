//===- SequenceEval.h - evaluators of attention, rnn and fusion --*- C++
//-*-===//
//
// registerSequenceEvaluators (Interpreter.h) registers the family's
// evaluators, which live in one file per op group.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_INTERPRETER_SEQUENCEEVAL_H
#define KILN_COMPILER_INTERPRETER_SEQUENCEEVAL_H

#include "compiler/interpreter/Interpreter.h"

namespace mlir::kiln::ref {

/// kiln.attention and kiln.attention_backward (AttentionEval.cpp).
void registerAttentionEvaluators(EvaluatorRegistry &registry);
/// kiln.rnn and kiln.rnn_backward (RnnEval.cpp).
void registerRnnEvaluators(EvaluatorRegistry &registry);

} // namespace mlir::kiln::ref

#endif // KILN_COMPILER_INTERPRETER_SEQUENCEEVAL_H
