//===- ShapeReductionOps.cpp - reductions over dims and argmax ------------===//

#include "dialects/kiln/IR/KilnDialect.h"
#include "dialects/kiln/IR/KilnOpUtils.h"

using namespace mlir;
using namespace mlir::kiln;

/// The result type of every reduction over dims: `input`'s shape with `dims`
/// removed (or kept as 1 with `keepDim`), of `elementType` when given, else
/// the input's. `attrName` is the attribute that holds the dims, for messages.
static LogicalResult inferReduction(std::optional<Location> location,
                                    Value input, ArrayRef<int64_t> dims,
                                    bool keepDim, Type elementType,
                                    StringRef attrName,
                                    SmallVectorImpl<Type> &results) {
  RankedTensorType type = rankedType(input);
  if (!type)
    return inferenceError(location, "input must be a ranked tensor");
  // An empty list would read as "reduce nothing" here but "reduce all" in
  // numpy/torch; make the writer say which.
  if (dims.empty())
    return inferenceError(location, "'", attrName,
                          "' is empty: list the dimensions to reduce (all of "
                          "them to reduce over every element)");
  ShapeOrError shape = reducedShape(type.getShape(), dims, keepDim);
  if (!shape.ok())
    return inferenceError(location, "'", attrName, "': ", shape.message());
  results.push_back(RankedTensorType::get(
      shape.shape(), elementType ? elementType : type.getElementType()));
  return success();
}

#define KILN_REDUCE_OP_INFERENCE(OpClass)                                      \
  LogicalResult OpClass::inferReturnTypes(                                     \
      MLIRContext *, std::optional<Location> location, Adaptor adaptor,        \
      SmallVectorImpl<Type> &results) {                                        \
    return inferReduction(location, adaptor.getInput(), adaptor.getDims(),     \
                          adaptor.getKeepdim(), Type(), "dims", results);      \
  }

KILN_REDUCE_OP_INFERENCE(ReduceSumOp)
KILN_REDUCE_OP_INFERENCE(ReduceMeanOp)
KILN_REDUCE_OP_INFERENCE(ReduceMaxOp)
KILN_REDUCE_OP_INFERENCE(ReduceMinOp)

#undef KILN_REDUCE_OP_INFERENCE

LogicalResult ArgmaxOp::inferReturnTypes(MLIRContext *context,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  int64_t dim = static_cast<int64_t>(adaptor.getDim());
  return inferReduction(location, adaptor.getInput(), dim, adaptor.getKeepdim(),
                        IntegerType::get(context, 32), "dim", results);
}
