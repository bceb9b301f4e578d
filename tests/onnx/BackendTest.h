//===- BackendTest.h - one test of ONNX's backend test data ----*- C++ -*-===//
//
// A test is a folder with model.onnx and test_data_set_*/ folders holding
// input_<i>.pb and output_<i>.pb (serialized TensorProtos), as Debian's
// libonnx-testdata ships them. runBackendTest imports the model into kiln,
// runs it on the CPU reference interpreter (f32 storage, as the GPU) for
// every data set and compares with the expected outputs.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TESTS_ONNX_BACKENDTEST_H
#define KILN_TESTS_ONNX_BACKENDTEST_H

#include "compiler/interpreter/Tensor.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>
#include <vector>

namespace kiln::onnx_tests {

enum class Outcome { kPass, kFail, kUnsupported };

/// What passing means: |got - expected| <= atol + rtol * |expected|, with
/// ONNX's backend defaults (every test that imports passes at them).
struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-7;
};

/// One data set as the kiln function sees it: arguments by kiln.name and
/// expected results by graph output name.
struct DataSet {
  std::vector<std::pair<std::string, mlir::kiln::ref::Tensor>> inputs;
  std::vector<std::pair<std::string, mlir::kiln::ref::Tensor>> expected;
};

struct TestResult {
  Outcome outcome = Outcome::kFail;
  /// Why it failed or is unsupported (the first diagnostic); empty on pass.
  std::string message;
  /// On pass: the imported module of the first data set and every data set
  /// (for the GPU bundle).
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::vector<DataSet> dataSets;
};

/// Runs the test in `folder` within `context`.
TestResult runBackendTest(const std::string &folder, const Tolerance &tolerance,
                          mlir::MLIRContext &context);

} // namespace kiln::onnx_tests

#endif // KILN_TESTS_ONNX_BACKENDTEST_H
