//===- ReferenceTrainer.cpp - training on the CPU reference ---------------===//

#include "compiler/training/ReferenceTrainer.h"

#include "compiler/interpreter/Initializers.h"
#include "dialects/kiln/IR/KilnDialect.h"
#include "dialects/kiln/IR/KilnNaming.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::kiln {

FailureOr<std::unique_ptr<ReferenceTrainer>>
ReferenceTrainer::create(ModuleOp module, uint64_t seed,
                         ref::Precision precision) {
  for (StringRef entry :
       {"forward", "forward_backward", "apply_update", "train_step"})
    if (!module.lookupSymbol<func::FuncOp>(entry))
      return module.emitError("the reference trainer needs the entry '")
                 << entry << "' (run --kiln-make-train-step)",
             failure();
  std::unique_ptr<ReferenceTrainer> trainer(
      new ReferenceTrainer(module, precision));

  // Parameters and model state from their values (an imported model's
  // weights) or initialisers, streams by position in forward.
  auto forward = module.lookupSymbol<func::FuncOp>("forward");
  llvm::StringMap<std::vector<double>> initial;
  for (unsigned i = 0, e = forward.getNumArguments(); i < e; ++i) {
    if (forward.getArgAttr(i, KilnDialect::kParamAttrName) ||
        forward.getArgAttr(i, KilnDialect::kStateAttrName))
      initial[argumentName(forward, i)] =
          *ref::startingValues(forward, i, seed);
  }
  // State buffers come from train_step's signature.
  auto trainStep = module.lookupSymbol<func::FuncOp>("train_step");
  for (unsigned i = 0, e = trainStep.getNumArguments(); i < e; ++i) {
    DictionaryAttr attrs = trainStep.getArgAttrDict(i);
    StringRef role = stringEntry(attrs, KilnDialect::kRoleAttrName);
    StringRef name = stringEntry(attrs, KilnDialect::kNameAttrName);
    ref::Tensor tensor = ref::Tensor::ofType(
        cast<RankedTensorType>(trainStep.getArgumentTypes()[i]));
    if (role == "param" || role == "master_weight" || role == "state") {
      StringRef paramName = role == "master_weight"
                                ? name.drop_front(strlen("master."))
                                : name;
      auto it = initial.find(paramName);
      if (it == initial.end())
        return trainStep.emitOpError("no initialiser for '") << name << "'",
               failure();
      for (size_t k = 0; k < tensor.data.size(); ++k)
        tensor.data[k] =
            ref::roundToStorage(it->second[k], tensor.kind, precision);
    } else if (role != "optimizer_state") {
      continue;
    }
    trainer->values[name] = std::move(tensor);
  }
  return trainer;
}

LogicalResult ReferenceTrainer::run(StringRef name, const NamedTensors &inputs,
                                    double learningRate, double *loss,
                                    NamedTensors *outputs) {
  auto function = module.lookupSymbol<func::FuncOp>(name);
  std::vector<ref::Tensor> arguments;
  for (unsigned i = 0, e = function.getNumArguments(); i < e; ++i) {
    DictionaryAttr attrs = function.getArgAttrDict(i);
    StringRef role = stringEntry(attrs, KilnDialect::kRoleAttrName);
    StringRef argName = stringEntry(attrs, KilnDialect::kNameAttrName);
    auto type = cast<RankedTensorType>(function.getArgumentTypes()[i]);
    if (role == "learning_rate" || role == "step") {
      ref::Tensor scalar = ref::Tensor::ofType(type);
      scalar.data[0] = role == "step"
                           ? double(steps + 1)
                           : ref::roundToStorage(learningRate, scalar.kind,
                                                 interpreter.getPrecision());
      arguments.push_back(std::move(scalar));
      continue;
    }
    // A resident constant (kiln-resident-constants) carries its values.
    if (auto value = function.getArgAttrOfType<DenseElementsAttr>(
            i, KilnDialect::kValueAttrName);
        value && role == "constant") {
      ref::Tensor constant = ref::Tensor::ofType(type);
      constant.data = ref::valuesOf(value);
      arguments.push_back(std::move(constant));
      continue;
    }
    const NamedTensors &source =
        (role == "input" || role == "gradient") ? inputs : values;
    auto it = source.find(argName);
    if (it == source.end())
      return function.emitOpError("missing ")
             << (role.empty() ? StringRef("argument") : role) << " '" << argName
             << "'";
    arguments.push_back(it->second);
  }
  FailureOr<std::vector<ref::Tensor>> results =
      interpreter.run(function, arguments);
  if (failed(results))
    return failure();
  std::vector<double> newStatistics;
  for (unsigned i = 0, e = function.getNumResults(); i < e; ++i) {
    DictionaryAttr attrs = function.getResultAttrDict(i);
    StringRef role = stringEntry(attrs, KilnDialect::kRoleAttrName);
    StringRef resultName = stringEntry(attrs, KilnDialect::kNameAttrName);
    ref::Tensor &result = (*results)[i];
    if (role == "loss" && loss)
      *loss = result.data[0];
    else if (attrs && attrs.get(KilnDialect::kUpdatesAttrName))
      values[resultName] = std::move(result);
    else if (role == "statistic")
      newStatistics.push_back(result.data[0]);
    else if (outputs)
      (*outputs)[resultName] = std::move(result);
  }
  if (!newStatistics.empty())
    statistics = std::move(newStatistics);
  return success();
}

FailureOr<double> ReferenceTrainer::step(const NamedTensors &inputs,
                                         double learningRate) {
  double loss = 0;
  if (failed(run("train_step", inputs, learningRate, &loss, nullptr)))
    return failure();
  ++steps;
  return loss;
}

FailureOr<double> ReferenceTrainer::evaluate(const NamedTensors &inputs) {
  double loss = 0;
  if (failed(run("forward", inputs, 0.0, &loss, nullptr)))
    return failure();
  return loss;
}

FailureOr<double> ReferenceTrainer::forwardBackward(const NamedTensors &inputs,
                                                    NamedTensors &gradients) {
  double loss = 0;
  NamedTensors outputs;
  if (failed(run("forward_backward", inputs, 0.0, &loss, &outputs)))
    return failure();
  gradients = std::move(outputs);
  return loss;
}

LogicalResult ReferenceTrainer::applyUpdate(const NamedTensors &gradients,
                                            double learningRate) {
  if (failed(run("apply_update", gradients, learningRate, nullptr, nullptr)))
    return failure();
  ++steps;
  return success();
}

} // namespace mlir::kiln
