//===- ResizeOps.cpp - kiln.resize and kiln.resize_backward ---------------===//

#include "dialects/kiln/IR/KilnDialect.h"
#include "dialects/kiln/IR/KilnOpUtils.h"

#include <cmath>

using namespace mlir;
using namespace mlir::kiln;

SmallVector<int64_t> mlir::kiln::resizedDims(ArrayRef<int64_t> input,
                                             ArrayRef<int64_t> output,
                                             ArrayRef<double> scales) {
  SmallVector<int64_t> dims;
  for (size_t d = 0; d < input.size(); ++d)
    if (input[d] != output[d] || d >= scales.size() || scales[d] != 1.0)
      dims.push_back(d);
  return dims;
}

/// The checks both ops share: `input` resized to `output`.
static LogicalResult verifyResize(Operation *op, RankedTensorType input,
                                  RankedTensorType output,
                                  ArrayRef<double> scales, ResizeMode mode,
                                  ResizeRounding rounding) {
  if (input.getRank() != output.getRank())
    return op->emitOpError() << "resizes rank " << input.getRank() << " "
                             << shapeString(input) << " to rank "
                             << output.getRank() << " " << shapeString(output)
                             << ": the ranks must match";
  if (input.getElementType() != output.getElementType())
    return op->emitOpError() << "the result's element type "
                             << output.getElementType()
                             << " must be the input's, "
                             << input.getElementType();
  if (static_cast<int64_t>(scales.size()) != input.getRank())
    return op->emitOpError() << "'scales' must have one value per dim ("
                             << input.getRank() << "), got " << scales.size();
  for (auto [d, s] : llvm::enumerate(scales))
    if (!std::isfinite(s) || s <= 0)
      return op->emitOpError()
             << "'scales' must be positive and finite, got " << s
             << " for dim " << d;
  SmallVector<int64_t> dims =
      resizedDims(input.getShape(), output.getShape(), scales);
  if (static_cast<int64_t>(dims.size()) > kMaxResizedDims)
    return op->emitOpError()
           << "resizes " << dims.size() << " dims " << formatShape(dims)
           << " of " << shapeString(input) << " -> " << shapeString(output)
           << "; at most " << kMaxResizedDims << " can be";
  for (int64_t d : dims)
    if (input.getDimSize(d) < 1 || output.getDimSize(d) < 1)
      return op->emitOpError()
             << "resizes dim " << d << " from " << input.getDimSize(d)
             << " to " << output.getDimSize(d)
             << " elements; a resized dim needs at least one of each";
  if (mode == ResizeMode::linear &&
      rounding != ResizeRounding::round_prefer_floor)
    return op->emitOpError() << "'rounding' = "
                             << stringifyResizeRounding(rounding)
                             << " applies to mode = nearest only";
  return success();
}

LogicalResult ResizeOp::verify() {
  return verifyResize(*this, cast<RankedTensorType>(getInput().getType()),
                      cast<RankedTensorType>(getResult().getType()),
                      getScales(), getMode(), getRounding());
}

SmallVector<int64_t> ResizeOp::getResizedDims() {
  return resizedDims(cast<RankedTensorType>(getInput().getType()).getShape(),
                     cast<RankedTensorType>(getResult().getType()).getShape(),
                     getScales());
}

LogicalResult ResizeBackwardOp::verify() {
  return verifyResize(*this, cast<RankedTensorType>(getResult().getType()),
                      cast<RankedTensorType>(getGrad().getType()),
                      getScales(), getMode(), getRounding());
}

SmallVector<int64_t> ResizeBackwardOp::getResizedDims() {
  return resizedDims(cast<RankedTensorType>(getResult().getType()).getShape(),
                     cast<RankedTensorType>(getGrad().getType()).getShape(),
                     getScales());
}
