//===- ShapeOps.cpp - shape ops, reductions and matmul --------------------===//

#include "dialects/kiln/IR/KilnDialect.h"
#include "dialects/kiln/IR/KilnOpUtils.h"

using namespace mlir;
using namespace mlir::kiln;

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

static LogicalResult inferReduction(std::optional<Location> location,
                                    Value input, ArrayRef<int64_t> dims,
                                    bool keepDim, Type elementType,
                                    SmallVectorImpl<Type> &results) {
  RankedTensorType type = rankedType(input);
  if (!type)
    return inferenceError(location, "input must be a ranked tensor");
  ShapeOrError shape = reducedShape(type.getShape(), dims, keepDim);
  if (!shape.ok())
    return inferenceError(location, "'dims': " + shape.message());
  results.push_back(RankedTensorType::get(
      shape.shape(), elementType ? elementType : type.getElementType()));
  return success();
}

LogicalResult ReduceSumOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  return inferReduction(location, adaptor.getInput(), adaptor.getDims(),
                        adaptor.getKeepdim(), Type(), results);
}
