//===- NNRecurrentOps.cpp - kiln.rnn --------------------------------------===//

#include "dialects/kiln/IR/KilnDialect.h"
#include "dialects/kiln/IR/KilnOpUtils.h"

using namespace mlir;
using namespace mlir::kiln;

RnnOp::Sizes RnnOp::sizesOf(RnnFunction function) {
  switch (function) {
  case RnnFunction::lstm:
    return {4, 4, 4, 2};
  case RnnFunction::slstm:
    return {4, 4, 4, 4};
  case RnnFunction::gru:
    // The bias has a fourth gate: b3 is added to the candidate's input part
    // apart from b0, which r multiplies together with R0 h.
    return {3, 3, 4, 1};
  case RnnFunction::elman:
    return {1, 1, 1, 1};
  }
  llvm_unreachable("unknown rnn function");
}

LogicalResult RnnOp::inferReturnTypes(MLIRContext *,
                                      std::optional<Location> location,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &results) {
  RankedTensorType input = rankedType(adaptor.getInput());
  if (!input)
    return inferenceError(location, "'input' must be a ranked tensor");
  if (input.getRank() != 5)
    return inferenceError(location,
                          "'input' must have rank 5 ([B, T, Gw, NH, D]), got ",
                          shapeString(input));
  if (!adaptor.getFunctionAttr())
    return inferenceError(location,
                          "'function' is required (lstm, gru, elman or slstm)");
  ArrayRef<int64_t> x = input.getShape();
  int64_t s = sizesOf(adaptor.getFunction()).s;
  Type element = input.getElementType();
  results.push_back(
      RankedTensorType::get({s, x[0], x[1], x[3], x[4]}, element));
  results.push_back(RankedTensorType::get({s, x[0], x[3], x[4]}, element));
  return success();
}

LogicalResult RnnOp::verify() {
  auto input = cast<RankedTensorType>(getInput().getType());
  ArrayRef<int64_t> x = input.getShape();
  int64_t b = x[0], t = x[1], nh = x[3], d = x[4];
  Sizes sizes = sizesOf(getFunction());
  StringRef function = stringifyRnnFunction(getFunction());
  struct Expected {
    StringRef name;
    Value value;
    SmallVector<int64_t, 5> shape;
    StringRef dims;
  } expected[] = {
      {"input", getInput(), {b, t, sizes.gw, nh, d}, "(B, T, Gw, NH, D)"},
      {"recurrent", getRecurrent(), {sizes.gr, nh, d, d}, "(Gr, NH, D, D)"},
      {"bias", getBias(), {sizes.gb, nh, d}, "(Gb, NH, D)"},
      {"states0", getStates0(), {sizes.s, b, nh, d}, "(S, B, NH, D)"},
  };
  for (const Expected &operand : expected) {
    auto type = cast<RankedTensorType>(operand.value.getType());
    if (type.getShape() != ArrayRef<int64_t>(operand.shape))
      return emitOpError() << "'" << operand.name << "' must have shape "
                           << formatShape(operand.shape) << " for " << function
                           << " " << operand.dims << ", got "
                           << shapeString(type);
    if (type.getElementType() != input.getElementType())
      return emitOpError() << "'" << operand.name << "' must have element type "
                           << input.getElementType() << " like 'input', got "
                           << type.getElementType();
  }
  return success();
}
