//===- BackendTest.cc - one test of ONNX's backend test data --------------===//

#include "tests/onnx/BackendTest.h"

#include "compiler/import/onnx/OnnxImporter.h"
#include "compiler/import/onnx/OnnxTypes.h"
#include "compiler/interpreter/Interpreter.h"
#include "dialects/kiln/IR/KilnDialect.h"
#include "dialects/kiln/IR/KilnNaming.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

namespace kiln::onnx_tests {
namespace {

namespace fs = std::filesystem;
using mlir::kiln::ref::ElementKind;
using mlir::kiln::ref::Tensor;

bool readFile(const fs::path &path, std::string &bytes) {
  std::ifstream file(path, std::ios::binary);
  if (!file)
    return false;
  std::ostringstream contents;
  contents << file.rdbuf();
  bytes = contents.str();
  return true;
}

bool readTensor(const fs::path &path, onnx::TensorProto &tensor) {
  std::string bytes;
  return readFile(path, bytes) && mlir::kiln::parseTensorProto(bytes, tensor);
}

/// input_<i>.pb or output_<i>.pb files of a data set, in index order.
std::vector<onnx::TensorProto> readSeries(const fs::path &folder,
                                          const std::string &prefix,
                                          std::string &error) {
  std::vector<onnx::TensorProto> tensors;
  for (int i = 0;; ++i) {
    fs::path path = folder / (prefix + "_" + std::to_string(i) + ".pb");
    if (!fs::exists(path))
      break;
    onnx::TensorProto tensor;
    if (!readTensor(path, tensor)) {
      error = "cannot read " + path.string() + " as a TensorProto";
      return {};
    }
    tensors.push_back(std::move(tensor));
  }
  return tensors;
}

/// Collects the first error diagnostic as "location: message".
class FirstError {
public:
  explicit FirstError(mlir::MLIRContext &context)
      : handler(&context, [this](mlir::Diagnostic &diagnostic) {
          if (diagnostic.getSeverity() == mlir::DiagnosticSeverity::Error &&
              message.empty()) {
            llvm::raw_string_ostream os(message);
            os << diagnostic.getLocation() << ": " << diagnostic.str();
          }
          return mlir::success();
        }) {}
  std::string message;

private:
  mlir::ScopedDiagnosticHandler handler;
};

/// `proto` as an interpreter tensor of `type` (shape and element kind
/// checked; int64 values must fit kiln's i32).
bool toTensor(const onnx::TensorProto &given, mlir::RankedTensorType type,
              Tensor &tensor, std::string &error) {
  // ONNX 1.12's test data stores BFLOAT16 tensors as their UINT16 bits.
  onnx::TensorProto proto = given;
  if (proto.data_type() == onnx::TensorProto::UINT16 &&
      type.getElementType().isBF16())
    proto.set_data_type(onnx::TensorProto::BFLOAT16);
  std::vector<int64_t> dims(proto.dims().begin(), proto.dims().end());
  if (llvm::ArrayRef<int64_t>(dims) != type.getShape()) {
    error = "a data tensor's shape differs from its graph value's";
    return false;
  }
  mlir::Type element = mlir::kiln::onnx_import::kilnElementType(
      type.getContext(), proto.data_type());
  if (element != type.getElementType()) {
    error = "a data tensor of element type " +
            mlir::kiln::onnx_import::onnxTypeName(proto.data_type()) +
            " does not match its graph value";
    return false;
  }
  mlir::Location loc = mlir::UnknownLoc::get(type.getContext());
  auto numbers = mlir::kiln::onnx_import::readNumbers(proto, loc, "data");
  if (mlir::failed(numbers)) {
    error = "unreadable data tensor";
    return false;
  }
  tensor = Tensor::ofType(type);
  if (proto.data_type() == onnx::TensorProto::INT64) {
    auto ints = mlir::kiln::onnx_import::readInt64s(proto, loc, "data");
    for (int64_t v : *ints)
      if (v < std::numeric_limits<int32_t>::min() ||
          v > std::numeric_limits<int32_t>::max()) {
        error = "an INT64 data value beyond kiln's i32 range";
        return false;
      }
  }
  tensor.data = *numbers;
  return true;
}

bool close(double got, double expected, const Tolerance &tolerance) {
  if (std::isnan(expected))
    return std::isnan(got);
  if (std::isinf(expected))
    return got == expected;
  return std::fabs(got - expected) <=
         tolerance.atol + tolerance.rtol * std::fabs(expected);
}

std::string compare(const Tensor &got, const Tensor &expected,
                    const std::string &name, const Tolerance &tolerance) {
  if (got.shape != expected.shape)
    return "output '" + name + "' has shape " + got.typeString() +
           ", expected " + expected.typeString();
  bool exact = !mlir::kiln::ref::isFloatKind(expected.kind);
  for (size_t i = 0; i < got.data.size(); ++i) {
    bool ok = exact ? got.data[i] == expected.data[i]
                    : close(got.data[i], expected.data[i], tolerance);
    if (!ok) {
      std::ostringstream os;
      os << "output '" << name << "' element " << i << " is " << got.data[i]
         << ", expected " << expected.data[i];
      return os.str();
    }
  }
  return "";
}

/// Graph inputs that are not initializers, in order (the data sets' order).
std::vector<const onnx::ValueInfoProto *>
dataInputs(const onnx::ModelProto &model) {
  std::set<std::string> initializers;
  for (const auto &tensor : model.graph().initializer())
    initializers.insert(tensor.name());
  std::vector<const onnx::ValueInfoProto *> inputs;
  for (const auto &input : model.graph().input())
    if (!initializers.count(input.name()))
      inputs.push_back(&input);
  return inputs;
}

/// Whether a graph input is bound to its data when shapes need it: integer
/// and BOOL inputs (shapes, axes, indices, flags), rank-0 ones (scalar
/// parameters such as Range's bounds or Dropout's ratio) and short vectors
/// (Resize's scales).
bool bindsStatically(const onnx::ValueInfoProto &input) {
  if (!input.type().has_tensor_type())
    return false;
  const auto &tensor = input.type().tensor_type();
  int32_t t = tensor.elem_type();
  bool integer =
      t != onnx::TensorProto::FLOAT && t != onnx::TensorProto::FLOAT16 &&
      t != onnx::TensorProto::BFLOAT16 && t != onnx::TensorProto::DOUBLE;
  if (integer || !tensor.has_shape())
    return integer;
  const auto &shape = tensor.shape();
  return shape.dim_size() == 0 ||
         (shape.dim_size() == 1 && shape.dim(0).dim_value() <= 8);
}

} // namespace

/// Tests whose expected data disagree with the ONNX specification as it
/// stands, with the reason (reported as unsupported, never run).
const std::map<std::string, std::string> &divergentData() {
  static const std::map<std::string, std::string> tests = {
      {"test_cast_FLOAT_to_BFLOAT16",
       "libonnx-testdata 1.12 truncates FLOAT to BFLOAT16; ONNX 1.14 and "
       "later round to nearest even, as kiln.cast does"},
      {"test_resize_downsample_scales_linear_align_corners",
       "the test data divide by input size * scale - 1 (2.4 - 1) for "
       "align_corners; the specification's length of the resized tensor, "
       "onnxruntime and PyTorch take the output size (2 - 1), as kiln.resize "
       "does"},
  };
  return tests;
}

TestResult runBackendTest(const std::string &folder, const Tolerance &tolerance,
                          mlir::MLIRContext &context) {
  TestResult result;
  fs::path root(folder);
  auto divergent = divergentData().find(root.filename().string());
  if (divergent != divergentData().end()) {
    result.outcome = Outcome::kUnsupported;
    result.message = divergent->second;
    return result;
  }
  std::string bytes;
  onnx::ModelProto model;
  if (!readFile(root / "model.onnx", bytes) ||
      !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    result.message = "cannot read model.onnx";
    return result;
  }
  std::vector<fs::path> sets;
  for (const auto &entry : fs::directory_iterator(root))
    if (entry.is_directory() &&
        entry.path().filename().string().rfind("test_data_set_", 0) == 0)
      sets.push_back(entry.path());
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) {
    result.message = "no test_data_set_* folder";
    return result;
  }
  std::vector<const onnx::ValueInfoProto *> inputs = dataInputs(model);
  std::string modelPath = (root / "model.onnx").string();
  {
    FirstError diagnostics(context);
    if (mlir::failed(
            mlir::kiln::loadExternalData(model, modelPath, &context))) {
      result.message = diagnostics.message;
      return result;
    }
  }

  for (const fs::path &set : sets) {
    std::string error;
    std::vector<onnx::TensorProto> inputData = readSeries(set, "input", error);
    std::vector<onnx::TensorProto> outputData =
        readSeries(set, "output", error);
    if (!error.empty()) {
      result.message = error;
      return result;
    }
    if (inputData.size() != inputs.size() ||
        outputData.size() != static_cast<size_t>(model.graph().output_size())) {
      result.outcome = Outcome::kUnsupported;
      result.message = "the data set does not give every input and output "
                       "(optional inputs left out)";
      return result;
    }
    // Import as is; where static shapes need them, bind the integer and
    // scalar inputs to their values and import again.
    mlir::kiln::OnnxImportOptions options;
    options.rejectRandomOps = true;
    mlir::OwningOpRef<mlir::ModuleOp> module;
    std::string importError;
    {
      FirstError diagnostics(context);
      module = mlir::kiln::importOnnxModel(model, &context, options, modelPath);
      importError = diagnostics.message;
    }
    if (!module) {
      for (size_t i = 0; i < inputs.size(); ++i)
        if (bindsStatically(*inputs[i]))
          options.staticInputs[inputs[i]->name()] = inputData[i];
      if (!options.staticInputs.empty()) {
        FirstError diagnostics(context);
        module =
            mlir::kiln::importOnnxModel(model, &context, options, modelPath);
        importError = diagnostics.message;
      }
    }
    if (!module) {
      result.outcome = Outcome::kUnsupported;
      result.message = importError;
      return result;
    }
    auto function = *module->getOps<mlir::func::FuncOp>().begin();
    DataSet dataSet;
    std::vector<Tensor> arguments;
    for (unsigned a = 0; a < function.getNumArguments(); ++a) {
      std::string name = mlir::kiln::argumentName(function, a);
      size_t index = 0;
      while (index < inputs.size() && inputs[index]->name() != name)
        ++index;
      if (index == inputs.size()) {
        result.message = "no data for the argument '" + name + "'";
        return result;
      }
      Tensor tensor;
      auto type =
          llvm::cast<mlir::RankedTensorType>(function.getArgumentTypes()[a]);
      if (!toTensor(inputData[index], type, tensor, error)) {
        result.outcome = Outcome::kUnsupported;
        result.message = "input '" + name + "': " + error;
        return result;
      }
      arguments.push_back(tensor);
      dataSet.inputs.emplace_back(name, tensor);
    }
    mlir::kiln::ref::Interpreter interpreter(mlir::kiln::ref::Precision::F32);
    mlir::FailureOr<std::vector<Tensor>> outputs;
    {
      FirstError diagnostics(context);
      outputs = interpreter.run(function, arguments);
      if (mlir::failed(outputs)) {
        result.message =
            "the reference interpreter failed: " + diagnostics.message;
        return result;
      }
    }
    for (unsigned o = 0; o < outputs->size(); ++o) {
      std::string name = model.graph().output(o).name();
      Tensor expected;
      auto type =
          llvm::cast<mlir::RankedTensorType>(function.getResultTypes()[o]);
      if (!toTensor(outputData[o], type, expected, error)) {
        result.message = "expected output '" + name + "': " + error;
        return result;
      }
      std::string mismatch = compare((*outputs)[o], expected, name, tolerance);
      if (!mismatch.empty()) {
        result.message = mismatch;
        return result;
      }
      dataSet.expected.emplace_back(name, expected);
    }
    if (!result.module)
      result.module = std::move(module);
    result.dataSets.push_back(std::move(dataSet));
  }
  result.outcome = Outcome::kPass;
  return result;
}

} // namespace kiln::onnx_tests
