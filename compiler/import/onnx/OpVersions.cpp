//===- OpVersions.cpp - the ONNX op definitions the importer follows ------===//
//
// Transcribed from ONNX's docs/Changelog.md (default domain, opsets 1 to
// 27). Changes in opsets 18 to 27 for these ops, and how the importers
// follow them:
//   18: the Reduce* ops (but ReduceSum, since 13) take `axes` as an input;
//       Split gains num_outputs; Pad takes an `axes` input; Resize gains
//       axes, antialias (linear and cubic only) and
//       keep_aspect_ratio_policy; GroupNormalization and Mish are new.
//   19: AveragePool gains dilations; Cast and CastLike gain saturate (float8
//       targets only); Pad gains mode 'wrap'; Resize gains the
//       half_pixel_symmetric coordinates; Equal, Constant, Identity,
//       Reshape, Shape and Size widen their types.
//   20: Gelu is new; ReduceMax and ReduceMin accept bool and define empty
//       reductions; ConstantOfShape, IsInf and IsNaN widen their types.
//   21: GroupNormalization's scale and bias become per channel (and gain
//       stash_type); Cast, CastLike, Constant, ConstantOfShape, Flatten,
//       Identity, Pad, Reshape, Shape, Size, Squeeze, Transpose and
//       Unsqueeze widen their types (4-bit integers).
//   22: bfloat16 for most float ops; AveragePool and MaxPool state that a
//       ceil_mode window starting in the right padding is dropped (kiln
//       rejects those windows).
//   23-25: Cast gains round_mode (float8e8m0 targets only); wider types.
//   26: no change to these ops. 27: Range gains stash_type.
//
//===----------------------------------------------------------------------===//

#include "compiler/import/onnx/OpVersions.h"

#include "llvm/ADT/StringMap.h"

#include <algorithm>

namespace mlir::kiln::onnx_import {
namespace {

const llvm::StringMap<std::vector<int>> &table() {
  static const llvm::StringMap<std::vector<int>> versions = {
      {"Abs", {1, 6, 13}},
      {"Acosh", {9, 22}},
      {"Add", {1, 6, 7, 13, 14}},
      {"And", {1, 7}},
      {"ArgMax", {1, 11, 12, 13}},
      {"ArgMin", {1, 11, 12, 13}},
      {"Asinh", {9, 22}},
      {"Atanh", {9, 22}},
      {"AveragePool", {1, 7, 10, 11, 19, 22}},
      {"BatchNormalization", {1, 6, 7, 9, 14, 15}},
      {"Cast", {1, 6, 9, 13, 19, 21, 23, 24, 25}},
      {"CastLike", {15, 19, 21, 23, 24, 25}},
      {"Ceil", {1, 6, 13}},
      {"Celu", {12}},
      {"Clip", {1, 6, 11, 12, 13}},
      {"Concat", {1, 4, 11, 13}},
      {"Constant", {1, 9, 11, 12, 13, 19, 21, 23, 24, 25}},
      {"ConstantOfShape", {9, 20, 21, 23, 24, 25}},
      {"Conv", {1, 11, 22}},
      {"ConvTranspose", {1, 11, 22}},
      {"Cos", {7, 22}},
      {"Cosh", {9, 22}},
      {"CumSum", {11, 14}},
      {"DepthToSpace", {1, 11, 13}},
      {"Div", {1, 6, 7, 13, 14}},
      {"Dropout", {1, 6, 7, 10, 12, 13, 22}},
      {"Einsum", {12}},
      {"Elu", {1, 6, 22}},
      {"Equal", {1, 7, 11, 13, 19}},
      {"Erf", {9, 13}},
      {"Exp", {1, 6, 13}},
      {"Expand", {8, 13}},
      {"EyeLike", {9, 22}},
      {"Flatten", {1, 9, 11, 13, 21, 23, 24, 25}},
      {"Floor", {1, 6, 13}},
      {"GRU", {1, 3, 7, 14, 22}},
      {"Gather", {1, 11, 13}},
      {"GatherElements", {11, 13}},
      {"Gelu", {20}},
      {"Gemm", {1, 6, 7, 9, 11, 13}},
      {"GlobalAveragePool", {1, 22}},
      {"GlobalMaxPool", {1, 22}},
      {"Greater", {1, 7, 9, 13}},
      {"GreaterOrEqual", {12, 16}},
      {"GroupNormalization", {18, 21}},
      {"HardSigmoid", {1, 6, 22}},
      {"HardSwish", {14, 22}},
      {"Hardmax", {1, 11, 13}},
      {"Identity", {1, 13, 14, 16, 19, 21, 23, 24, 25}},
      {"InstanceNormalization", {1, 6, 22}},
      {"IsInf", {10, 20}},
      {"IsNaN", {9, 13, 20}},
      {"LSTM", {1, 7, 14, 22}},
      {"LayerNormalization", {17}},
      {"LeakyRelu", {1, 6, 16}},
      {"Less", {1, 7, 9, 13}},
      {"LessOrEqual", {12, 16}},
      {"Log", {1, 6, 13}},
      {"LogSoftmax", {1, 11, 13}},
      {"MatMul", {1, 9, 13}},
      {"Max", {1, 6, 8, 12, 13}},
      {"MaxPool", {1, 8, 10, 11, 12, 22}},
      {"Mean", {1, 6, 8, 13}},
      {"MeanVarianceNormalization", {9, 13}},
      {"Min", {1, 6, 8, 12, 13}},
      {"Mish", {18, 22}},
      {"Mod", {10, 13}},
      {"Mul", {1, 6, 7, 13, 14}},
      {"Neg", {1, 6, 13}},
      {"NegativeLogLikelihoodLoss", {12, 13, 22}},
      {"Not", {1}},
      {"OneHot", {9, 11}},
      {"Or", {1, 7}},
      {"PRelu", {1, 6, 7, 9, 16}},
      {"Pad", {1, 2, 11, 13, 18, 19, 21, 23, 24, 25}},
      {"Pow", {1, 7, 12, 13, 15}},
      {"RNN", {1, 7, 14, 22}},
      {"Range", {11, 27}},
      {"Reciprocal", {1, 6, 13}},
      {"ReduceL1", {1, 11, 13, 18}},
      {"ReduceL2", {1, 11, 13, 18}},
      {"ReduceLogSum", {1, 11, 13, 18}},
      {"ReduceLogSumExp", {1, 11, 13, 18}},
      {"ReduceMax", {1, 11, 12, 13, 18, 20}},
      {"ReduceMean", {1, 11, 13, 18}},
      {"ReduceMin", {1, 11, 12, 13, 18, 20}},
      {"ReduceProd", {1, 11, 13, 18}},
      {"ReduceSum", {1, 11, 13}},
      {"ReduceSumSquare", {1, 11, 13, 18}},
      {"Relu", {1, 6, 13, 14}},
      {"Reshape", {1, 5, 13, 14, 19, 21, 23, 24, 25}},
      {"Resize", {10, 11, 13, 18, 19}},
      {"Round", {11, 22}},
      {"ScatterND", {11, 13, 16, 18}},
      {"Selu", {1, 6, 22}},
      {"Shape", {1, 13, 15, 19, 21, 23, 24, 25}},
      {"Shrink", {9}},
      {"Sigmoid", {1, 6, 13}},
      {"Sign", {9, 13}},
      {"Sin", {7, 22}},
      {"Sinh", {9, 22}},
      {"Size", {1, 13, 19, 21, 23, 24, 25}},
      {"Slice", {1, 10, 11, 13}},
      {"Softmax", {1, 11, 13}},
      {"SoftmaxCrossEntropyLoss", {12, 13}},
      {"Softplus", {1, 22}},
      {"Softsign", {1, 22}},
      {"SpaceToDepth", {1, 13}},
      {"Split", {1, 2, 11, 13, 18}},
      {"Sqrt", {1, 6, 13}},
      {"Squeeze", {1, 11, 13, 21, 23, 24, 25}},
      {"Sub", {1, 6, 7, 13, 14}},
      {"Sum", {1, 6, 8, 13}},
      {"Tan", {7, 22}},
      {"Tanh", {1, 6, 13}},
      {"ThresholdedRelu", {10, 22}},
      {"Tile", {1, 6, 13}},
      {"Transpose", {1, 13, 21, 23, 24, 25}},
      {"Trilu", {14}},
      {"Unsqueeze", {1, 11, 13, 21, 23, 24, 25}},
      {"Where", {9, 16}},
      {"Xor", {1, 7}},
  };
  return versions;
}

} // namespace

llvm::ArrayRef<int> opVersions(llvm::StringRef opType) {
  auto it = table().find(opType);
  if (it == table().end())
    return {};
  return it->second;
}

int definitionVersion(llvm::StringRef opType, int64_t opset) {
  int version = 0;
  for (int v : opVersions(opType))
    if (v <= opset)
      version = v;
  return version;
}

std::vector<llvm::StringRef> versionedOps() {
  std::vector<llvm::StringRef> ops;
  for (const auto &entry : table())
    ops.push_back(entry.getKey());
  std::sort(ops.begin(), ops.end());
  return ops;
}

} // namespace mlir::kiln::onnx_import
