//===- ShapeOps.cpp - layout ops of the shape family ----------------------===//
//
// reshape, broadcast_to, transpose, slice, concat, pad, flip, triu and tril.
// The shape arithmetic itself lives in Utils/ShapeInference so that it is
// unit-tested without MLIR; this file turns its answers into types and
// located diagnostics.
//
//===----------------------------------------------------------------------===//

#include "dialects/kiln/IR/KilnDialect.h"
#include "dialects/kiln/IR/KilnOpUtils.h"

#include <cmath>
#include <cstdio>

using namespace mlir;
using namespace mlir::kiln;

/// The single tensor operand of a layout op for inference, or an error: the
/// operand constraints have not been checked yet when inference runs.
static RankedTensorType inputForInference(std::optional<Location> location,
                                          Value input) {
  RankedTensorType type = rankedType(input);
  if (!type)
    (void)inferenceError(location, "input must be a ranked tensor");
  return type;
}

/// Wraps a shape rule's answer into the result type (input's element type).
static LogicalResult inferFromShape(std::optional<Location> location,
                                    const ShapeOrError &shape, Type elementType,
                                    SmallVectorImpl<Type> &results) {
  if (!shape.ok())
    return inferenceError(location, shape.message());
  results.push_back(RankedTensorType::get(shape.shape(), elementType));
  return success();
}

//===----------------------------------------------------------------------===//
// reshape, broadcast_to
//===----------------------------------------------------------------------===//

/// Both views keep the element type; only the shape changes.
static LogicalResult verifySameElementType(Operation *op, Type input,
                                           Type result) {
  Type inputElement = cast<ShapedType>(input).getElementType();
  Type resultElement = cast<ShapedType>(result).getElementType();
  if (inputElement != resultElement)
    return op->emitOpError("result element type ")
           << resultElement << " differs from input element type "
           << inputElement;
  return success();
}

LogicalResult ReshapeOp::verify() {
  if (failed(verifySameElementType(*this, getInput().getType(), getType())))
    return failure();
  std::string error =
      checkReshape(getInput().getType().getShape(), getType().getShape());
  if (!error.empty())
    return emitOpError(error);
  return success();
}

LogicalResult BroadcastToOp::verify() {
  if (failed(verifySameElementType(*this, getInput().getType(), getType())))
    return failure();
  std::string error =
      checkBroadcastTo(getInput().getType().getShape(), getType().getShape());
  if (!error.empty())
    return emitOpError(error);
  return success();
}

//===----------------------------------------------------------------------===//
// transpose, slice, pad, concat
//===----------------------------------------------------------------------===//

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  RankedTensorType type = inputForInference(location, adaptor.getInput());
  if (!type)
    return failure();
  return inferFromShape(location,
                        transposeShape(type.getShape(), adaptor.getPerm()),
                        type.getElementType(), results);
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> location,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &results) {
  RankedTensorType type = inputForInference(location, adaptor.getInput());
  if (!type)
    return failure();
  return inferFromShape(location,
                        sliceShape(type.getShape(), adaptor.getStart(),
                                   adaptor.getLimit(), adaptor.getStep()),
                        type.getElementType(), results);
}

LogicalResult PadOp::inferReturnTypes(MLIRContext *,
                                      std::optional<Location> location,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &results) {
  RankedTensorType type = inputForInference(location, adaptor.getInput());
  if (!type)
    return failure();
  return inferFromShape(
      location, padShape(type.getShape(), adaptor.getLow(), adaptor.getHigh()),
      type.getElementType(), results);
}

/// `value` must mean the same number once stored in an integer or mask
/// tensor; floating-point element types round it, which is always possible.
LogicalResult PadOp::verify() {
  Type element = getInput().getType().getElementType();
  double value = getValue().convertToDouble();
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  if (element.isInteger(1) && value != 0.0 && value != 1.0)
    return emitOpError("'value' ")
           << text << " cannot be stored in element type " << element
           << " (expected 0.0 or 1.0)";
  // The bounds are exactly representable doubles, so the comparison is exact.
  if (element.isInteger(32) && (std::trunc(value) != value ||
                                value < -2147483648.0 || value > 2147483647.0))
    return emitOpError("'value' ")
           << text << " cannot be stored in element type " << element
           << " (expected an integer in the i32 range)";
  return success();
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  SmallVector<ArrayRef<int64_t>> shapes;
  Type elementType;
  for (auto [index, input] : llvm::enumerate(adaptor.getInputs())) {
    RankedTensorType type = rankedType(input);
    if (!type)
      return inferenceError(location, "input ", index,
                            " must be a ranked tensor");
    if (!elementType)
      elementType = type.getElementType();
    else if (type.getElementType() != elementType)
      return inferenceError(location, "input ", index, " has element type ",
                            type.getElementType(), " but input 0 has ",
                            elementType);
    shapes.push_back(type.getShape());
  }
  return inferFromShape(
      location, concatShape(shapes, static_cast<int64_t>(adaptor.getDim())),
      elementType, results);
}

//===----------------------------------------------------------------------===//
// flip, triu, tril
//===----------------------------------------------------------------------===//

LogicalResult FlipOp::verify() {
  std::string error = checkDims(getDims(), getInput().getType().getRank());
  if (!error.empty())
    return emitOpError("'dims': ") << error;
  return success();
}

/// triu and tril work on the matrices in the last two dimensions.
static LogicalResult verifyTriangular(Operation *op, RankedTensorType type) {
  if (type.getRank() < 2)
    return op->emitOpError("input must have rank >= 2 (its last two "
                           "dimensions are the matrix), got rank ")
           << type.getRank() << " (shape " << shapeString(type) << ")";
  return success();
}

LogicalResult TriuOp::verify() {
  return verifyTriangular(*this, getInput().getType());
}

LogicalResult TrilOp::verify() {
  return verifyTriangular(*this, getInput().getType());
}
