//===- GroupNormOps.cpp - kiln.group_norm and its backward op -------------===//

#include "dialects/kiln/IR/KilnDialect.h"
#include "dialects/kiln/IR/KilnOpUtils.h"

using namespace mlir;
using namespace mlir::kiln;

/// The checks both ops share: `input` [N, C, ...] with C divisible by
/// `groups`, a positive eps, and `[C]` parameters of the input's element
/// type.
static LogicalResult verifyGroupNorm(Operation *op, Value input,
                                     int64_t groups, double eps,
                                     ArrayRef<std::pair<StringRef, Value>>
                                         parameters) {
  auto type = cast<RankedTensorType>(input.getType());
  if (type.getRank() < 2)
    return op->emitOpError() << "'input' must be [N, C, ...] (rank >= 2), got "
                             << shapeString(type);
  int64_t channels = type.getDimSize(1);
  if (groups < 1)
    return op->emitOpError() << "'groups' must be positive, got " << groups;
  if (channels % groups != 0)
    return op->emitOpError() << "'groups' = " << groups
                             << " must divide the " << channels
                             << " channels (dim 1) of 'input'";
  if (!(eps > 0))
    return op->emitOpError() << "'eps' must be positive, got " << eps;
  for (auto [name, value] : parameters) {
    if (!value)
      continue;
    auto t = cast<RankedTensorType>(value.getType());
    if (t.getShape() != ArrayRef<int64_t>{channels})
      return op->emitOpError()
             << "'" << name << "' must have shape [" << channels
             << "] (the channels of 'input'), got " << shapeString(t);
    if (t.getElementType() != type.getElementType())
      return op->emitOpError()
             << "'" << name << "' must have element type "
             << type.getElementType() << " like 'input', got "
             << t.getElementType();
  }
  return success();
}

LogicalResult GroupNormOp::verify() {
  if (getBias() && !getWeight())
    return emitOpError() << "'bias' requires 'weight' (pass a tensor of ones "
                            "for a pure shift)";
  return verifyGroupNorm(*this, getInput(), getGroups(),
                         getEps().convertToDouble(),
                         {{"weight", getWeight()}, {"bias", getBias()}});
}

LogicalResult GroupNormBackwardOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &results) {
  RankedTensorType type = rankedType(adaptor.getInput());
  if (!type)
    return inferenceError(location, "'input' must be a ranked tensor");
  if (type.getRank() < 2)
    return inferenceError(location,
                          "'input' must be [N, C, ...] (rank >= 2), got ",
                          shapeString(type));
  auto channels =
      RankedTensorType::get({type.getDimSize(1)}, type.getElementType());
  results.append({type, channels, channels});
  return success();
}

LogicalResult GroupNormBackwardOp::verify() {
  return verifyGroupNorm(*this, getInput(), getGroups(),
                         getEps().convertToDouble(), {{"weight", getWeight()}});
}
