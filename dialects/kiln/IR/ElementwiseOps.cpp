//===- ElementwiseOps.cpp - constants, randomness and elementwise ops -----===//

#include "dialects/kiln/IR/KilnDialect.h"
#include "dialects/kiln/IR/KilnOpUtils.h"

using namespace mlir;
using namespace mlir::kiln;

//===----------------------------------------------------------------------===//
// Binary elementwise
//===----------------------------------------------------------------------===//

/// Result of a broadcasting binary op: the broadcast shape with the operands'
/// shared element type.
static LogicalResult inferBroadcastBinary(std::optional<Location> location,
                                          Value lhs, Value rhs,
                                          SmallVectorImpl<Type> &results) {
  RankedTensorType lhsType = rankedType(lhs), rhsType = rankedType(rhs);
  if (!lhsType || !rhsType)
    return inferenceError(location, "operands must be ranked tensors");
  if (lhsType.getElementType() != rhsType.getElementType())
    return inferenceError(location, "operand element types differ: ",
                          lhsType.getElementType(), " vs ",
                          rhsType.getElementType());
  ShapeOrError shape = broadcastShapes(lhsType.getShape(), rhsType.getShape());
  if (!shape.ok())
    return inferenceError(location, shape.message());
  results.push_back(
      RankedTensorType::get(shape.shape(), lhsType.getElementType()));
  return success();
}

LogicalResult AddOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &results) {
  return inferBroadcastBinary(location, adaptor.getLhs(), adaptor.getRhs(),
                              results);
}
