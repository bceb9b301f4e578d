//===- ReferenceTrainer.h - training on the CPU reference --------*- C++
//-*-===//
//
// Holds parameters and optimizer state on the host and runs the training
// entries (see TrainStep.h) with the reference interpreter: the CPU oracle a
// GPU training run is checked against, and the trainer used where there is no
// GPU. Arguments and results are bound by their kiln.role and kiln.name.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_TRAINING_REFERENCETRAINER_H
#define KILN_COMPILER_TRAINING_REFERENCETRAINER_H

#include "compiler/interpreter/Interpreter.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"

#include <memory>

namespace mlir::kiln {

using NamedTensors = llvm::StringMap<ref::Tensor>;

class ReferenceTrainer {
public:
  /// `module` holds forward, forward_backward, apply_update and train_step.
  /// Parameters and model state (kiln.state) start from their initialisers
  /// under `seed`; optimizer state starts at zero and master weights at the
  /// f32 initial values.
  static FailureOr<std::unique_ptr<ReferenceTrainer>>
  create(ModuleOp module, uint64_t seed, ref::Precision precision);

  /// One train_step on `inputs` (by name) at `learningRate`; returns the loss.
  FailureOr<double> step(const NamedTensors &inputs, double learningRate);
  /// The loss of `forward` on `inputs` with the current parameters.
  FailureOr<double> evaluate(const NamedTensors &inputs);
  /// forward_backward: the loss, and the gradients by parameter name.
  FailureOr<double> forwardBackward(const NamedTensors &inputs,
                                    NamedTensors &gradients);
  /// apply_update with `gradients` by parameter name (possibly edited).
  LogicalResult applyUpdate(const NamedTensors &gradients, double learningRate);

  /// Parameters, model state, master weights and optimizer state by name.
  const NamedTensors &state() const { return values; }
  NamedTensors &mutableState() { return values; }
  /// Gradient statistics of the last update (global norm, max |g|,
  /// non-finite count), when the entries were built with statistics.
  llvm::ArrayRef<double> lastStatistics() const { return statistics; }
  /// Updates applied so far.
  int64_t stepCount() const { return steps; }
  void setStepCount(int64_t count) { steps = count; }

private:
  ReferenceTrainer(ModuleOp module, ref::Precision precision)
      : module(module), interpreter(precision) {}

  /// Runs entry `name`, binding arguments by role and name from `inputs`
  /// (inputs and gradients), the trainer's state, `learningRate` and the
  /// step; writes updated state back and returns the results by role.
  LogicalResult run(llvm::StringRef name, const NamedTensors &inputs,
                    double learningRate, double *loss, NamedTensors *outputs);

  ModuleOp module;
  ref::Interpreter interpreter;
  NamedTensors values;
  std::vector<double> statistics;
  int64_t steps = 0;
};

} // namespace mlir::kiln

#endif // KILN_COMPILER_TRAINING_REFERENCETRAINER_H
