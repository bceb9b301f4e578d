//===- ReferenceCheckpoint.cpp - checkpoints of the CPU trainer -----------===//

#include "compiler/training/ReferenceCheckpoint.h"

#include "compiler/interpreter/HostTensors.h"
#include "runtime/io/checkpoint.h"

#include <map>

namespace mlir::kiln {
namespace io = ::kiln::io;

namespace {

llvm::Error errorOf(const absl::Status &status) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 std::string(status.message()));
}

} // namespace

llvm::Error saveCheckpoint(const ReferenceTrainer &trainer,
                           llvm::StringRef path) {
  io::Checkpoint checkpoint;
  checkpoint.step = trainer.stepCount();
  for (const auto &entry : trainer.state())
    checkpoint.tensors.emplace(entry.getKey().str(),
                               ref::toHostTensor(entry.getValue()));
  absl::Status written = io::WriteCheckpoint(path.str(), checkpoint);
  if (!written.ok())
    return errorOf(written);
  return llvm::Error::success();
}

llvm::Error restoreCheckpoint(ReferenceTrainer &trainer, llvm::StringRef path) {
  // By name, so that a file missing several tensors names the first.
  std::vector<io::TensorSpec> expected;
  std::map<std::string, const ref::Tensor *> state;
  for (const auto &entry : trainer.state())
    state.emplace(entry.getKey().str(), &entry.getValue());
  for (const auto &[name, tensor] : state)
    expected.push_back(
        {name, ref::fileDType(tensor->kind),
         std::vector<int64_t>(tensor->shape.begin(), tensor->shape.end())});
  absl::StatusOr<io::Checkpoint> checkpoint =
      io::ReadCheckpoint(path.str(), expected);
  if (!checkpoint.ok())
    return errorOf(checkpoint.status());
  for (auto &entry : trainer.mutableState())
    ref::fromHostTensor(checkpoint->tensors.at(entry.getKey().str()),
                        entry.getValue());
  trainer.setStepCount(checkpoint->step);
  return llvm::Error::success();
}

} // namespace mlir::kiln
