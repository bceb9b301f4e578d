//===- SequenceBackwardOps.cpp - attention_backward, rnn_backward ---------===//
//
// Result-type inference and verifiers of the fused backward ops of attention
// and of the recurrent op. Their rules mirror the forward ops' so that a
// backward op is valid exactly when its forward op is.
//
//===----------------------------------------------------------------------===//

#include "dialects/kiln/IR/KilnDialect.h"
#include "dialects/kiln/IR/KilnOpUtils.h"

using namespace mlir;
using namespace mlir::kiln;

/// Checks that operand `name` (ranked after ODS constraints) has shape
/// `expected` (`why` says where it comes from) and `elementType`, which is
/// that of `elementSource`.
static LogicalResult checkShapeAndElement(Operation *op, StringRef name,
                                          Value value,
                                          ArrayRef<int64_t> expected,
                                          StringRef why, Type elementType,
                                          StringRef elementSource) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getShape() != expected)
    return op->emitOpError()
           << "'" << name << "' must have shape " << formatShape(expected)
           << " " << why << ", got " << shapeString(type);
  if (type.getElementType() != elementType)
    return op->emitOpError()
           << "'" << name << "' must have element type " << elementType
           << " like '" << elementSource << "', got " << type.getElementType();
  return success();
}

//===----------------------------------------------------------------------===//
// Attention backward
//===----------------------------------------------------------------------===//

LogicalResult AttentionBackwardOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &results) {
  if (failed(checkAttentionOperandRanks(location, adaptor.getQuery(),
                                        adaptor.getKey(), adaptor.getValue())))
    return failure();
  for (Value operand :
       {adaptor.getQuery(), adaptor.getKey(), adaptor.getValue()})
    results.push_back(operand.getType());
  return success();
}

LogicalResult AttentionBackwardOp::verify() {
  auto query = cast<RankedTensorType>(getQuery().getType());
  auto key = cast<RankedTensorType>(getKey().getType());
  auto value = cast<RankedTensorType>(getValue().getType());
  ArrayRef<int64_t> q = query.getShape();
  int64_t tk = key.getDimSize(2), dv = value.getDimSize(3);
  Type element = query.getElementType();
  if (failed(
          checkShapeAndElement(*this, "key", getKey(), {q[0], q[1], tk, q[3]},
                               "(B, H and D of 'query')", element, "query")) ||
      failed(checkShapeAndElement(
          *this, "value", getValue(), {q[0], q[1], tk, dv},
          "(B and H of 'query', Tk of 'key')", element, "query")) ||
      failed(checkShapeAndElement(
          *this, "out", getOut(), {q[0], q[1], q[2], dv},
          "(B, H, Tq of 'query' and Dv of 'value')", element, "query")))
    return failure();
  if (Value lse = getRowLse()) {
    auto type = cast<RankedTensorType>(lse.getType());
    if (type.getShape() != ArrayRef<int64_t>{q[0], q[1], q[2]})
      return emitOpError() << "'row_lse' must have shape "
                           << formatShape({q[0], q[1], q[2]})
                           << " (B, H and Tq of 'query'), got "
                           << shapeString(type);
  }
  if (std::optional<APFloat> scale = getScale();
      scale && !(scale->convertToDouble() > 0))
    return emitOpError() << "'scale' must be positive, got "
                         << scale->convertToDouble();
  if (getCausal() && q[2] > tk)
    return emitOpError() << "causal attention needs Tq <= Tk so that no query "
                            "row is fully masked, got Tq = "
                         << q[2] << " and Tk = " << tk;
  return success();
}

//===----------------------------------------------------------------------===//
// Recurrent backward
//===----------------------------------------------------------------------===//

LogicalResult RnnBackwardOp::inferReturnTypes(MLIRContext *,
                                              std::optional<Location> location,
                                              Adaptor adaptor,
                                              SmallVectorImpl<Type> &results) {
  std::pair<StringRef, Value> operands[] = {
      {"input", adaptor.getInput()},
      {"recurrent", adaptor.getRecurrent()},
      {"bias", adaptor.getBias()},
      {"states0", adaptor.getStates0()}};
  for (auto [name, value] : operands) {
    RankedTensorType type = rankedType(value);
    if (!type)
      return inferenceError(location, "'", name, "' must be a ranked tensor");
    results.push_back(type);
  }
  return success();
}

LogicalResult RnnBackwardOp::verify() {
  auto input = cast<RankedTensorType>(getInput().getType());
  if (input.getRank() != 5)
    return emitOpError() << "'input' must have rank 5 ([B, T, Gw, NH, D]), got "
                         << shapeString(input);
  ArrayRef<int64_t> x = input.getShape();
  int64_t b = x[0], t = x[1], nh = x[3], d = x[4];
  RnnOp::Sizes sizes = RnnOp::sizesOf(getFunction());
  std::string function = stringifyRnnFunction(getFunction()).str();
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
      {"states", getStates(), {sizes.s, b, t, nh, d}, "(S, B, T, NH, D)"},
  };
  for (const Expected &operand : expected)
    if (failed(checkShapeAndElement(
            *this, operand.name, operand.value, operand.shape,
            ("for " + function + " " + operand.dims.str()),
            input.getElementType(), "input")))
      return failure();
  return success();
}
