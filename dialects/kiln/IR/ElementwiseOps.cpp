//===- ElementwiseOps.cpp - constants, randomness and elementwise ops -----===//

#include "dialects/kiln/IR/KilnDialect.h"
#include "dialects/kiln/IR/KilnOpUtils.h"

#include "llvm/ADT/SmallString.h"

using namespace mlir;
using namespace mlir::kiln;

/// Whether `type` is one of the element types kiln tensors may hold.
static bool isKilnElementType(Type type) {
  return type.isF32() || type.isBF16() || type.isF16() ||
         type.isSignlessInteger(32) || type.isSignlessInteger(1);
}

/// Shortest text that reads back as `value`, for attribute values in messages.
static std::string formatDouble(double value) {
  SmallString<32> text;
  APFloat(value).toString(text);
  return std::string(text);
}

//===----------------------------------------------------------------------===//
// Constants and randomness
//===----------------------------------------------------------------------===//

LogicalResult ConstantOp::inferReturnTypes(MLIRContext *,
                                           std::optional<Location> location,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &results) {
  // Read the raw property: the attribute may be missing or of another kind in
  // the generic form, and inference runs before the op is verified.
  auto value =
      llvm::dyn_cast_or_null<ElementsAttr>(adaptor.getProperties().value);
  if (!value)
    return inferenceError(location, "'value' must be an elements attribute");
  auto type = llvm::dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape())
    return inferenceError(location,
                          "'value' must be a statically shaped tensor, got ",
                          value.getType());
  if (!isKilnElementType(type.getElementType()))
    return inferenceError(
        location,
        "'value' element type must be f32, bf16, f16, i32 or i1, got ",
        type.getElementType());
  results.push_back(type);
  return success();
}

LogicalResult IotaOp::verify() {
  auto type = llvm::cast<RankedTensorType>(getType());
  int64_t dim = getDim(), rank = type.getRank();
  if (dim < 0 || dim >= rank)
    return emitOpError() << "'dim' must be in [0, " << rank
                         << ") for a result of rank " << rank << ", got "
                         << dim;
  return success();
}

/// Checks shared by the random ops: the Philox counter words `stream` and
/// `i / 4` must fit in 32 bits (see the op description).
static LogicalResult verifyRandomCounter(Operation *op, int64_t stream,
                                         Type resultType) {
  if (stream < 0 || stream > int64_t(UINT32_MAX))
    return op->emitOpError() << "'stream' must be in [0, 2^32), got " << stream;
  auto type = llvm::cast<RankedTensorType>(resultType);
  constexpr int64_t kMaxElements = int64_t(1) << 34;
  int64_t count = numElements(type.getShape());
  if (count > kMaxElements)
    return op->emitOpError()
           << "result has " << count
           << " elements, more than the 2^34 the 32-bit block counter "
              "(i / 4) can address";
  return success();
}

LogicalResult RandomUniformOp::verify() {
  if (failed(verifyRandomCounter(*this, getStream(), getType())))
    return failure();
  double low = getLow().convertToDouble(), high = getHigh().convertToDouble();
  if (!(low < high))
    return emitOpError() << "'low' must be less than 'high', got low = "
                         << formatDouble(low)
                         << " and high = " << formatDouble(high);
  return success();
}

LogicalResult RandomNormalOp::verify() {
  if (failed(verifyRandomCounter(*this, getStream(), getType())))
    return failure();
  double std = getStd().convertToDouble();
  if (!(std >= 0))
    return emitOpError() << "'std' must be non-negative, got "
                         << formatDouble(std);
  return success();
}

//===----------------------------------------------------------------------===//
// Unary elementwise
//===----------------------------------------------------------------------===//

LogicalResult CastOp::verify() {
  auto inputType = llvm::cast<RankedTensorType>(getInput().getType());
  auto resultType = llvm::cast<RankedTensorType>(getType());
  if (inputType.getShape() != resultType.getShape())
    return emitOpError() << "'input' shape " << shapeString(inputType)
                         << " and result shape " << shapeString(resultType)
                         << " differ; cast changes only the element type";
  return success();
}

//===----------------------------------------------------------------------===//
// Binary elementwise, compare and select
//===----------------------------------------------------------------------===//

/// Broadcast shape of `lhs` and `rhs` with `elementType`, or the lhs element
/// type when that is null. The operands' element types must agree.
static LogicalResult inferBroadcastBinary(std::optional<Location> location,
                                          Value lhs, Value rhs,
                                          Type elementType,
                                          SmallVectorImpl<Type> &results) {
  RankedTensorType lhsType = rankedType(lhs), rhsType = rankedType(rhs);
  if (!lhsType || !rhsType)
    return inferenceError(location, "operands must be ranked tensors");
  if (lhsType.getElementType() != rhsType.getElementType())
    return inferenceError(
        location, "operand element types differ: ", lhsType.getElementType(),
        " vs ", rhsType.getElementType());
  ShapeOrError shape = broadcastShapes(lhsType.getShape(), rhsType.getShape());
  if (!shape.ok())
    return inferenceError(location, shape.message());
  results.push_back(RankedTensorType::get(
      shape.shape(), elementType ? elementType : lhsType.getElementType()));
  return success();
}

// The broadcasting ops share one rule; only the op class differs.
#define KILN_BROADCAST_BINARY_INFERENCE(OpClass)                               \
  LogicalResult OpClass::inferReturnTypes(                                     \
      MLIRContext *, std::optional<Location> location, Adaptor adaptor,        \
      SmallVectorImpl<Type> &results) {                                        \
    return inferBroadcastBinary(location, adaptor.getLhs(), adaptor.getRhs(),  \
                                Type(), results);                              \
  }
KILN_BROADCAST_BINARY_INFERENCE(AddOp)
KILN_BROADCAST_BINARY_INFERENCE(SubOp)
KILN_BROADCAST_BINARY_INFERENCE(MulOp)
KILN_BROADCAST_BINARY_INFERENCE(DivOp)
KILN_BROADCAST_BINARY_INFERENCE(PowOp)
KILN_BROADCAST_BINARY_INFERENCE(MaxOp)
KILN_BROADCAST_BINARY_INFERENCE(MinOp)
#undef KILN_BROADCAST_BINARY_INFERENCE

LogicalResult CompareOp::inferReturnTypes(MLIRContext *context,
                                          std::optional<Location> location,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &results) {
  return inferBroadcastBinary(location, adaptor.getLhs(), adaptor.getRhs(),
                              IntegerType::get(context, 1), results);
}

LogicalResult SelectOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  RankedTensorType condType = rankedType(adaptor.getCondition()),
                   trueType = rankedType(adaptor.getTrueValue()),
                   falseType = rankedType(adaptor.getFalseValue());
  if (!condType || !trueType || !falseType)
    return inferenceError(location, "operands must be ranked tensors");
  if (trueType.getElementType() != falseType.getElementType())
    return inferenceError(location,
                          "'true_value' and 'false_value' element types "
                          "differ: ",
                          trueType.getElementType(), " vs ",
                          falseType.getElementType());
  ShapeOrError values =
      broadcastShapes(trueType.getShape(), falseType.getShape());
  if (!values.ok())
    return inferenceError(location,
                          "'true_value' and 'false_value': ", values.message());
  ShapeOrError shape = broadcastShapes(condType.getShape(), values.shape());
  if (!shape.ok())
    return inferenceError(
        location, "'condition' does not broadcast with the values' shape: ",
        shape.message());
  results.push_back(
      RankedTensorType::get(shape.shape(), trueType.getElementType()));
  return success();
}
