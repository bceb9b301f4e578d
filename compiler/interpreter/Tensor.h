//===- Tensor.h - host tensors of the reference interpreter ------*- C++
//-*-===//
//
// A dense row-major tensor whose elements are held as doubles whatever their
// kiln element type (i32 and i1 values are exact in a double). The element
// type still matters: in f32 mode every op's results are rounded to it.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_INTERPRETER_TENSOR_H
#define KILN_COMPILER_INTERPRETER_TENSOR_H

#include "dialects/kiln/Utils/ShapeInference.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::kiln::ref {

enum class ElementKind { F32, BF16, F16, I32, I1 };

/// The kind of an MLIR element type, or nullopt for types kiln does not use.
std::optional<ElementKind> elementKindOf(Type type);
/// "f32", "bf16", "f16", "i32" or "i1".
llvm::StringRef elementKindName(ElementKind kind);
bool isFloatKind(ElementKind kind);

/// How results are kept: F64 keeps every value exact in double (the oracle);
/// F32 rounds each op's results to their storage type (f32, bf16 or f16, to
/// nearest even) as the GPU stores them.
enum class Precision { F64, F32 };

/// Rounds `value` to what an element of `kind` can hold under `precision`:
/// floats as above, integers truncated toward zero, i1 to 0 or 1.
double roundToStorage(double value, ElementKind kind, Precision precision);

struct Tensor {
  Shape shape;
  ElementKind kind = ElementKind::F32;
  std::vector<double> data;

  Tensor() = default;
  Tensor(llvm::ArrayRef<int64_t> shape, ElementKind kind)
      : shape(shape.begin(), shape.end()), kind(kind),
        data(static_cast<size_t>(numElements(shape)), 0.0) {}

  /// A tensor shaped like a ranked tensor type (which must use a kiln kind).
  static Tensor ofType(RankedTensorType type);

  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  int64_t size() const { return static_cast<int64_t>(data.size()); }
  /// Row-major strides in elements.
  Shape strides() const;
  /// "tensor<4x8xf32>"-style description for messages.
  std::string typeString() const;
};

/// The bytes the interpreter's values of `type` take (f64 elements), or
/// UINT64_MAX where they do not fit 64 bits.
uint64_t hostBytesOf(RankedTensorType type);
/// This machine's physical memory in bytes: what the interpreter may hold
/// at most, so that a value it cannot allocate is an error rather than an
/// abort (0 where the system does not say).
uint64_t hostMemoryBytes();

/// Row-major strides of `shape`.
Shape rowMajorStrides(llvm::ArrayRef<int64_t> shape);

/// The multi-index of row-major position `flat` in `shape` (for naming an
/// element in a diagnostic).
Shape unflatIndex(llvm::ArrayRef<int64_t> shape, int64_t flat);

/// Reads `count` little-endian i64 values (what PyTorch and NumPy store
/// integers as) into `out` as i32 values. Returns the position of the first
/// one outside the i32 range, where it stops; nothing when all fit.
std::optional<int64_t> readI64AsI32(const uint8_t *bytes, int64_t count,
                                    double *out);

/// Strides that read a tensor of shape `from` as if broadcast to `to` (numpy
/// rules, `from` must be broadcastable): 0 along broadcast dimensions.
Shape broadcastStrides(llvm::ArrayRef<int64_t> from,
                       llvm::ArrayRef<int64_t> to);

/// Calls `body(outIndex, inIndex[0..n))` for every element of `outShape` in
/// row-major order, where inIndex[k] advances by `inStrides[k]`. The loop is
/// an odometer over the dimensions, so there are no divisions per element.
template <size_t N, typename Body>
void forEachStrided(llvm::ArrayRef<int64_t> outShape,
                    const std::array<Shape, N> &inStrides, Body body) {
  int64_t total = numElements(outShape);
  if (total == 0)
    return;
  size_t rank = outShape.size();
  Shape counter(rank, 0);
  std::array<int64_t, N> in{};
  for (int64_t out = 0; out < total; ++out) {
    body(out, in);
    for (size_t d = rank; d-- > 0;) {
      if (++counter[d] < outShape[d]) {
        for (size_t k = 0; k < N; ++k)
          in[k] += inStrides[k][d];
        break;
      }
      counter[d] = 0;
      for (size_t k = 0; k < N; ++k)
        in[k] -= inStrides[k][d] * (outShape[d] - 1);
    }
  }
}

} // namespace mlir::kiln::ref

#endif // KILN_COMPILER_INTERPRETER_TENSOR_H
