//===- ExternalData.cpp - tensor data kept in files beside the model ------===//
//
// ONNX lets a tensor keep its bytes in a file beside the model
// (data_location EXTERNAL, with external_data entries `location`, `offset`,
// `length` and `checksum`): what torch.onnx.export and onnx.save(...,
// save_as_external_data=True) write for the weights. The loader reads them
// into the tensors' raw_data before the import, so that the importer sees
// one self-contained model. A data file must lie inside the model's folder
// (no absolute path, no '..', no link leading out of it) and hold every
// byte the tensor names.
//
//===----------------------------------------------------------------------===//

#include "compiler/import/onnx/OnnxImporter.h"
#include "compiler/import/onnx/OnnxTypes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <optional>

namespace mlir::kiln {
namespace {

namespace fs = llvm::sys::fs;
namespace path = llvm::sys::path;

class ExternalDataLoader {
public:
  ExternalDataLoader(llvm::StringRef modelPath, MLIRContext *context)
      : modelPath(modelPath.str()), context(context) {}

  LogicalResult run(onnx::ModelProto &model) {
    llvm::SmallString<256> dir(path::parent_path(modelPath));
    if (dir.empty())
      dir = ".";
    if (std::error_code error = fs::real_path(dir, folder))
      return emitError(FileLineColLoc::get(context, modelPath, 0, 0))
             << "cannot resolve the model's folder '" << dir
             << "': " << error.message();
    if (failed(visitGraph(*model.mutable_graph(), "")))
      return failure();
    for (onnx::FunctionProto &function : *model.mutable_functions())
      for (onnx::NodeProto &node : *function.mutable_node())
        if (failed(visitNode(node, " of function '" + function.name() + "'")))
          return failure();
    return success();
  }

private:
  std::string modelPath;
  MLIRContext *context;
  llvm::SmallString<256> folder;

  Location loc(const std::string &label) {
    return NameLoc::get(StringAttr::get(context, label),
                        FileLineColLoc::get(context, modelPath, 0, 0));
  }

  LogicalResult visitGraph(onnx::GraphProto &graph, const std::string &where) {
    for (onnx::TensorProto &tensor : *graph.mutable_initializer())
      if (failed(load(tensor, "initializer '" + tensor.name() + "'" + where)))
        return failure();
    for (onnx::NodeProto &node : *graph.mutable_node())
      if (failed(visitNode(node, where)))
        return failure();
    return success();
  }

  /// The tensors of a node's attributes (Constant's value, subgraphs).
  LogicalResult visitNode(onnx::NodeProto &node, const std::string &where) {
    std::string label =
        (node.name().empty() ? "node" : "node '" + node.name() + "'") +
        std::string(" (") + node.op_type() + ")" + where;
    for (onnx::AttributeProto &attr : *node.mutable_attribute()) {
      std::string what = label + " attribute '" + attr.name() + "'";
      if (attr.has_t() && failed(load(*attr.mutable_t(), what)))
        return failure();
      for (onnx::TensorProto &tensor : *attr.mutable_tensors())
        if (failed(load(tensor, what)))
          return failure();
      if (attr.has_g() && failed(visitGraph(*attr.mutable_g(), " in " + label)))
        return failure();
      for (onnx::GraphProto &graph : *attr.mutable_graphs())
        if (failed(visitGraph(graph, " in " + label)))
          return failure();
    }
    return success();
  }

  /// The data file named `location`, checked to lie inside the model's
  /// folder.
  FailureOr<std::string> resolve(const std::string &location, Location at) {
    if (path::is_absolute(location))
      return emitError(at) << "its external data file '" << location
                           << "' is an absolute path; it must be named "
                              "relative to the model's folder";
    for (auto it = path::begin(location), end = path::end(location); it != end;
         ++it)
      if (*it == "..")
        return emitError(at) << "its external data file '" << location
                             << "' leads out of the model's folder";
    llvm::SmallString<256> joined(folder), real;
    path::append(joined, location);
    if (std::error_code error = fs::real_path(joined, real))
      return emitError(at) << "cannot open its external data file '" << joined
                           << "': " << error.message();
    // The folder's path and a separator: a sibling folder whose name
    // starts with this one's is outside too.
    std::string inside(folder);
    if (!llvm::StringRef(inside).ends_with(path::get_separator()))
      inside += path::get_separator();
    if (!llvm::StringRef(real).starts_with(inside))
      return emitError(at) << "its external data file '" << location
                           << "' resolves to '" << real
                           << "', outside the model's folder";
    if (!fs::is_regular_file(real))
      return emitError(at) << "its external data file '" << real
                           << "' is not a regular file";
    return std::string(real);
  }

  LogicalResult load(onnx::TensorProto &tensor, const std::string &label) {
    if (tensor.data_location() != onnx::TensorProto::EXTERNAL)
      return success();
    Location at = loc(label);
    std::string location;
    std::optional<uint64_t> offset, length;
    for (const onnx::StringStringEntryProto &entry : tensor.external_data()) {
      const std::string &key = entry.key();
      if (key == "location") {
        location = entry.value();
      } else if (key == "offset" || key == "length") {
        uint64_t number = 0;
        if (llvm::StringRef(entry.value()).getAsInteger(10, number))
          return emitError(at)
                 << "its external data's " << key << " '" << entry.value()
                 << "' is not a non-negative integer";
        (key == "offset" ? offset : length) = number;
      } else if (key != "checksum") {
        return emitError(at) << "its external data has the key '" << key
                             << "', which the importer does not know "
                                "(location, offset, length, checksum)";
      }
    }
    if (location.empty())
      return emitError(at) << "keeps its data in an external file but names "
                              "none (no 'location')";
    auto file = resolve(location, at);
    if (failed(file))
      return failure();
    uint64_t size = 0;
    if (std::error_code error = fs::file_size(*file, size))
      return emitError(at) << "cannot read '" << *file
                           << "': " << error.message();
    uint64_t start = offset.value_or(0);
    uint64_t count = length.value_or(start <= size ? size - start : 0);
    if (start > size || count > size - start)
      return emitError(at) << "its external data (offset " << start
                           << ", length " << count << ") lies beyond the end "
                           << "of '" << location << "', which holds " << size
                           << " bytes";
    if (failed(onnx_import::checkTensorData(tensor, at, label, count)))
      return failure();
    auto bytes = llvm::MemoryBuffer::getFileSlice(*file, count, start,
                                                  /*IsVolatile=*/false);
    if (!bytes)
      return emitError(at) << "cannot read '" << *file
                           << "': " << bytes.getError().message();
    tensor.set_raw_data((*bytes)->getBufferStart(), count);
    tensor.clear_external_data();
    tensor.set_data_location(onnx::TensorProto::DEFAULT);
    return success();
  }
};

} // namespace

LogicalResult loadExternalData(onnx::ModelProto &model,
                               llvm::StringRef modelPath,
                               MLIRContext *context) {
  return ExternalDataLoader(modelPath, context).run(model);
}

} // namespace mlir::kiln
