#include "compiler/import/onnx/TrainableInitializers.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::kiln::onnx_import {

/// Whether input `index` of an `opType` node is a setting rather than
/// data, among the inputs that may be floating point.
static bool isSettingInput(llvm::StringRef opType, int index) {
  if (opType == "BatchNormalization")
    return index == 3 || index == 4; // running mean and variance
  if (opType == "Clip")
    return index == 1 || index == 2; // bounds
  if (opType == "Resize" || opType == "Upsample")
    return index == 1 || index == 2; // roi, scales
  if (opType == "Pad")
    return index == 2; // constant_value
  if (opType == "Dropout")
    return index == 1; // ratio
  if (opType == "Range")
    return true; // start, limit, delta
  return false;
}

static bool isFloat(const onnx::TensorProto &tensor) {
  int32_t type = tensor.data_type();
  return type == onnx::TensorProto::FLOAT ||
         type == onnx::TensorProto::FLOAT16 ||
         type == onnx::TensorProto::BFLOAT16;
}

FailureOr<llvm::StringSet<>>
selectTrainable(llvm::StringRef trainable, const onnx::GraphProto &graph,
                llvm::ArrayRef<FlatNode> nodes, Location fileLoc) {
  llvm::StringSet<> selected;
  if (trainable.empty())
    return selected;
  // The first node reading each initializer as a setting, for the error.
  llvm::StringMap<std::pair<const FlatNode *, int>> settings;
  for (const FlatNode &node : nodes)
    for (auto [index, input] : llvm::enumerate(node.proto->input()))
      if (!input.empty() && isSettingInput(node.proto->op_type(), index))
        settings.try_emplace(input, &node, static_cast<int>(index));
  if (trainable == "all") {
    for (const onnx::TensorProto &tensor : graph.initializer())
      if (isFloat(tensor) && !settings.count(tensor.name()))
        selected.insert(tensor.name());
    return selected;
  }
  llvm::StringSet<> initializers;
  for (const onnx::TensorProto &tensor : graph.initializer())
    initializers.insert(tensor.name());
  llvm::SmallVector<llvm::StringRef> names;
  trainable.split(names, ',', -1, false);
  for (llvm::StringRef name : names) {
    if (!initializers.contains(name))
      return emitError(fileLoc) << "--trainable names '" << name
                                << "', which is not an initializer of the "
                                   "graph";
    if (auto setting = settings.find(name); setting != settings.end())
      return emitError(fileLoc)
             << "--trainable names '" << name << "', which "
             << setting->second.first->label << " reads as a setting (input "
             << setting->second.second << "), not a weight";
    selected.insert(name);
  }
  return selected;
}

} // namespace mlir::kiln::onnx_import
