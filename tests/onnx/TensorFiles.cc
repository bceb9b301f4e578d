//===- TensorFiles.cc - a passing ONNX test as files for the GPU ----------===//

#include "tests/onnx/TensorFiles.h"

#include "kiln/dtype.h"
#include "runtime/io/safetensors.h"

#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <filesystem>
#include <fstream>

namespace kiln::onnx_tests {
namespace {

using mlir::kiln::ref::ElementKind;
using mlir::kiln::ref::Tensor;

io::HostTensor encode(const Tensor &tensor) {
  io::HostTensor file;
  switch (tensor.kind) {
  case ElementKind::F32:
    file.dtype = DType::kF32;
    break;
  case ElementKind::BF16:
    file.dtype = DType::kBF16;
    break;
  case ElementKind::F16:
    file.dtype = DType::kF16;
    break;
  case ElementKind::I32:
    file.dtype = DType::kI32;
    break;
  case ElementKind::I1:
    file.dtype = DType::kI1;
    break;
  }
  file.shape.assign(tensor.shape.begin(), tensor.shape.end());
  file.data.resize(tensor.data.size() * DTypeSize(file.dtype));
  uint8_t *bytes = file.data.data();
  for (size_t i = 0; i < tensor.data.size(); ++i) {
    double value = tensor.data[i];
    switch (tensor.kind) {
    case ElementKind::F32: {
      float f = static_cast<float>(value);
      std::memcpy(bytes + 4 * i, &f, 4);
      break;
    }
    case ElementKind::BF16:
    case ElementKind::F16: {
      float f = static_cast<float>(value);
      uint16_t bits =
          tensor.kind == ElementKind::BF16 ? F32ToBf16(f) : F32ToF16(f);
      std::memcpy(bytes + 2 * i, &bits, 2);
      break;
    }
    case ElementKind::I32: {
      int32_t v = static_cast<int32_t>(value);
      std::memcpy(bytes + 4 * i, &v, 4);
      break;
    }
    case ElementKind::I1:
      bytes[i] = value != 0;
      break;
    }
  }
  return file;
}

bool writeTensors(const std::string &path,
                  const std::vector<std::pair<std::string, Tensor>> &tensors,
                  std::string &error) {
  io::Safetensors file;
  for (const auto &[name, tensor] : tensors)
    file.tensors[name] = encode(tensor);
  absl::Status status = io::WriteSafetensorsFile(path, file);
  if (!status.ok()) {
    error = std::string(status.message());
    return false;
  }
  return true;
}

} // namespace

bool exportTest(const std::string &folder, TestResult &result,
                std::string &error) {
  std::filesystem::create_directories(folder);
  std::string text;
  llvm::raw_string_ostream os(text);
  mlir::ModuleOp module = result.module.get();
  module.print(os);
  std::ofstream(folder + "/model.mlir") << os.str();
  const DataSet &data = result.dataSets.front();
  return writeTensors(folder + "/inputs.safetensors", data.inputs, error) &&
         writeTensors(folder + "/expected.safetensors", data.expected, error);
}

} // namespace kiln::onnx_tests
