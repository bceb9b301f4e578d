//===- SplitTrainStep.cpp - train_step with its gradients in memory -------===//

#include "codegen/distributed/SplitTrainStep.h"

#include "compiler/transforms/MemoryPlan.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::kiln::codegen {

namespace {

CompiledEntry *findEntry(CompiledModule &compiled, StringRef name) {
  for (CompiledEntry &entry : compiled.entries)
    if (entry.name == name)
      return &entry;
  return nullptr;
}

const TensorRef *findBinding(const std::vector<TensorRef> &bindings,
                             StringRef name) {
  for (const TensorRef &t : bindings)
    if (t.name == name)
      return &t;
  return nullptr;
}

bool hasSlot(LaunchArg::Kind kind) {
  return kind == LaunchArg::Kind::Operand || kind == LaunchArg::Kind::Result ||
         kind == LaunchArg::Kind::Scratch || kind == LaunchArg::Kind::TensorMap;
}

} // namespace

LogicalResult splitTrainStep(CompiledModule &compiled, ModuleOp module) {
  CompiledEntry *step = findEntry(compiled, "train_step");
  if (!step)
    return success();
  auto function = module.lookupSymbol<func::FuncOp>("train_step");
  CompiledEntry *backward = findEntry(compiled, "forward_backward");
  CompiledEntry *update = findEntry(compiled, "apply_update");
  if (!backward || !update)
    return module.emitError("data parallel: train_step needs the entries "
                            "forward_backward and apply_update");
  // apply_update's arena starts after forward_backward's, so that what
  // forward_backward leaves there for the caller (the loss) survives.
  const uint64_t shift = (backward->arenaBytes + kArenaAlignment - 1) /
                         kArenaAlignment * kArenaAlignment;
  auto shifted = [&](SlotRef slot) {
    if (!slot.resident)
      slot.offset += shift;
    return slot;
  };

  CompiledEntry split;
  split.name = step->name;
  split.arenaBytes = shift + update->arenaBytes;
  split.launches = backward->launches;
  for (CompiledLaunch launch : update->launches) {
    for (CompiledArg &arg : launch.args)
      if (hasSlot(arg.kind))
        arg.slot = shifted(arg.slot);
    split.launches.push_back(std::move(launch));
  }
  for (const TensorRef &input : step->inputs) {
    const TensorRef *first = findBinding(backward->inputs, input.name);
    const TensorRef *second = findBinding(update->inputs, input.name);
    if (first && second && !first->slot.resident && !second->slot.resident)
      return function.emitOpError("data parallel: input '")
             << input.name
             << "' is read from the arena by both forward_backward and "
                "apply_update";
    if (!first && !second)
      return function.emitOpError("data parallel: input '")
             << input.name
             << "' is neither forward_backward's nor apply_update's";
    TensorRef bound = input;
    bound.slot = first ? first->slot : shifted(second->slot);
    split.inputs.push_back(std::move(bound));
  }
  for (const TensorRef &output : step->outputs) {
    // The update's outputs (parameters, optimizer state, statistics) are
    // its own; the loss and the updated model state are the backward's.
    const TensorRef *second = findBinding(update->outputs, output.name);
    const TensorRef *first = findBinding(backward->outputs, output.name);
    if (!first && !second)
      return function.emitOpError("data parallel: output '")
             << output.name
             << "' is neither forward_backward's nor apply_update's";
    TensorRef bound = output;
    bound.slot = second ? shifted(second->slot) : first->slot;
    split.outputs.push_back(std::move(bound));
  }
  *step = std::move(split);
  return success();
}

} // namespace mlir::kiln::codegen
