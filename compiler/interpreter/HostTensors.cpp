//===- HostTensors.cpp - interpreter tensors as file tensors --------------===//

#include "compiler/interpreter/HostTensors.h"

#include "kiln/dtype.h"

#include <cstring>

namespace mlir::kiln::ref {
namespace io = ::kiln::io;

::kiln::DType fileDType(ElementKind kind) {
  switch (kind) {
  case ElementKind::F32:
    return io::DType::kF32;
  case ElementKind::BF16:
    return io::DType::kBF16;
  case ElementKind::F16:
    return io::DType::kF16;
  case ElementKind::I32:
    return io::DType::kI32;
  case ElementKind::I1:
    return io::DType::kI1;
  }
  llvm_unreachable("unknown element kind");
}

io::HostTensor toHostTensor(const Tensor &tensor) {
  io::HostTensor host;
  host.dtype = fileDType(tensor.kind);
  host.shape.assign(tensor.shape.begin(), tensor.shape.end());
  host.data.resize(tensor.data.size() * ::kiln::DTypeSize(host.dtype));
  uint8_t *bytes = host.data.data();
  for (size_t i = 0; i < tensor.data.size(); ++i) {
    const double value = tensor.data[i];
    switch (tensor.kind) {
    case ElementKind::F32: {
      float f = static_cast<float>(value);
      std::memcpy(bytes + 4 * i, &f, 4);
      break;
    }
    case ElementKind::BF16:
    case ElementKind::F16: {
      float f = static_cast<float>(value);
      uint16_t bits = tensor.kind == ElementKind::BF16 ? ::kiln::F32ToBf16(f)
                                                       : ::kiln::F32ToF16(f);
      std::memcpy(bytes + 2 * i, &bits, 2);
      break;
    }
    case ElementKind::I32: {
      int32_t v = static_cast<int32_t>(value);
      std::memcpy(bytes + 4 * i, &v, 4);
      break;
    }
    case ElementKind::I1:
      bytes[i] = value != 0;
      break;
    }
  }
  return host;
}

void fromHostTensor(const io::HostTensor &host, Tensor &tensor) {
  const uint8_t *bytes = host.data.data();
  for (size_t i = 0; i < tensor.data.size(); ++i) {
    double &value = tensor.data[i];
    switch (tensor.kind) {
    case ElementKind::F32: {
      float f;
      std::memcpy(&f, bytes + 4 * i, 4);
      value = f;
      break;
    }
    case ElementKind::BF16:
    case ElementKind::F16: {
      uint16_t bits;
      std::memcpy(&bits, bytes + 2 * i, 2);
      value = tensor.kind == ElementKind::BF16 ? ::kiln::Bf16ToF32(bits)
                                               : ::kiln::F16ToF32(bits);
      break;
    }
    case ElementKind::I32: {
      int32_t v;
      std::memcpy(&v, bytes + 4 * i, 4);
      value = v;
      break;
    }
    case ElementKind::I1:
      value = bytes[i] != 0;
      break;
    }
  }
}

} // namespace mlir::kiln::ref
