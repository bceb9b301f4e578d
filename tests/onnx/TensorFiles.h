//===- TensorFiles.h - passing ONNX tests as files --------------*- C++ -*-===//

#ifndef KILN_TESTS_ONNX_TENSORFILES_H
#define KILN_TESTS_ONNX_TENSORFILES_H

#include "tests/onnx/BackendTest.h"

#include <string>

namespace kiln::onnx_tests {

/// Writes `result`'s module as `folder`/model.mlir and its first data set as
/// `folder`/inputs.safetensors (arguments by kiln.name) and
/// `folder`/expected.safetensors (outputs by name), in their kiln dtypes.
bool exportTest(const std::string &folder, TestResult &result,
                std::string &error);

} // namespace kiln::onnx_tests

#endif // KILN_TESTS_ONNX_TENSORFILES_H
