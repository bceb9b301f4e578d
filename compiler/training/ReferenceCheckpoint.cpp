//===- ReferenceCheckpoint.cpp - checkpoints of the CPU trainer -----------===//

#include "compiler/training/ReferenceCheckpoint.h"

#include "kiln/dtype.h"
#include "runtime/io/checkpoint.h"

#include <cstring>
#include <map>

namespace mlir::kiln {
namespace io = ::kiln::io;

namespace {

io::DType dtypeOf(ref::ElementKind kind) {
  switch (kind) {
  case ref::ElementKind::F32:
    return io::DType::kF32;
  case ref::ElementKind::BF16:
    return io::DType::kBF16;
  case ref::ElementKind::F16:
    return io::DType::kF16;
  case ref::ElementKind::I32:
    return io::DType::kI32;
  case ref::ElementKind::I1:
    return io::DType::kI1;
  }
  llvm_unreachable("unknown element kind");
}

/// `tensor` in its storage type (floats to nearest even; bf16 and f16
/// through f32, exact for values the trainer has rounded to them).
io::HostTensor toHost(const ref::Tensor &tensor) {
  io::HostTensor host;
  host.dtype = dtypeOf(tensor.kind);
  host.shape.assign(tensor.shape.begin(), tensor.shape.end());
  host.data.resize(tensor.data.size() * ::kiln::DTypeSize(host.dtype));
  uint8_t *bytes = host.data.data();
  for (size_t i = 0; i < tensor.data.size(); ++i) {
    const double value = tensor.data[i];
    switch (tensor.kind) {
    case ref::ElementKind::F32: {
      float f = static_cast<float>(value);
      std::memcpy(bytes + 4 * i, &f, 4);
      break;
    }
    case ref::ElementKind::BF16:
    case ref::ElementKind::F16: {
      float f = static_cast<float>(value);
      uint16_t bits = tensor.kind == ref::ElementKind::BF16
                          ? ::kiln::F32ToBf16(f)
                          : ::kiln::F32ToF16(f);
      std::memcpy(bytes + 2 * i, &bits, 2);
      break;
    }
    case ref::ElementKind::I32: {
      int32_t v = static_cast<int32_t>(value);
      std::memcpy(bytes + 4 * i, &v, 4);
      break;
    }
    case ref::ElementKind::I1:
      bytes[i] = value != 0;
      break;
    }
  }
  return host;
}

/// The values of `host` (already checked to have `tensor`'s dtype and
/// shape) into `tensor`.
void fromHost(const io::HostTensor &host, ref::Tensor &tensor) {
  const uint8_t *bytes = host.data.data();
  for (size_t i = 0; i < tensor.data.size(); ++i) {
    double &value = tensor.data[i];
    switch (tensor.kind) {
    case ref::ElementKind::F32: {
      float f;
      std::memcpy(&f, bytes + 4 * i, 4);
      value = f;
      break;
    }
    case ref::ElementKind::BF16:
    case ref::ElementKind::F16: {
      uint16_t bits;
      std::memcpy(&bits, bytes + 2 * i, 2);
      value = tensor.kind == ref::ElementKind::BF16 ? ::kiln::Bf16ToF32(bits)
                                                    : ::kiln::F16ToF32(bits);
      break;
    }
    case ref::ElementKind::I32: {
      int32_t v;
      std::memcpy(&v, bytes + 4 * i, 4);
      value = v;
      break;
    }
    case ref::ElementKind::I1:
      value = bytes[i] != 0;
      break;
    }
  }
}

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
    checkpoint.tensors.emplace(entry.getKey().str(), toHost(entry.getValue()));
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
  for (const auto &[name, tensor] : state) {
    expected.push_back({name, dtypeOf(tensor->kind),
                        std::vector<int64_t>(tensor->shape.begin(),
                                             tensor->shape.end())});
  }
  absl::StatusOr<io::Checkpoint> checkpoint =
      io::ReadCheckpoint(path.str(), expected);
  if (!checkpoint.ok())
    return errorOf(checkpoint.status());
  for (auto &entry : trainer.mutableState())
    fromHost(checkpoint->tensors.at(entry.getKey().str()), entry.getValue());
  trainer.setStepCount(checkpoint->step);
  return llvm::Error::success();
}

} // namespace mlir::kiln
