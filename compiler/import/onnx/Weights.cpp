//===- Weights.cpp - trainable initializers as a safetensors file ---------===//
//
// A trainable initializer becomes a kiln.param argument whose #kiln.init is
// only a fresh initialisation; the ONNX values themselves are written here,
// by name and in the argument's dtype, for kiln-run --params (and kiln-ref
// --inputs).
//
//===----------------------------------------------------------------------===//

#include "compiler/import/onnx/GraphImporter.h"
#include "compiler/import/onnx/OnnxTypes.h"

#include "kiln/dtype.h"
#include "runtime/io/safetensors.h"

#include <cstring>

namespace mlir::kiln::onnx_import {

LogicalResult writeWeights(llvm::ArrayRef<const onnx::TensorProto *> tensors,
                           llvm::StringRef path, Location loc) {
  ::kiln::io::Safetensors file;
  for (const onnx::TensorProto *tensor : tensors) {
    auto numbers =
        readNumbers(*tensor, loc, "initializer '" + tensor->name() + "'");
    if (failed(numbers))
      return failure();
    ::kiln::io::HostTensor host;
    host.shape.assign(tensor->dims().begin(), tensor->dims().end());
    switch (tensor->data_type()) {
    case onnx::TensorProto::FLOAT:
      host.dtype = ::kiln::DType::kF32;
      break;
    case onnx::TensorProto::FLOAT16:
      host.dtype = ::kiln::DType::kF16;
      break;
    case onnx::TensorProto::BFLOAT16:
      host.dtype = ::kiln::DType::kBF16;
      break;
    default:
      return emitError(loc)
             << "initializer '" << tensor->name() << "' is not floating point";
    }
    size_t width = ::kiln::DTypeSize(host.dtype);
    host.data.resize(numbers->size() * width);
    for (size_t i = 0; i < numbers->size(); ++i) {
      float f = static_cast<float>((*numbers)[i]);
      if (host.dtype == ::kiln::DType::kF32) {
        std::memcpy(host.data.data() + 4 * i, &f, 4);
      } else {
        uint16_t bits = host.dtype == ::kiln::DType::kBF16
                            ? ::kiln::F32ToBf16(f)
                            : ::kiln::F32ToF16(f);
        std::memcpy(host.data.data() + 2 * i, &bits, 2);
      }
    }
    file.tensors[tensor->name()] = std::move(host);
  }
  // A kiln checkpoint at step 0: kiln-run --resume starts training from the
  // ONNX weights (for optimizers without state, e.g. plain SGD; kiln-ref
  // --inputs and kiln-run --params read it as plain parameters).
  file.metadata["format"] = "kiln";
  file.metadata["step"] = "0";
  absl::Status status = ::kiln::io::WriteSafetensorsFile(path.str(), file);
  if (!status.ok())
    return emitError(loc) << "cannot write the weights to '" << path
                          << "': " << std::string(status.message());
  return success();
}

} // namespace mlir::kiln::onnx_import
