//===- NNBackwardOps.cpp - verifiers of the neural-network backward ops ---===//
//
// Result-type inference and verifiers of the dedicated backward ops (norms,
// convolution, pooling, embedding, cross entropy). Their rules mirror the
// forward ops': a backward op is valid exactly when the forward op it
// differentiates would be, with `grad` shaped like the forward result.
//
//===----------------------------------------------------------------------===//

#include "dialects/kiln/IR/KilnDialect.h"
#include "dialects/kiln/IR/KilnOpUtils.h"

using namespace mlir;
using namespace mlir::kiln;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// Checks that `value` (a ranked tensor after ODS constraints) has shape
/// `expected` and `elementType`; `why` says where `expected` comes from.
static LogicalResult checkOperand(Operation *op, StringRef name, Value value,
                                  ArrayRef<int64_t> expected, Type elementType,
                                  StringRef why) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getShape() != expected)
    return op->emitOpError()
           << "'" << name << "' must have shape " << formatShape(expected)
           << " (" << why << "), got " << shapeString(type);
  if (type.getElementType() != elementType)
    return op->emitOpError()
           << "'" << name << "' must have element type " << elementType
           << " like 'input', got " << type.getElementType();
  return success();
}

static LogicalResult checkPositiveEps(Operation *op, double eps) {
  if (!(eps > 0))
    return op->emitOpError() << "'eps' must be positive, got " << eps;
  return success();
}

//===----------------------------------------------------------------------===//
// Normalisation
//===----------------------------------------------------------------------===//

LogicalResult LayerNormBackwardOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &results) {
  RankedTensorType type = rankedType(adaptor.getInput());
  if (!type)
    return inferenceError(location, "'input' must be a ranked tensor");
  int64_t rank = type.getRank();
  // Default-valued attributes are still absent while the custom parser infers.
  int64_t count = adaptor.getNumNormalizedDimsAttr()
                      ? adaptor.getNumNormalizedDimsAttr().getInt()
                      : 1;
  if (rank == 0)
    return inferenceError(location,
                          "'input' must have rank >= 1, got a rank-0 tensor");
  if (count < 1 || count > rank)
    return inferenceError(location, "'num_normalized_dims' must be in [1, ",
                          rank, "] for an input of rank ", rank, ", got ",
                          count);
  auto normalized = RankedTensorType::get(type.getShape().take_back(count),
                                          type.getElementType());
  results.append({type, normalized, normalized});
  return success();
}

LogicalResult LayerNormBackwardOp::verify() {
  if (failed(checkPositiveEps(*this, getEps().convertToDouble())))
    return failure();
  if (Value weight = getWeight()) {
    auto type = cast<RankedTensorType>(getInput().getType());
    return checkOperand(
        *this, "weight", weight,
        type.getShape().take_back(getNumNormalizedDimsAttr().getInt()),
        type.getElementType(), "the normalized dims of 'input'");
  }
  return success();
}

LogicalResult RmsNormBackwardOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &results) {
  RankedTensorType type = rankedType(adaptor.getInput());
  if (!type)
    return inferenceError(location, "'input' must be a ranked tensor");
  if (type.getRank() == 0)
    return inferenceError(location,
                          "'input' must have rank >= 1, got a rank-0 tensor");
  results.append({type, RankedTensorType::get(type.getShape().take_back(),
                                              type.getElementType())});
  return success();
}

LogicalResult RmsNormBackwardOp::verify() {
  if (failed(checkPositiveEps(*this, getEps().convertToDouble())))
    return failure();
  if (Value weight = getWeight()) {
    auto type = cast<RankedTensorType>(getInput().getType());
    return checkOperand(*this, "weight", weight, type.getShape().take_back(),
                        type.getElementType(), "the last dim of 'input'");
  }
  return success();
}

LogicalResult BatchNormBackwardOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &results) {
  RankedTensorType type = rankedType(adaptor.getInput());
  if (!type)
    return inferenceError(location, "'input' must be a ranked tensor");
  int64_t rank = type.getRank();
  int64_t dim = adaptor.getDimAttr() ? adaptor.getDimAttr().getInt() : 1;
  if (rank < 2)
    return inferenceError(
        location, "'input' must have rank >= 2 ([N, C, ...]), got rank ", rank);
  if (dim < 0 || dim >= rank)
    return inferenceError(location, "'dim' must be in [0, ", rank,
                          ") for an input of rank ", rank, ", got ", dim);
  auto stats =
      RankedTensorType::get({type.getDimSize(dim)}, type.getElementType());
  results.append({type, stats, stats});
  return success();
}

LogicalResult BatchNormBackwardOp::verify() {
  if (failed(checkPositiveEps(*this, getEps().convertToDouble())))
    return failure();
  auto type = cast<RankedTensorType>(getInput().getType());
  int64_t dim = getDimAttr().getInt();
  // Checked here too: the op's verifier runs before the inferred types are.
  if (dim < 0 || dim >= type.getRank())
    return emitOpError() << "'dim' must be in [0, " << type.getRank()
                         << ") for an input of rank " << type.getRank()
                         << ", got " << dim;
  int64_t channels[] = {type.getDimSize(dim)};
  return checkOperand(*this, "gamma", getGamma(), channels,
                      type.getElementType(),
                      "the channel dim " + std::to_string(dim) + " of 'input'");
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

namespace {
/// Positions of the spatial and channel dims of a 4-D activation.
struct Layout {
  int64_t channel, height, width;
};
} // namespace

static Layout layoutOf(ConvLayout layout) {
  return layout == ConvLayout::nhwc ? Layout{3, 1, 2} : Layout{1, 2, 3};
}

static StringRef activationLayout(ConvLayout layout) {
  return layout == ConvLayout::nhwc ? "[N, H, W, C]" : "[N, C, H, W]";
}

/// Checks that the attribute `name` has `size` values, each >= `minimum`.
static LogicalResult checkList(Operation *op, StringRef name,
                               ArrayRef<int64_t> values, size_t size,
                               int64_t minimum) {
  if (values.size() != size)
    return op->emitOpError() << "'" << name << "' must have " << size
                             << " values, got " << formatShape(values);
  if (llvm::any_of(values, [&](int64_t v) { return v < minimum; }))
    return op->emitOpError() << "'" << name << "' values must be "
                             << (minimum == 0 ? "non-negative" : "positive")
                             << ", got " << formatShape(values);
  return success();
}

static LogicalResult checkRank4(Operation *op, StringRef name, Value value,
                                StringRef layout) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getRank() != 4)
    return op->emitOpError() << "'" << name << "' must have rank 4 (" << layout
                             << "), got " << shapeString(type);
  return success();
}

static LogicalResult checkSameElementType(Operation *op, StringRef name,
                                          Value value, Type elementType) {
  Type actual = cast<RankedTensorType>(value.getType()).getElementType();
  if (actual != elementType)
    return op->emitOpError() << "'" << name << "' must have element type "
                             << elementType << " like 'grad', got " << actual;
  return success();
}

/// The forward result shape of a window op over `input` with `channels`
/// output channels, or nullopt when a spatial size would not be positive.
static std::optional<Shape>
windowedShape(ArrayRef<int64_t> input, Layout layout, int64_t channels,
              ArrayRef<int64_t> kernel, ArrayRef<int64_t> stride,
              ArrayRef<int64_t> padding, ArrayRef<int64_t> dilation) {
  Shape shape(input);
  shape[layout.channel] = channels;
  int64_t dims[] = {layout.height, layout.width};
  for (int axis = 0; axis < 2; ++axis) {
    int64_t padded =
        input[dims[axis]] + padding[2 * axis] + padding[2 * axis + 1];
    int64_t window = dilation[axis] * (kernel[axis] - 1) + 1;
    if (padded < window)
      return std::nullopt;
    shape[dims[axis]] = (padded - window) / stride[axis] + 1;
  }
  return shape;
}

/// Checks that `grad` has the shape of the forward result computed from
/// `input` (named `inputName`); `what` describes the forward op.
static LogicalResult checkGradShape(Operation *op, Value grad,
                                    RankedTensorType input, StringRef inputName,
                                    std::optional<Shape> expected,
                                    StringRef what) {
  auto type = cast<RankedTensorType>(grad.getType());
  if (!expected)
    return op->emitOpError()
           << "the window does not fit the padded '" << inputName << "' "
           << shapeString(input) << ": the forward " << what
           << " result would be empty";
  if (type.getShape() != ArrayRef<int64_t>(*expected))
    return op->emitOpError()
           << "'grad' must have shape " << formatShape(*expected) << " (the "
           << what << " result for '" << inputName << "' " << shapeString(input)
           << "), got " << shapeString(type);
  return success();
}

/// The rules of conv2d for the forward `input` and `filter` types, one of
/// which is the backward op's result, and `grad` the forward result's.
template <typename OpTy>
static LogicalResult verifyConvBackward(OpTy op, Value input,
                                        StringRef inputName, Value filter,
                                        StringRef filterName) {
  Operation *raw = op.getOperation();
  StringRef activation = activationLayout(op.getLayout());
  StringRef filterLayout = op.getLayout() == ConvLayout::nhwc
                               ? "[O, KH, KW, C/groups]"
                               : "[O, C/groups, KH, KW]";
  if (failed(checkRank4(raw, "grad", op.getGrad(), activation)) ||
      failed(checkRank4(raw, inputName, input, activation)) ||
      failed(checkRank4(raw, filterName, filter, filterLayout)))
    return failure();
  Type elementType = op.getGrad().getType().getElementType();
  if (failed(checkSameElementType(raw, inputName, input, elementType)) ||
      failed(checkSameElementType(raw, filterName, filter, elementType)))
    return failure();
  if (failed(checkList(raw, "stride", op.getStride(), 2, 1)) ||
      failed(checkList(raw, "padding", op.getPadding(), 4, 0)) ||
      failed(checkList(raw, "dilation", op.getDilation(), 2, 1)))
    return failure();
  Layout layout = layoutOf(op.getLayout());
  auto inputType = cast<RankedTensorType>(input.getType());
  auto filterType = cast<RankedTensorType>(filter.getType());
  int64_t groups = op.getGroupsAttr().getInt();
  int64_t channels = inputType.getDimSize(layout.channel);
  int64_t outChannels = filterType.getDimSize(0);
  if (groups < 1)
    return op.emitOpError() << "'groups' must be positive, got " << groups;
  if (channels % groups != 0)
    return op.emitOpError() << "input channels " << channels
                            << " must be divisible by 'groups' = " << groups;
  if (outChannels % groups != 0)
    return op.emitOpError()
           << "output channels " << outChannels << " (dim 0 of '" << filterName
           << "') must be divisible by 'groups' = " << groups;
  if (filterType.getDimSize(layout.channel) != channels / groups)
    return op.emitOpError()
           << "'" << filterName << "' " << shapeString(filterType)
           << " must have " << channels / groups << " channels (C/groups, dim "
           << layout.channel << ") for '" << inputName << "' "
           << shapeString(inputType) << " and 'groups' = " << groups;
  int64_t kernel[] = {filterType.getDimSize(layout.height),
                      filterType.getDimSize(layout.width)};
  return checkGradShape(raw, op.getGrad(), inputType, inputName,
                        windowedShape(inputType.getShape(), layout, outChannels,
                                      kernel, op.getStride(), op.getPadding(),
                                      op.getDilation()),
                        "conv2d");
}

LogicalResult Conv2dBackwardInputOp::verify() {
  return verifyConvBackward(*this, getResult(), "result", getFilter(),
                            "filter");
}

LogicalResult Conv2dBackwardFilterOp::verify() {
  return verifyConvBackward(*this, getInput(), "input", getResult(), "result");
}

/// The rules of the pooling ops for the forward `input` and `grad`.
template <typename OpTy>
static LogicalResult verifyPoolBackward(OpTy op, Value input,
                                        StringRef inputName) {
  Operation *raw = op.getOperation();
  StringRef activation = activationLayout(op.getLayout());
  if (failed(checkRank4(raw, "grad", op.getGrad(), activation)) ||
      failed(checkRank4(raw, inputName, input, activation)))
    return failure();
  if (failed(checkSameElementType(raw, inputName, input,
                                  op.getGrad().getType().getElementType())))
    return failure();
  ArrayRef<int64_t> kernel = op.getKernel(), padding = op.getPadding();
  if (failed(checkList(raw, "kernel", kernel, 2, 1)) ||
      failed(checkList(raw, "stride", op.getStride(), 2, 1)) ||
      failed(checkList(raw, "padding", padding, 4, 0)))
    return failure();
  static const char *sides[] = {"top", "bottom", "left", "right"};
  for (int i = 0; i < 4; ++i) {
    int64_t k = kernel[i / 2];
    if (padding[i] > k / 2)
      return op.emitOpError() << "'padding' " << sides[i] << " = " << padding[i]
                              << " must be at most half the kernel "
                              << (i < 2 ? "height" : "width") << " " << k
                              << " (" << k / 2 << ")";
  }
  Layout layout = layoutOf(op.getLayout());
  auto inputType = cast<RankedTensorType>(input.getType());
  int64_t dilation[] = {1, 1};
  return checkGradShape(raw, op.getGrad(), inputType, inputName,
                        windowedShape(inputType.getShape(), layout,
                                      inputType.getDimSize(layout.channel),
                                      kernel, op.getStride(), padding,
                                      dilation),
                        "pooling");
}

LogicalResult MaxPool2dBackwardOp::verify() {
  return verifyPoolBackward(*this, getInput(), "input");
}

LogicalResult AvgPool2dBackwardOp::verify() {
  return verifyPoolBackward(*this, getResult(), "result");
}

//===----------------------------------------------------------------------===//
// Embedding
//===----------------------------------------------------------------------===//

LogicalResult EmbeddingBackwardOp::verify() {
  auto result = cast<RankedTensorType>(getResult().getType());
  auto grad = cast<RankedTensorType>(getGrad().getType());
  if (result.getRank() != 2)
    return emitOpError() << "'result' must have rank 2 ([V, D]), got "
                         << shapeString(result);
  Shape expected(getIndices().getType().getShape());
  expected.push_back(result.getDimSize(1));
  if (grad.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError() << "'grad' must have shape " << formatShape(expected)
                         << " (the shape of 'indices' + [D]), got "
                         << shapeString(grad);
  if (result.getElementType() != grad.getElementType())
    return emitOpError() << "'result' must have element type "
                         << grad.getElementType() << " like 'grad', got "
                         << result.getElementType();
  return success();
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

LogicalResult CrossEntropyBackwardOp::verify() {
  return verifyCrossEntropy(*this, getLogits(), getLabels(),
                            getLabelSmoothing().convertToDouble(),
                            getIgnoreIndex());
}
