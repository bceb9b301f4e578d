//===- GroupNormOps.cpp - kiln.group_norm and its backward op -------------===//

#include "dialects/kiln/IR/KilnDialect.h"
#include "dialects/kiln/IR/KilnOpUtils.h"

using namespace mlir;
using namespace mlir::kiln;

/// Whether `dim` can be the channel dim of a group norm of `type`: dim 1,
/// or the last dim of a channels-last input of rank >= 3.
static bool isChannelDim(RankedTensorType type, int64_t dim) {
  return dim == 1 || (type.getRank() >= 3 && dim == type.getRank() - 1);
}

/// The checks both ops share: `input` [N, C, ...] (or [N, ..., C] with the
/// channels at `dim`, its last) with C divisible by `groups`, a positive
/// eps, and `[C]` parameters of the input's element type.
static LogicalResult verifyGroupNorm(Operation *op, Value input,
                                     int64_t groups, int64_t dim, double eps,
                                     ArrayRef<std::pair<StringRef, Value>>
                                         parameters) {
  auto type = cast<RankedTensorType>(input.getType());
  if (type.getRank() < 2)
    return op->emitOpError() << "'input' must be [N, C, ...] (rank >= 2), got "
                             << shapeString(type);
  if (!isChannelDim(type, dim)) {
    InFlightDiagnostic diag = op->emitOpError() << "'dim' must be 1";
    if (type.getRank() >= 3)
      diag << " or the last dim (" << type.getRank() - 1 << ")";
    return diag << ", got " << dim;
  }
  int64_t channels = type.getDimSize(dim);
  if (groups < 1)
    return op->emitOpError() << "'groups' must be positive, got " << groups;
  if (channels % groups != 0)
    return op->emitOpError() << "'groups' = " << groups
                             << " must divide the " << channels
                             << " channels (dim " << dim << ") of 'input'";
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
  return verifyGroupNorm(*this, getInput(), getGroups(), getDim(),
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
  // While parsing, an absent default-valued attribute is not yet set.
  int64_t dim = adaptor.getDimAttr() ? adaptor.getDimAttr().getInt() : 1;
  if (!isChannelDim(type, dim))
    return inferenceError(location, "'dim' must be 1 or the last dim, got ",
                          std::to_string(dim));
  auto channels =
      RankedTensorType::get({type.getDimSize(dim)}, type.getElementType());
  results.append({type, channels, channels});
  return success();
}

LogicalResult GroupNormBackwardOp::verify() {
  return verifyGroupNorm(*this, getInput(), getGroups(), getDim(),
                         getEps().convertToDouble(), {{"weight", getWeight()}});
}
