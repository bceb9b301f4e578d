//===- NNImporters.cpp - ONNX matmul, conv, pooling, norms, softmax -------===//
//
// MatMul/Gemm onto kiln.matmul; Conv, ConvTranspose and the 2-D pools onto
// kiln.conv2d, kiln.conv2d_backward_input and kiln.max_pool2d/avg_pool2d in
// NCHW (1-D ones through a height of 1);
// normalisations onto kiln.layer_norm or composed; softmax-like ops onto
// kiln's with ONNX's axis conventions (opset < 13 flattens to 2-D).
//
//===----------------------------------------------------------------------===//

#include "compiler/import/onnx/GraphImporter.h"
#include "dialects/kiln/Utils/ShapeInference.h"

#include <numeric>

namespace mlir::kiln::onnx_import {
namespace {

int64_t product(llvm::ArrayRef<int64_t> dims) {
  return std::accumulate(dims.begin(), dims.end(), int64_t{1},
                         std::multiplies<int64_t>());
}

bool isFloatValue(Value v) {
  return v && llvm::isa<FloatType>(KilnBuilder::elementOf(v));
}

LogicalResult importMatMul(OnnxNode &node) {
  Value a = node.input(0), b = node.input(1);
  if (!a || !b)
    return failure();
  if (!isFloatValue(a))
    return node.unsupported("an integer MatMul (kiln.matmul is floating "
                            "point)");
  auto ta = KilnBuilder::typeOf(a), tb = KilnBuilder::typeOf(b);
  // numpy.matmul: a rank-1 lhs is a row, a rank-1 rhs a column, and the
  // added dimension is removed again.
  bool rowVector = ta.getRank() == 1, columnVector = tb.getRank() == 1;
  if (rowVector)
    a = node.reshape(a, {1, ta.getDimSize(0)});
  if (columnVector)
    b = node.reshape(b, {tb.getDimSize(0), 1});
  if (failed(node.checkMatmul(a, b, false, false)))
    return failure();
  Value result = node.kb().matmul(a, b);
  auto shape = llvm::to_vector(KilnBuilder::typeOf(result).getShape());
  if (columnVector)
    shape.erase(shape.end() - 1);
  if (rowVector)
    shape.erase(shape.end() - (columnVector ? 1 : 2));
  node.setResult(0, node.reshape(result, shape));
  return success();
}

LogicalResult importGemm(OnnxNode &node) {
  Value a = node.input(0), b = node.input(1);
  if (!a || !b)
    return failure();
  if (!isFloatValue(a))
    return node.unsupported("an integer Gemm");
  double alpha = node.floatAttr("alpha", 1.0f);
  double beta = node.floatAttr("beta", 1.0f);
  bool transA = node.intAttr("transA", 0) != 0;
  bool transB = node.intAttr("transB", 0) != 0;
  if (node.opset() < 7)
    node.ignoreAttr("broadcast");
  KilnBuilder kb = node.kb();
  if (KilnBuilder::typeOf(a).getRank() != 2 ||
      KilnBuilder::typeOf(b).getRank() != 2)
    return node.emitError() << "Gemm needs rank-2 A and B";
  if (failed(node.checkMatmul(a, b, transA, transB)))
    return failure();
  Value y = kb.matmul(a, b, transA, transB);
  if (alpha != 1.0)
    y = kb.mul(y, node.scalarLike(alpha, y));
  if (node.hasInput(2)) {
    Value c = node.input(2);
    if (!c || failed(node.checkBroadcast({y, c})))
      return failure();
    if (beta != 1.0)
      c = kb.mul(c, node.scalarLike(beta, c));
    Value sum = kb.add(y, c);
    if (KilnBuilder::typeOf(sum) != KilnBuilder::typeOf(y))
      return node.emitError() << "Gemm's C must broadcast to [M, N]";
    y = sum;
  }
  node.setResult(0, y);
  return success();
}

/// Spatial geometry shared by Conv and the pools: kernel, strides, pads
/// [top, bottom, left, right] and dilations in 2-D, after auto_pad.
struct Window {
  llvm::SmallVector<int64_t> kernel, stride, dilation, padding;
  bool oneD = false;
};

/// Reads kernel_shape (or `kernelFromFilter`), strides, dilations, pads and
/// auto_pad for spatial input dims `spatial` (1 or 2 of them).
FailureOr<Window> readWindow(OnnxNode &node, llvm::ArrayRef<int64_t> spatial,
                             llvm::ArrayRef<int64_t> kernelFromFilter,
                             bool hasDilations) {
  int64_t n = spatial.size();
  Window w;
  w.kernel = node.intsAttr("kernel_shape", kernelFromFilter);
  w.stride = node.intsAttr("strides", llvm::SmallVector<int64_t>(n, 1));
  w.dilation = hasDilations ? node.intsAttr("dilations",
                                            llvm::SmallVector<int64_t>(n, 1))
                            : llvm::SmallVector<int64_t>(n, 1);
  llvm::SmallVector<int64_t> pads =
      node.intsAttr("pads", llvm::SmallVector<int64_t>(2 * n, 0));
  std::string autoPad = node.stringAttr("auto_pad", "NOTSET");
  if (static_cast<int64_t>(w.kernel.size()) != n ||
      static_cast<int64_t>(w.stride.size()) != n ||
      static_cast<int64_t>(w.dilation.size()) != n ||
      static_cast<int64_t>(pads.size()) != 2 * n)
    return node.emitError() << "ONNX " << node.opType()
                            << "'s kernel_shape, strides, dilations and pads "
                               "must match the "
                            << n << " spatial dimensions",
           failure();
  if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    for (int64_t d = 0; d < n; ++d) {
      int64_t out = (spatial[d] + w.stride[d] - 1) / w.stride[d];
      int64_t total = std::max<int64_t>(
          0, (out - 1) * w.stride[d] + (w.kernel[d] - 1) * w.dilation[d] + 1 -
                 spatial[d]);
      int64_t small = total / 2, large = total - small;
      pads[d] = autoPad == "SAME_UPPER" ? small : large;
      pads[d + n] = autoPad == "SAME_UPPER" ? large : small;
    }
  } else if (autoPad == "VALID") {
    pads.assign(2 * n, 0);
  } else if (autoPad != "NOTSET") {
    return static_cast<void>(node.unsupported("auto_pad = '" + autoPad + "'")),
           failure();
  }
  if (n == 1) {
    w.oneD = true;
    w.kernel.insert(w.kernel.begin(), 1);
    w.stride.insert(w.stride.begin(), 1);
    w.dilation.insert(w.dilation.begin(), 1);
    w.padding = {0, 0, pads[0], pads[1]};
  } else {
    w.padding = {pads[0], pads[2], pads[1], pads[3]};
  }
  return w;
}

/// A rank-3 [N, C, L] value as [N, C, 1, L].
Value as2d(OnnxNode &node, Value x) {
  auto shape = llvm::to_vector(KilnBuilder::typeOf(x).getShape());
  shape.insert(shape.begin() + 2, 1);
  return node.reshape(x, shape);
}

Value from2d(OnnxNode &node, Value y) {
  auto shape = llvm::to_vector(KilnBuilder::typeOf(y).getShape());
  shape.erase(shape.begin() + 2);
  return node.reshape(y, shape);
}

/// `v` of shape [C] reshaped to broadcast along dim 1 of a rank-`rank` value.
Value channelwise(OnnxNode &node, Value v, int64_t rank) {
  llvm::SmallVector<int64_t> shape(rank, 1);
  shape[1] = KilnBuilder::typeOf(v).getDimSize(0);
  return node.reshape(v, shape);
}

/// Every output size is positive (kiln's conv and pools need it).
LogicalResult checkOutputSize(OnnxNode &node, llvm::ArrayRef<int64_t> spatial,
                              const Window &w) {
  for (size_t d = 0; d < spatial.size(); ++d) {
    size_t k = w.oneD ? 1 : d;
    int64_t padded = spatial[d] + w.padding[2 * k] + w.padding[2 * k + 1] -
                     (w.kernel[k] - 1) * w.dilation[k] - 1;
    if (w.kernel[k] <= 0 || w.stride[k] <= 0 || w.dilation[k] <= 0 ||
        padded < 0)
      return node.emitError() << "ONNX " << node.opType()
                              << "'s window does not fit spatial dimension "
                              << d << " of size " << spatial[d];
  }
  return success();
}

LogicalResult importConv(OnnxNode &node) {
  Value x = node.input(0), w = node.input(1);
  if (!x || !w)
    return failure();
  auto tx = KilnBuilder::typeOf(x), tw = KilnBuilder::typeOf(w);
  if (!isFloatValue(x))
    return node.unsupported("an integer Conv");
  if (tx.getRank() != 3 && tx.getRank() != 4)
    return node.unsupported("a " + std::to_string(tx.getRank() - 2) +
                            "-D Conv (1-D and 2-D only)");
  auto window = readWindow(node, tx.getShape().drop_front(2),
                           tw.getShape().drop_front(2), true);
  if (failed(window))
    return failure();
  int64_t groups = node.intAttr("group", 1);
  Value bias = node.hasInput(2) ? node.input(2) : Value();
  if (node.hasInput(2) && !bias)
    return failure();
  if (tw.getRank() != tx.getRank() ||
      tw.getElementType() != tx.getElementType() || groups <= 0 ||
      tw.getDimSize(0) % groups != 0 ||
      tw.getDimSize(1) * groups != tx.getDimSize(1) ||
      (bias && (KilnBuilder::typeOf(bias).getShape() !=
                    llvm::ArrayRef<int64_t>{tw.getDimSize(0)} ||
                KilnBuilder::elementOf(bias) != tx.getElementType())))
    return node.emitError() << "Conv's input " << tx << ", weights " << tw
                            << (bias ? " and bias" : "")
                            << " do not fit together with group = " << groups;
  if (failed(checkOutputSize(node, tx.getShape().drop_front(2), *window)))
    return failure();
  if (window->oneD) {
    x = as2d(node, x);
    w = as2d(node, w);
  }
  Value y = node.builder().create<Conv2dOp>(
      node.loc(), x, w, bias, ConvLayout::nchw, window->stride, window->padding,
      window->dilation, groups);
  node.setResult(0, window->oneD ? from2d(node, y) : y);
  return success();
}

/// ConvTranspose (1-D, 2-D) is the input gradient of the Conv whose input
/// has the ConvTranspose's output shape and whose filter is its weight
/// [C_in, C_out/group, k...] as it is: one kiln.conv2d_backward_input, whose
/// gradient rule, reference and kernels it uses. That Conv must map the
/// output back onto the input's shape, so output_padding stays below the
/// stride.
LogicalResult importConvTranspose(OnnxNode &node) {
  Value x = node.input(0), w = node.input(1);
  if (!x || !w)
    return failure();
  auto tx = KilnBuilder::typeOf(x), tw = KilnBuilder::typeOf(w);
  if (!isFloatValue(x))
    return node.unsupported("an integer ConvTranspose");
  if (tx.getRank() != 3 && tx.getRank() != 4)
    return node.unsupported("a " + std::to_string(tx.getRank() - 2) +
                            "-D ConvTranspose (1-D and 2-D only)");
  std::string autoPad = node.stringAttr("auto_pad", "NOTSET");
  if (autoPad != "NOTSET" && autoPad != "VALID")
    return node.unsupported("auto_pad = '" + autoPad + "' on ConvTranspose");
  if (node.hasAttr("output_shape"))
    return node.unsupported("output_shape on ConvTranspose (give pads and "
                            "output_padding instead)");
  int64_t groups = node.intAttr("group", 1);
  Value bias = node.hasInput(2) ? node.input(2) : Value();
  if (node.hasInput(2) && !bias)
    return failure();
  int64_t outChannels = tw.getRank() > 1 ? tw.getDimSize(1) * groups : 0;
  if (tw.getRank() != tx.getRank() ||
      tw.getElementType() != tx.getElementType() || groups <= 0 ||
      tw.getDimSize(0) != tx.getDimSize(1) || tw.getDimSize(0) % groups != 0 ||
      (bias && (KilnBuilder::typeOf(bias).getShape() !=
                    llvm::ArrayRef<int64_t>{outChannels} ||
                KilnBuilder::elementOf(bias) != tx.getElementType())))
    return node.emitError() << "ConvTranspose's input " << tx << ", weights "
                            << tw << (bias ? " and bias" : "")
                            << " do not fit together with group = " << groups;
  llvm::ArrayRef<int64_t> spatial = tx.getShape().drop_front(2),
                          kernel = tw.getShape().drop_front(2);
  auto window = readWindow(node, spatial, kernel, true);
  if (failed(window))
    return failure();
  llvm::SmallVector<int64_t> outputPadding = node.intsAttr(
      "output_padding", llvm::SmallVector<int64_t>(spatial.size(), 0));
  if (outputPadding.size() != spatial.size())
    return node.emitError() << "ConvTranspose's output_padding must have "
                            << spatial.size() << " entries";
  llvm::SmallVector<int64_t> outShape = {tx.getDimSize(0), outChannels};
  for (size_t d = 0; d < spatial.size(); ++d) {
    size_t k = window->oneD ? 1 : d;
    if (window->kernel[k] != kernel[d])
      return node.emitError() << "ConvTranspose's kernel_shape does not "
                                 "match its weights "
                              << tw;
    for (int64_t pad : {window->padding[2 * k], window->padding[2 * k + 1]})
      if (pad < 0)
        return node.unsupported("negative pads on ConvTranspose");
    if (outputPadding[d] < 0 || outputPadding[d] >= window->stride[k])
      return node.unsupported("output_padding " +
                              std::to_string(outputPadding[d]) +
                              " outside [0, stride) on ConvTranspose");
    int64_t size = window->stride[k] * (spatial[d] - 1) + outputPadding[d] +
                   window->dilation[k] * (kernel[d] - 1) + 1 -
                   window->padding[2 * k] - window->padding[2 * k + 1];
    if (window->stride[k] <= 0 || window->dilation[k] <= 0 || size <= 0)
      return node.emitError() << "ConvTranspose's output size " << size
                              << " of spatial dimension " << d
                              << " is not positive";
    outShape.push_back(size);
  }
  if (window->oneD) {
    x = as2d(node, x);
    w = as2d(node, w);
    outShape.insert(outShape.begin() + 2, 1);
  }
  Value y = node.builder().create<Conv2dBackwardInputOp>(
      node.loc(), RankedTensorType::get(outShape, tx.getElementType()), x, w,
      ConvLayout::nchw, window->stride, window->padding, window->dilation,
      groups);
  if (bias)
    y = node.kb().add(y, channelwise(node, bias, 4));
  node.setResult(0, window->oneD ? from2d(node, y) : y);
  return success();
}

/// ceil_mode = 1: the output sizes are ceil((padded - window) / stride) + 1.
/// The extra last window, where there is one, reads past the bottom/right
/// padding; padding it further gives kiln's floor-mode pool the same windows
/// (padding never wins a maximum, nor counts in an average without
/// count_include_pad). The extra window must start inside the input or its
/// top/left padding, or it would hold padding only.
enum class CeilPadding { kNone, kAdded, kEmptyWindow };
CeilPadding padForCeilMode(llvm::ArrayRef<int64_t> spatial, Window &w) {
  CeilPadding result = CeilPadding::kNone;
  for (size_t d = 0; d < spatial.size(); ++d) {
    size_t k = w.oneD ? 1 : d;
    int64_t span = spatial[d] + w.padding[2 * k] + w.padding[2 * k + 1] -
                   ((w.kernel[k] - 1) * w.dilation[k] + 1);
    int64_t rest = span % w.stride[k];
    if (span < 0 || rest == 0)
      continue;
    int64_t lastStart = (span / w.stride[k] + 1) * w.stride[k];
    if (lastStart >= spatial[d] + w.padding[2 * k])
      return CeilPadding::kEmptyWindow;
    w.padding[2 * k + 1] += w.stride[k] - rest;
    result = CeilPadding::kAdded;
  }
  return result;
}

OpImporter pool(bool isMax) {
  return [isMax](OnnxNode &node) -> LogicalResult {
    Value x = node.input(0);
    if (!x)
      return failure();
    auto tx = KilnBuilder::typeOf(x);
    if (!isFloatValue(x))
      return node.unsupported("an integer " + node.opType());
    if (tx.getRank() != 3 && tx.getRank() != 4)
      return node.unsupported("a " + std::to_string(tx.getRank() - 2) + "-D " +
                              node.opType() + " (1-D and 2-D only)");
    // AveragePool has dilations from version 19 on.
    bool hasDilations = isMax || node.version() >= 19;
    auto window =
        readWindow(node, tx.getShape().drop_front(2), {}, hasDilations);
    if (failed(window))
      return failure();
    bool includePad = !isMax && node.intAttr("count_include_pad", 0) != 0;
    if (node.intAttr("ceil_mode", 0) != 0) {
      CeilPadding ceil = padForCeilMode(tx.getShape().drop_front(2), *window);
      if (ceil == CeilPadding::kEmptyWindow)
        return node.unsupported("ceil_mode = 1 where the extra window holds "
                                "padding only");
      if (ceil == CeilPadding::kAdded && includePad)
        return node.unsupported("ceil_mode = 1 with count_include_pad = 1 "
                                "where ceil mode adds a window");
    }
    for (int64_t d : window->dilation)
      if (d != 1)
        return node.unsupported("dilations other than 1 in " + node.opType());
    if (isMax && node.intAttr("storage_order", 0) != 0)
      return node.unsupported("storage_order = 1");
    if (node.hasOutput(1))
      return node.unsupported("the Indices output of MaxPool");
    if (failed(checkOutputSize(node, tx.getShape().drop_front(2), *window)))
      return failure();
    for (size_t i = 0; i < 4; ++i)
      if (window->padding[i] * 2 > window->kernel[i / 2])
        return node.unsupported("padding larger than half the kernel");
    if (window->oneD)
      x = as2d(node, x);
    Value y;
    if (isMax) {
      y = node.builder().create<MaxPool2dOp>(node.loc(), x, window->kernel,
                                             window->stride, window->padding,
                                             ConvLayout::nchw);
    } else {
      y = node.builder().create<AvgPool2dOp>(node.loc(), x, window->kernel,
                                             window->stride, window->padding,
                                             ConvLayout::nchw, includePad);
    }
    node.setResult(0, window->oneD ? from2d(node, y) : y);
    return success();
  };
}

OpImporter globalPool(bool isMax) {
  return [isMax](OnnxNode &node) -> LogicalResult {
    Value x = node.input(0);
    if (!x)
      return failure();
    if (!isFloatValue(x))
      return node.unsupported("an integer " + node.opType());
    auto tx = KilnBuilder::typeOf(x);
    llvm::SmallVector<int64_t> dims;
    for (int64_t d = 2; d < tx.getRank(); ++d)
      dims.push_back(d);
    if (dims.empty())
      return node.emitError() << node.opType() << " needs spatial dimensions";
    Value y = isMax ? node.builder()
                          .create<ReduceMaxOp>(node.loc(), x, dims, true)
                          .getResult()
                    : node.builder()
                          .create<ReduceMeanOp>(node.loc(), x, dims, true)
                          .getResult();
    node.setResult(0, y);
    return success();
  };
}

LogicalResult importBatchNorm(OnnxNode &node) {
  Value x = node.input(0), scale = node.input(1), bias = node.input(2),
        mean = node.input(3), var = node.input(4);
  if (!x || !scale || !bias || !mean || !var)
    return failure();
  if (!isFloatValue(x))
    return node.unsupported("an integer BatchNormalization");
  auto tx = KilnBuilder::typeOf(x);
  if (tx.getRank() < 2)
    return node.emitError() << "BatchNormalization needs [N, C, ...]";
  for (Value v : {scale, bias, mean, var})
    if (KilnBuilder::typeOf(v).getShape() !=
            llvm::ArrayRef<int64_t>{tx.getDimSize(1)} ||
        KilnBuilder::elementOf(v) != tx.getElementType())
      return node.emitError() << "BatchNormalization's scale, B, mean and var "
                                 "must be ["
                              << tx.getDimSize(1) << "] of the input's type";
  double eps = node.floatAttr("epsilon", 1e-5f);
  double momentum = node.floatAttr("momentum", 0.9f);
  bool training = node.intAttr("training_mode", 0) != 0;
  if (node.opset() < 7)
    return node.unsupported("BatchNormalization before opset 7");
  // Opsets 7 and 8: spatial = 0 normalises every activation separately.
  if (node.opset() < 9 && node.intAttr("spatial", 1) != 1)
    return node.unsupported("spatial = 0");
  KilnBuilder kb = node.kb();
  int64_t rank = tx.getRank();
  if (!training) {
    if (node.numOutputs() > 1 && (node.hasOutput(1) || node.hasOutput(2)))
      return node.unsupported("running statistics outputs in inference "
                              "mode");
    // Training such a graph keeps the statistics fixed (PyTorch's eval
    // mode), which is what the graph says but rarely what is meant.
    if (!node.options().trainable.empty())
      mlir::emitWarning(node.loc())
          << "BatchNormalization in inference mode normalises with the "
             "graph's fixed mean and variance while training; export in "
             "training mode (training_mode = 1) for batch statistics";
    // Inference: the normalisation with the given statistics, elementwise.
    Value inv = kb.rsqrt(kb.add(var, node.scalarLike(eps, var)));
    Value y = kb.mul(kb.sub(x, channelwise(node, mean, rank)),
                     channelwise(node, kb.mul(inv, scale), rank));
    node.setResult(0, kb.add(y, channelwise(node, bias, rank)));
    return success();
  }
  auto bn = node.builder().create<BatchNormOp>(
      node.loc(), x, scale, bias, ValueRange{}, /*dim=*/1, llvm::APFloat(eps),
      FloatAttr(), /*eval=*/false);
  node.setResult(0, bn.getResult());
  // ONNX's running statistics: input * momentum + batch * (1 - momentum),
  // with the biased batch variance.
  Value m = node.scalarLike(momentum, mean);
  Value rest = node.scalarLike(1.0 - momentum, mean);
  node.setResult(1, kb.add(kb.mul(mean, m), kb.mul(bn.getMean(), rest)));
  node.setResult(2, kb.add(kb.mul(var, m), kb.mul(bn.getVariance(), rest)));
  return success();
}

/// InstanceNormalization: a group norm with a group per channel. (PyTorch's
/// nn.GroupNorm exports as one over [N, groups, -1] between reshapes, which
/// fuseGroupNormPatterns turns into the group norm it is.)
LogicalResult importInstanceNorm(OnnxNode &node) {
  Value x = node.input(0), scale = node.input(1), bias = node.input(2);
  if (!x || !scale || !bias)
    return failure();
  if (!isFloatValue(x))
    return node.unsupported("an integer InstanceNormalization");
  double eps = node.floatAttr("epsilon", 1e-5f);
  auto tx = KilnBuilder::typeOf(x);
  if (tx.getRank() < 3)
    return node.emitError() << "InstanceNormalization needs [N, C, ...]";
  for (Value v : {scale, bias})
    if (KilnBuilder::typeOf(v).getShape() !=
            llvm::ArrayRef<int64_t>{tx.getDimSize(1)} ||
        KilnBuilder::elementOf(v) != tx.getElementType())
      return node.emitError() << "InstanceNormalization's scale and B must "
                                 "be [C] of the input's type";
  node.setResult(0, node.builder().create<GroupNormOp>(
                        node.loc(), tx, x, scale, bias, tx.getDimSize(1),
                        llvm::APFloat(eps)));
  return success();
}

/// GroupNormalization: scale and bias per group in version 18, per channel
/// from version 21.
LogicalResult importGroupNorm(OnnxNode &node) {
  Value x = node.input(0), scale = node.input(1), bias = node.input(2);
  if (!x || !scale || !bias)
    return failure();
  if (!isFloatValue(x))
    return node.unsupported("an integer GroupNormalization");
  auto tx = KilnBuilder::typeOf(x);
  if (tx.getRank() < 3)
    return node.emitError()
           << "GroupNormalization needs [N, C, ...], not " << tx;
  double eps = node.floatAttr("epsilon", 1e-5f);
  if (!node.hasAttr("num_groups"))
    return node.emitError() << "GroupNormalization needs num_groups";
  int64_t groups = node.intAttr("num_groups", 0);
  int64_t channels = tx.getDimSize(1);
  if (groups <= 0 || channels % groups != 0)
    return node.emitError()
           << "GroupNormalization's num_groups " << groups
           << " does not divide the " << channels << " channels";
  bool perChannel = node.version() >= 21;
  if (perChannel && node.intAttr("stash_type", 1) != 1)
    return node.unsupported("stash_type = " +
                            std::to_string(node.intAttr("stash_type", 1)));
  int64_t expected = perChannel ? channels : groups;
  for (Value v : {scale, bias})
    if (KilnBuilder::typeOf(v).getShape() !=
            llvm::ArrayRef<int64_t>{expected} ||
        KilnBuilder::elementOf(v) != tx.getElementType())
      return node.emitError()
             << "GroupNormalization-" << node.version()
             << "'s scale and bias must be [" << expected
             << "] of the input's type, not " << KilnBuilder::typeOf(v);
  if (!perChannel) {
    // Each group's value repeated over its channels.
    auto perGroup = [&](Value v) {
      auto type = RankedTensorType::get({groups, channels / groups},
                                        tx.getElementType());
      Value spread = node.kb().broadcastTo(node.reshape(v, {groups, 1}), type);
      return node.reshape(spread, {channels});
    };
    scale = perGroup(scale);
    bias = perGroup(bias);
  }
  node.setResult(0, node.builder().create<GroupNormOp>(
                        node.loc(), tx, x, scale, bias, groups,
                        llvm::APFloat(eps)));
  return success();
}

/// MeanVarianceNormalization as ONNX defines it:
/// (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9) over `axes`.
LogicalResult importMeanVarianceNorm(OnnxNode &node) {
  Value x = node.input(0);
  if (!x)
    return failure();
  if (!isFloatValue(x))
    return node.unsupported("an integer MeanVarianceNormalization");
  auto tx = KilnBuilder::typeOf(x);
  llvm::SmallVector<int64_t> axes = node.intsAttr("axes", {0, 2, 3});
  llvm::SmallVector<int64_t> dims;
  for (int64_t axis : axes) {
    auto a = node.normalizeAxis(axis, tx.getRank());
    if (failed(a))
      return failure();
    if (!llvm::is_contained(dims, *a))
      dims.push_back(*a);
  }
  llvm::sort(dims);
  if (dims.empty())
    return node.emitError() << "MeanVarianceNormalization needs axes";
  OpBuilder &b = node.builder();
  KilnBuilder kb = node.kb();
  Value mean = b.create<ReduceMeanOp>(node.loc(), x, dims, true);
  Value meanOfSquares =
      b.create<ReduceMeanOp>(node.loc(), kb.mul(x, x), dims, true);
  Value std = kb.sqrt(kb.sub(meanOfSquares, kb.mul(mean, mean)));
  node.setResult(
      0, kb.div(kb.sub(x, mean), kb.add(std, node.scalarLike(1e-9, std))));
  return success();
}

LogicalResult importLayerNorm(OnnxNode &node) {
  Value x = node.input(0), scale = node.input(1);
  if (!x || !scale)
    return failure();
  if (!isFloatValue(x))
    return node.unsupported("an integer LayerNormalization");
  auto tx = KilnBuilder::typeOf(x);
  auto axis = node.normalizeAxis(node.intAttr("axis", -1), tx.getRank());
  if (failed(axis))
    return failure();
  double eps = node.floatAttr("epsilon", 1e-5f);
  int64_t stash = node.intAttr("stash_type", 1);
  if (stash != 1)
    return node.unsupported("stash_type = " + std::to_string(stash));
  auto normShape = tx.getShape().drop_front(*axis);
  auto normType = RankedTensorType::get(normShape, tx.getElementType());
  KilnBuilder kb = node.kb();
  auto checkParam = [&](Value v) -> LogicalResult {
    if (!isBroadcastableTo(KilnBuilder::typeOf(v).getShape(), normShape) ||
        KilnBuilder::elementOf(v) != tx.getElementType())
      return node.emitError()
             << "LayerNormalization's " << KilnBuilder::typeOf(v)
             << " does not broadcast to the normalised "
                "shape of "
             << tx;
    return success();
  };
  if (failed(checkParam(scale)) ||
      (node.hasInput(2) && node.input(2) && failed(checkParam(node.input(2)))))
    return failure();
  scale = kb.broadcastTo(scale, normType);
  Value bias;
  if (node.hasInput(2)) {
    bias = node.input(2);
    if (!bias)
      return failure();
    bias = kb.broadcastTo(bias, normType);
  }
  int64_t numDims = tx.getRank() - *axis;
  node.setResult(0, node.builder().create<LayerNormOp>(node.loc(), tx, x, scale,
                                                       bias, numDims,
                                                       llvm::APFloat(eps)));
  if (node.hasOutput(1) || node.hasOutput(2)) {
    llvm::SmallVector<int64_t> dims;
    for (int64_t d = *axis; d < tx.getRank(); ++d)
      dims.push_back(d);
    OpBuilder &b = node.builder();
    Value mean = b.create<ReduceMeanOp>(node.loc(), x, dims, true);
    Value centred = kb.sub(x, mean);
    Value var = b.create<ReduceMeanOp>(node.loc(), kb.mul(centred, centred),
                                       dims, true);
    node.setResult(1, mean);
    node.setResult(2, kb.rsqrt(kb.add(var, node.scalarLike(eps, var))));
  }
  return success();
}

enum class SoftmaxKind { Softmax, LogSoftmax, Hardmax };

OpImporter softmaxLike(SoftmaxKind kind) {
  return [kind](OnnxNode &node) -> LogicalResult {
    Value x = node.input(0);
    if (!x)
      return failure();
    if (!isFloatValue(x))
      return node.unsupported("an integer " + node.opType());
    auto tx = KilnBuilder::typeOf(x);
    int64_t rank = tx.getRank();
    bool coerced = node.opset() < 13;
    auto axis =
        node.normalizeAxis(node.intAttr("axis", coerced ? 1 : -1), rank);
    if (failed(axis))
      return failure();
    // Before opset 13 the input is read as the 2-D [prod(<axis), prod(>=axis)].
    Value v = x;
    int64_t dim = *axis;
    if (coerced) {
      v = node.reshape(x, {product(tx.getShape().take_front(*axis)),
                           product(tx.getShape().drop_front(*axis))});
      dim = 1;
    }
    OpBuilder &b = node.builder();
    Value y;
    switch (kind) {
    case SoftmaxKind::Softmax:
      y = b.create<SoftmaxOp>(node.loc(), v, dim);
      break;
    case SoftmaxKind::LogSoftmax:
      y = b.create<LogSoftmaxOp>(node.loc(), v, dim);
      break;
    case SoftmaxKind::Hardmax: {
      // One-hot of the first maximum along the axis.
      KilnBuilder kb = node.kb();
      Value index = b.create<ArgmaxOp>(node.loc(), v, dim, /*keepdim=*/true);
      auto vt = KilnBuilder::typeOf(v);
      Value iota = b.create<IotaOp>(
          node.loc(), RankedTensorType::get(vt.getShape(), b.getI32Type()),
          dim);
      y = kb.cast(kb.compare(CmpPredicate::eq, iota, index),
                  vt.getElementType());
      break;
    }
    }
    node.setResult(0, coerced ? node.reshape(y, tx.getShape()) : y);
    return success();
  };
}

LogicalResult importDropout(OnnxNode &node) {
  Value x = node.input(0);
  if (!x)
    return failure();
  if (!isFloatValue(x))
    return node.unsupported("an integer Dropout");
  double ratio = 0.5;
  bool training = false;
  if (node.opset() < 12) {
    ratio = node.floatAttr("ratio", 0.5f);
    if (node.opset() < 7)
      training = node.intAttr("is_test", 0) == 0;
  } else {
    if (node.hasInput(1)) {
      auto r = node.constantNumbers(1, "the ratio of Dropout");
      if (failed(r))
        return failure();
      ratio = r->front();
    }
    if (node.hasInput(2)) {
      auto t = node.constantInts(2, "the training_mode of Dropout");
      if (failed(t))
        return failure();
      training = t->front() != 0;
    }
  }
  int64_t seed = node.intAttr("seed", 0);
  auto tx = KilnBuilder::typeOf(x);
  OpBuilder &b = node.builder();
  if (!training || ratio == 0.0) {
    node.setResult(0, x);
    if (node.hasOutput(1))
      node.setResult(
          1,
          node.splat(RankedTensorType::get(tx.getShape(), b.getI1Type()), 1));
    return success();
  }
  if (node.options().rejectRandomOps)
    return node.unsupported("training-mode Dropout here: its mask is drawn "
                            "from kiln's Philox stream, not ONNX's");
  if (ratio < 0 || ratio >= 1)
    return node.emitError() << "Dropout's ratio must be in [0, 1)";
  if (node.hasOutput(1))
    return node.unsupported("the mask output of a training-mode Dropout");
  Value y = b.create<DropoutOp>(node.loc(), x, Value(), llvm::APFloat(ratio),
                                std::max<int64_t>(seed, 0), 0);
  node.setResult(0, y);
  return success();
}

} // namespace

void registerNNImporters(OpImporterRegistry &registry) {
  registry.add("MatMul", importMatMul);
  registry.add("Gemm", importGemm);
  registry.add("Conv", importConv);
  registry.add("ConvTranspose", importConvTranspose);
  registry.add("MaxPool", pool(true));
  registry.add("AveragePool", pool(false));
  registry.add("GlobalAveragePool", globalPool(false));
  registry.add("GlobalMaxPool", globalPool(true));
  registry.add("BatchNormalization", importBatchNorm);
  registry.add("InstanceNormalization", importInstanceNorm);
  registry.add("LayerNormalization", importLayerNorm);
  registry.add("GroupNormalization", importGroupNorm);
  registry.add("MeanVarianceNormalization", importMeanVarianceNorm);
  registry.add("Softmax", softmaxLike(SoftmaxKind::Softmax));
  registry.add("LogSoftmax", softmaxLike(SoftmaxKind::LogSoftmax));
  registry.add("Hardmax", softmaxLike(SoftmaxKind::Hardmax));
  registry.add("Dropout", importDropout);
}

} // namespace mlir::kiln::onnx_import
