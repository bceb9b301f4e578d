//===- ShapeMatmulOp.cpp - batched matmul ---------------------------------===//

#include "dialects/kiln/IR/KilnDialect.h"
#include "dialects/kiln/IR/KilnOpUtils.h"

using namespace mlir;
using namespace mlir::kiln;

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  RankedTensorType lhsType = rankedType(adaptor.getLhs());
  RankedTensorType rhsType = rankedType(adaptor.getRhs());
  if (!lhsType || !rhsType)
    return inferenceError(location, "operands must be ranked tensors");
  if (lhsType.getElementType() != rhsType.getElementType())
    return inferenceError(
        location, "operand element types differ: ", lhsType.getElementType(),
        " vs ", rhsType.getElementType());
  ShapeOrError shape =
      matmulShape(lhsType.getShape(), rhsType.getShape(),
                  adaptor.getTransposeLhs(), adaptor.getTransposeRhs());
  if (!shape.ok())
    return inferenceError(location, shape.message());
  results.push_back(
      RankedTensorType::get(shape.shape(), lhsType.getElementType()));
  return success();
}
