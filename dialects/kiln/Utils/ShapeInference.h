//===- ShapeInference.h - shape rules shared by kiln ops ---------*- C++
//-*-===//
//
// Pure shape arithmetic (no MLIR types) behind result-type inference: numpy
// broadcasting, reductions over dims, batched matmul. Each rule returns the
// result shape or a message that says what is wrong, which the op turns into
// a located diagnostic.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_KILN_UTILS_SHAPEINFERENCE_H
#define KILN_DIALECTS_KILN_UTILS_SHAPEINFERENCE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <string>
#include <variant>

namespace mlir::kiln {

using Shape = llvm::SmallVector<int64_t, 6>;

/// Either a shape or the reason there is none.
class ShapeOrError {
public:
  ShapeOrError(Shape shape) : value(std::move(shape)) {}
  static ShapeOrError error(std::string message) {
    return ShapeOrError(std::move(message));
  }
  bool ok() const { return std::holds_alternative<Shape>(value); }
  const Shape &shape() const { return std::get<Shape>(value); }
  const std::string &message() const { return std::get<std::string>(value); }

private:
  explicit ShapeOrError(std::string message) : value(std::move(message)) {}
  std::variant<Shape, std::string> value;
};

/// Formats a shape as `[2, 3, 4]`.
std::string formatShape(llvm::ArrayRef<int64_t> shape);

/// numpy broadcasting of two shapes: trailing dims are aligned, and each pair
/// must be equal or contain a 1.
ShapeOrError broadcastShapes(llvm::ArrayRef<int64_t> lhs,
                             llvm::ArrayRef<int64_t> rhs);

/// Whether `from` can be broadcast to exactly `to` (as kiln.broadcast_to).
bool isBroadcastableTo(llvm::ArrayRef<int64_t> from,
                       llvm::ArrayRef<int64_t> to);

/// Checks reduction dims against `rank`: each in [0, rank) and none repeated.
/// Returns an empty string when valid, else the message.
std::string checkDims(llvm::ArrayRef<int64_t> dims, int64_t rank);

/// Shape after reducing `dims` of `shape`: removed, or kept as 1 with keepdim.
ShapeOrError reducedShape(llvm::ArrayRef<int64_t> shape,
                          llvm::ArrayRef<int64_t> dims, bool keepDim);

/// Batched matmul: operands of rank >= 2, the last two dims are the matrix
/// (transposed first when asked), leading dims broadcast like numpy.
/// Rank-1 operands are not accepted (reshape explicitly).
ShapeOrError matmulShape(llvm::ArrayRef<int64_t> lhs,
                         llvm::ArrayRef<int64_t> rhs, bool transposeLhs,
                         bool transposeRhs);

/// Number of elements; 1 for rank 0.
int64_t numElements(llvm::ArrayRef<int64_t> shape);

/// Reshape: `from` and `to` must hold the same number of elements. Returns an
/// empty string when valid, else the message (both shapes and counts).
std::string checkReshape(llvm::ArrayRef<int64_t> from,
                         llvm::ArrayRef<int64_t> to);

/// Why `from` cannot be broadcast to `to` (numpy rule, as isBroadcastableTo),
/// naming the offending dimension; empty exactly when isBroadcastableTo holds.
std::string checkBroadcastTo(llvm::ArrayRef<int64_t> from,
                             llvm::ArrayRef<int64_t> to);

/// Transpose: `perm` must be a permutation of 0..rank-1; result dim i is
/// shape[perm[i]].
ShapeOrError transposeShape(llvm::ArrayRef<int64_t> shape,
                            llvm::ArrayRef<int64_t> perm);

/// Strided slice with static bounds, one entry per dim of each list:
/// 0 <= start <= limit <= size and step >= 1; result dim i is
/// ceil((limit - start) / step).
ShapeOrError sliceShape(llvm::ArrayRef<int64_t> shape,
                        llvm::ArrayRef<int64_t> start,
                        llvm::ArrayRef<int64_t> limit,
                        llvm::ArrayRef<int64_t> step);

/// Concatenation along `dim` of at least one shape: all of the same rank,
/// equal in every dim but `dim`, which is summed.
ShapeOrError concatShape(llvm::ArrayRef<llvm::ArrayRef<int64_t>> shapes,
                         int64_t dim);

/// Constant padding: `low` and `high` give one non-negative amount per dim,
/// added before and after it.
ShapeOrError padShape(llvm::ArrayRef<int64_t> shape,
                      llvm::ArrayRef<int64_t> low,
                      llvm::ArrayRef<int64_t> high);

} // namespace mlir::kiln

#endif // KILN_DIALECTS_KILN_UTILS_SHAPEINFERENCE_H
