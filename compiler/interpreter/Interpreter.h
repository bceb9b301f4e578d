//===- Interpreter.h - the CPU reference executor of kiln IR -----*- C++
//-*-===//
//
// Runs a verified kiln function on the CPU, op by op in program order. Each op
// family registers an evaluator (a function from operand tensors to result
// tensors); the interpreter owns values, rounding and error reporting.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_INTERPRETER_INTERPRETER_H
#define KILN_COMPILER_INTERPRETER_INTERPRETER_H

#include "compiler/interpreter/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Operation.h"
#include "mlir/Support/TypeID.h"
#include "llvm/ADT/DenseMap.h"

#include <functional>
#include <vector>

namespace mlir::kiln::ref {

class Interpreter;

/// What an evaluator may use besides its operands.
struct EvalContext {
  Precision precision;
  Interpreter &interpreter;
};

/// Fills `results` (already shaped from the op's result types, zero-filled)
/// from `operands`. Returns failure after emitting a diagnostic on `op`.
using Evaluator = std::function<LogicalResult(
    Operation *op, llvm::ArrayRef<const Tensor *> operands,
    llvm::MutableArrayRef<Tensor> results, EvalContext &context)>;

/// Evaluators by op, filled once by each op family's register function.
class EvaluatorRegistry {
public:
  template <typename OpTy> void add(Evaluator evaluator) {
    evaluators[TypeID::get<OpTy>()] = std::move(evaluator);
  }
  const Evaluator *lookup(Operation *op) const;

  /// The registry with every family's evaluators.
  static const EvaluatorRegistry &global();

private:
  llvm::DenseMap<TypeID, Evaluator> evaluators;
};

// Registration hooks of the op families (one file each).
void registerElementwiseEvaluators(EvaluatorRegistry &registry);
void registerShapeEvaluators(EvaluatorRegistry &registry);
void registerNNEvaluators(EvaluatorRegistry &registry);
void registerSequenceEvaluators(EvaluatorRegistry &registry);
void registerCustomEvaluators(EvaluatorRegistry &registry);

class Interpreter {
public:
  explicit Interpreter(Precision precision) : precision(precision) {}

  /// Runs `function` on `inputs` (one per argument, matching its type) and
  /// returns its results. Mismatched inputs and op failures are reported as
  /// diagnostics on the function or op.
  FailureOr<std::vector<Tensor>> run(func::FuncOp function,
                                     llvm::ArrayRef<Tensor> inputs);

  /// Runs the single block of `region` with `arguments` bound to its block
  /// arguments and returns the operands of its terminator.
  FailureOr<std::vector<Tensor>>
  runRegion(Region &region, llvm::ArrayRef<const Tensor *> arguments);

  Precision getPrecision() const { return precision; }

private:
  Precision precision;
};

} // namespace mlir::kiln::ref

#endif // KILN_COMPILER_INTERPRETER_INTERPRETER_H
