//===- Tensor.cpp - host tensors of the reference interpreter -------------===//

#include "compiler/interpreter/Tensor.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>
#include <limits>

#include <unistd.h>

namespace mlir::kiln::ref {

std::optional<ElementKind> elementKindOf(Type type) {
  if (type.isF32())
    return ElementKind::F32;
  if (type.isBF16())
    return ElementKind::BF16;
  if (type.isF16())
    return ElementKind::F16;
  if (type.isInteger(32))
    return ElementKind::I32;
  if (type.isInteger(1))
    return ElementKind::I1;
  return std::nullopt;
}

llvm::StringRef elementKindName(ElementKind kind) {
  switch (kind) {
  case ElementKind::F32:
    return "f32";
  case ElementKind::BF16:
    return "bf16";
  case ElementKind::F16:
    return "f16";
  case ElementKind::I32:
    return "i32";
  case ElementKind::I1:
    return "i1";
  }
  return "?";
}

bool isFloatKind(ElementKind kind) {
  return kind == ElementKind::F32 || kind == ElementKind::BF16 ||
         kind == ElementKind::F16;
}

/// Rounds through f32 first, as a GPU computing in f32 would before storing
/// a narrower type.
static double roundThroughFloat(double value,
                                const llvm::fltSemantics &semantics) {
  llvm::APFloat number(static_cast<float>(value));
  bool losesInfo = false;
  number.convert(semantics, llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  number.convert(llvm::APFloat::IEEEdouble(),
                 llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  return number.convertToDouble();
}

/// bf16 rounding on the bits of the f32 value (round to nearest even, NaN
/// stays NaN): the same result as APFloat's conversion, without its cost on
/// every stored element of a bf16 training step.
static double roundThroughFloatToBF16(double value) {
  float single = static_cast<float>(value);
  if (std::isnan(single))
    return value;
  uint32_t bits;
  std::memcpy(&bits, &single, sizeof(bits));
  bits += 0x7fffu + ((bits >> 16) & 1u);
  bits &= 0xffff0000u;
  std::memcpy(&single, &bits, sizeof(single));
  return single;
}

double roundToStorage(double value, ElementKind kind, Precision precision) {
  switch (kind) {
  case ElementKind::I32:
    if (std::isnan(value))
      return 0;
    return std::trunc(std::fmax(std::fmin(value, 2147483647.0), -2147483648.0));
  case ElementKind::I1:
    return value != 0 ? 1 : 0;
  case ElementKind::F32:
    return precision == Precision::F64
               ? value
               : static_cast<double>(static_cast<float>(value));
  case ElementKind::BF16:
    return precision == Precision::F64 ? value : roundThroughFloatToBF16(value);
  case ElementKind::F16:
    return precision == Precision::F64
               ? value
               : roundThroughFloat(value, llvm::APFloat::IEEEhalf());
  }
  return value;
}

uint64_t hostBytesOf(RankedTensorType type) {
  uint64_t bytes = sizeof(double);
  for (int64_t dim : type.getShape())
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(dim), &bytes))
      return UINT64_MAX;
  return bytes;
}

uint64_t hostMemoryBytes() {
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || pageSize <= 0)
    return 0;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(pageSize);
}

Tensor Tensor::ofType(RankedTensorType type) {
  return Tensor(type.getShape(), *elementKindOf(type.getElementType()));
}

Shape rowMajorStrides(llvm::ArrayRef<int64_t> shape) {
  Shape strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;)
    strides[d - 1] = strides[d] * shape[d];
  return strides;
}

Shape unflatIndex(llvm::ArrayRef<int64_t> shape, int64_t flat) {
  Shape index(shape.size(), 0);
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return index;
}

std::optional<int64_t> readI64AsI32(const uint8_t *bytes, int64_t count,
                                    double *out) {
  for (int64_t i = 0; i < count; ++i) {
    int64_t value;
    std::memcpy(&value, bytes + 8 * i, 8);
    if (value < std::numeric_limits<int32_t>::min() ||
        value > std::numeric_limits<int32_t>::max())
      return i;
    out[i] = double(value);
  }
  return std::nullopt;
}

Shape Tensor::strides() const { return rowMajorStrides(shape); }

std::string Tensor::typeString() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "tensor<";
  for (int64_t d : shape)
    os << d << 'x';
  os << elementKindName(kind) << '>';
  return text;
}

Shape broadcastStrides(llvm::ArrayRef<int64_t> from,
                       llvm::ArrayRef<int64_t> to) {
  Shape own = rowMajorStrides(from);
  Shape result(to.size(), 0);
  size_t offset = to.size() - from.size();
  for (size_t d = 0; d < from.size(); ++d)
    result[offset + d] = from[d] == 1 && to[offset + d] != 1 ? 0 : own[d];
  return result;
}

} // namespace mlir::kiln::ref
