//===- TensorSizes.cpp - every kiln tensor fits a device buffer -----------===//
//
// The verifier of the BoundedTensorSizes trait: a shape whose byte size
// overflows 64 bits, or passes what one device buffer may hold, is the
// user's error at the op that names it. Checked here, every later pass (the
// memory plan, kernel configuration, launch grids) may multiply sizes
// without overflow.
//
//===----------------------------------------------------------------------===//

#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/IR/BuiltinTypes.h"

namespace mlir::kiln {
namespace {

/// The bytes of `type`, or nullopt where they do not fit 64 bits.
std::optional<uint64_t> byteSize(RankedTensorType type) {
  uint64_t bytes = (type.getElementTypeBitWidth() + 7) / 8;
  for (int64_t dim : type.getShape())
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(dim), &bytes))
      return std::nullopt;
  return bytes;
}

LogicalResult checkValue(Operation *op, Value value, StringRef what,
                         unsigned index) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape() || !type.getElementType().isIntOrFloat())
    return success();
  std::optional<uint64_t> bytes = byteSize(type);
  if (bytes && *bytes <= kMaxTensorBytes)
    return success();
  InFlightDiagnostic diag = op->emitOpError()
                            << what << " #" << index << " of type " << type;
  if (bytes)
    diag << " holds " << *bytes << " bytes";
  else
    diag << " holds more bytes than 64 bits count";
  return diag << ", more than the 2^48 one device buffer may hold";
}

} // namespace

LogicalResult verifyTensorSizes(Operation *op) {
  for (auto [i, operand] : llvm::enumerate(op->getOperands()))
    if (failed(checkValue(op, operand, "operand", i)))
      return failure();
  for (auto [i, result] : llvm::enumerate(op->getResults()))
    if (failed(checkValue(op, result, "result", i)))
      return failure();
  return success();
}

} // namespace mlir::kiln
