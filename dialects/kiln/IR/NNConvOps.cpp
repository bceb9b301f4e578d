//===- NNConvOps.cpp - conv2d, max_pool2d and avg_pool2d ------------------===//

#include "dialects/kiln/IR/KilnDialect.h"
#include "dialects/kiln/IR/KilnOpUtils.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// Positions of the dims of a 4-D activation in one layout.
struct Layout {
  int64_t channel, height, width;
  const char *activation, *filter, *filterNames;
};
} // namespace

static Layout layoutOf(ConvLayout layout) {
  if (layout == ConvLayout::nhwc)
    return {3,
            1,
            2,
            "[N, H, W, C]",
            "[O, KH, KW, C/groups]",
            "(O, KH, KW, C/groups)"};
  return {1,
          2,
          3,
          "[N, C, H, W]",
          "[O, C/groups, KH, KW]",
          "(O, C/groups, KH, KW)"};
}

/// Checks that the attribute `name` has `size` values, each >= `minimum`.
static LogicalResult checkList(std::optional<Location> location, StringRef name,
                               ArrayRef<int64_t> values, size_t size,
                               int64_t minimum) {
  if (values.size() != size)
    return inferenceError(location, "'", name, "' must have ", size,
                          " values, got ", formatShape(values));
  if (llvm::any_of(values, [&](int64_t v) { return v < minimum; }))
    return inferenceError(location, "'", name, "' values must be ",
                          minimum == 0 ? "non-negative" : "positive", ", got ",
                          formatShape(values));
  return success();
}

/// Output size along one spatial axis, or a message when it would be empty.
static FailureOr<int64_t> outputSize(std::optional<Location> location,
                                     StringRef axis, int64_t size,
                                     int64_t padBefore, int64_t padAfter,
                                     int64_t kernel, int64_t stride,
                                     int64_t dilation) {
  int64_t padded = size + padBefore + padAfter;
  int64_t window = dilation * (kernel - 1) + 1;
  if (padded < window) {
    std::string dilated = dilation == 1
                              ? ""
                              : " (" + std::to_string(dilation) + " * (" +
                                    std::to_string(kernel) + " - 1) + 1)";
    (void)inferenceError(location, "the padded input ", axis, " ", padded, " (",
                         size, " + ", padBefore, " + ", padAfter,
                         ") is smaller than the ",
                         dilation == 1 ? "" : "dilated ", "kernel ", axis, " ",
                         window, dilated, "; the output would be empty");
    return failure();
  }
  return (padded - window) / stride + 1;
}

/// Checks `name` is a rank-4 tensor and returns its type.
static RankedTensorType rank4(std::optional<Location> location, StringRef name,
                              Value value, StringRef layout) {
  RankedTensorType type = rankedType(value);
  if (!type) {
    (void)inferenceError(location, "'", name, "' must be a ranked tensor");
    return {};
  }
  if (type.getRank() != 4) {
    (void)inferenceError(location, "'", name, "' must have rank 4 (", layout,
                         "), got ", shapeString(type));
    return {};
  }
  return type;
}

/// The result type of a windowed op over `input`: spatial sizes from the
/// window, channels `channels`.
static FailureOr<RankedTensorType>
windowedResult(std::optional<Location> location, RankedTensorType input,
               const Layout &layout, int64_t channels, ArrayRef<int64_t> kernel,
               ArrayRef<int64_t> stride, ArrayRef<int64_t> padding,
               ArrayRef<int64_t> dilation) {
  FailureOr<int64_t> height =
      outputSize(location, "height", input.getDimSize(layout.height),
                 padding[0], padding[1], kernel[0], stride[0], dilation[0]);
  if (failed(height))
    return failure();
  FailureOr<int64_t> width =
      outputSize(location, "width", input.getDimSize(layout.width), padding[2],
                 padding[3], kernel[1], stride[1], dilation[1]);
  if (failed(width))
    return failure();
  Shape shape(input.getShape());
  shape[layout.channel] = channels;
  shape[layout.height] = *height;
  shape[layout.width] = *width;
  return RankedTensorType::get(shape, input.getElementType());
}

/// The value of a default-valued list attribute, which is still absent while
/// the custom parser infers the result type.
static ArrayRef<int64_t> orDefault(DenseI64ArrayAttr attr,
                                   ArrayRef<int64_t> fallback) {
  return attr ? attr.asArrayRef() : fallback;
}

static constexpr int64_t kOnes[] = {1, 1};
static constexpr int64_t kZeros[] = {0, 0, 0, 0};

//===----------------------------------------------------------------------===//
// conv2d
//===----------------------------------------------------------------------===//

LogicalResult Conv2dOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  if (!adaptor.getLayoutAttr())
    return inferenceError(location, "'layout' is required (nchw or nhwc)");
  Layout layout = layoutOf(adaptor.getLayout());
  RankedTensorType input =
      rank4(location, "input", adaptor.getInput(), layout.activation);
  if (!input)
    return failure();
  RankedTensorType filter =
      rank4(location, "filter", adaptor.getFilter(), layout.filter);
  if (!filter)
    return failure();
  ArrayRef<int64_t> stride = orDefault(adaptor.getStrideAttr(), kOnes);
  ArrayRef<int64_t> padding = orDefault(adaptor.getPaddingAttr(), kZeros);
  ArrayRef<int64_t> dilation = orDefault(adaptor.getDilationAttr(), kOnes);
  if (failed(checkList(location, "stride", stride, 2, 1)) ||
      failed(checkList(location, "padding", padding, 4, 0)) ||
      failed(checkList(location, "dilation", dilation, 2, 1)))
    return failure();
  // The filter's spatial dims sit where the activation's do.
  int64_t kernel[] = {filter.getDimSize(layout.height),
                      filter.getDimSize(layout.width)};
  FailureOr<RankedTensorType> result =
      windowedResult(location, input, layout, filter.getDimSize(0), kernel,
                     stride, padding, dilation);
  if (failed(result))
    return failure();
  results.push_back(*result);
  return success();
}

LogicalResult Conv2dOp::verify() {
  Layout layout = layoutOf(getLayout());
  auto input = cast<RankedTensorType>(getInput().getType());
  auto filter = cast<RankedTensorType>(getFilter().getType());
  int64_t groups = getGroupsAttr().getInt();
  int64_t channels = input.getDimSize(layout.channel);
  int64_t outChannels = filter.getDimSize(0);
  if (groups < 1)
    return emitOpError() << "'groups' must be positive, got " << groups;
  if (channels % groups != 0)
    return emitOpError() << "input channels " << channels
                         << " must be divisible by 'groups' = " << groups;
  if (outChannels % groups != 0)
    return emitOpError()
           << "output channels " << outChannels
           << " (dim 0 of 'filter') must be divisible by 'groups' = " << groups;
  Shape expected(filter.getShape());
  expected[layout.channel] = channels / groups;
  if (filter.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError() << "'filter' must have shape " << formatShape(expected)
                         << " for " << stringifyConvLayout(getLayout()) << " "
                         << layout.filterNames << ", got "
                         << shapeString(filter);
  if (filter.getElementType() != input.getElementType())
    return emitOpError() << "'filter' must have element type "
                         << input.getElementType() << " like 'input', got "
                         << filter.getElementType();
  if (Value bias = getBias()) {
    auto type = cast<RankedTensorType>(bias.getType());
    if (type.getShape() != ArrayRef<int64_t>{outChannels})
      return emitOpError() << "'bias' must have shape [" << outChannels
                           << "] (the output channels), got "
                           << shapeString(type);
    if (type.getElementType() != input.getElementType())
      return emitOpError() << "'bias' must have element type "
                           << input.getElementType() << " like 'input', got "
                           << type.getElementType();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

template <typename PoolOp>
static LogicalResult inferPool(std::optional<Location> location,
                               typename PoolOp::Adaptor adaptor,
                               SmallVectorImpl<Type> &results) {
  if (!adaptor.getLayoutAttr())
    return inferenceError(location, "'layout' is required (nchw or nhwc)");
  if (!adaptor.getKernelAttr())
    return inferenceError(location, "'kernel' is required");
  Layout layout = layoutOf(adaptor.getLayout());
  RankedTensorType input =
      rank4(location, "input", adaptor.getInput(), layout.activation);
  if (!input)
    return failure();
  ArrayRef<int64_t> kernel = adaptor.getKernel();
  ArrayRef<int64_t> stride = orDefault(adaptor.getStrideAttr(), kOnes);
  ArrayRef<int64_t> padding = orDefault(adaptor.getPaddingAttr(), kZeros);
  if (failed(checkList(location, "kernel", kernel, 2, 1)) ||
      failed(checkList(location, "stride", stride, 2, 1)) ||
      failed(checkList(location, "padding", padding, 4, 0)))
    return failure();
  int64_t dilation[] = {1, 1};
  FailureOr<RankedTensorType> result =
      windowedResult(location, input, layout, input.getDimSize(layout.channel),
                     kernel, stride, padding, dilation);
  if (failed(result))
    return failure();
  results.push_back(*result);
  return success();
}

/// Each padding value is at most half the kernel along its axis, so every
/// window overlaps the input (a max over padding alone would be -infinity).
static LogicalResult verifyPoolPadding(Operation *op, ArrayRef<int64_t> kernel,
                                       ArrayRef<int64_t> padding) {
  static const char *sides[] = {"top", "bottom", "left", "right"};
  for (int i = 0; i < 4; ++i) {
    int64_t k = kernel[i / 2];
    if (padding[i] > k / 2)
      return op->emitOpError()
             << "'padding' " << sides[i] << " = " << padding[i]
             << " must be at most half the kernel "
             << (i < 2 ? "height" : "width") << " " << k << " (" << k / 2
             << ")";
  }
  return success();
}

LogicalResult MaxPool2dOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  return inferPool<MaxPool2dOp>(location, adaptor, results);
}

LogicalResult AvgPool2dOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  return inferPool<AvgPool2dOp>(location, adaptor, results);
}

LogicalResult MaxPool2dOp::verify() {
  return verifyPoolPadding(*this, getKernel(), getPadding());
}

LogicalResult AvgPool2dOp::verify() {
  return verifyPoolPadding(*this, getKernel(), getPadding());
}
