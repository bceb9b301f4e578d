//===- KilnOpUtils.h - helpers shared by kiln op definitions -----*- C++
//-*-===//
//
// Small helpers for result-type inference and verifiers, so every op reports
// problems the same way: a located diagnostic naming expected vs. actual.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_KILN_IR_KILNOPUTILS_H
#define KILN_DIALECTS_KILN_IR_KILNOPUTILS_H

#include "dialects/kiln/Utils/ShapeInference.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"

#include <optional>

namespace mlir::kiln {

/// Emits the streamed `args` at `location` when there is one (inference may
/// run without a location) and returns failure.
template <typename... Args>
LogicalResult inferenceError(std::optional<Location> location, Args &&...args) {
  return emitOptionalError(location, std::forward<Args>(args)...);
}

/// The ranked tensor type of `value`, or null for anything else (inference
/// runs before operand constraints are checked, so it must not assume).
inline RankedTensorType rankedType(Value value) {
  return value ? llvm::dyn_cast<RankedTensorType>(value.getType())
               : RankedTensorType();
}

/// `[2, 3]` for printing shapes in diagnostics.
inline std::string shapeString(RankedTensorType type) {
  return formatShape(type.getShape());
}

/// Checks that the query, key and value of an attention op (or of its
/// backward op) are ranked tensors of rank 4 ([B, H, T, D]).
LogicalResult checkAttentionOperandRanks(std::optional<Location> location,
                                         Value query, Value key, Value value);

/// The checks kiln.cross_entropy and its backward share: logits [N, C],
/// labels [N], label_smoothing in [0, 1], an i32 ignore_index.
LogicalResult verifyCrossEntropy(Operation *op, Value logits, Value labels,
                                 double smoothing,
                                 std::optional<int64_t> ignoreIndex);

/// Dims kiln.resize may resize at most.
inline constexpr int64_t kMaxResizedDims = 3;

/// The dims a resize of `input` to `output` with `scales` resizes: those
/// whose size changes or whose scale is not 1.
llvm::SmallVector<int64_t> resizedDims(llvm::ArrayRef<int64_t> input,
                                       llvm::ArrayRef<int64_t> output,
                                       llvm::ArrayRef<double> scales);

} // namespace mlir::kiln

#endif // KILN_DIALECTS_KILN_IR_KILNOPUTILS_H
