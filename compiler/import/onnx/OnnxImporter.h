//===- OnnxImporter.h - ONNX models to the kiln dialect --------*- C++ -*-===//
//
// Imports an ONNX model (read with Debian's libonnx protobuf classes) as a
// module with one func.func of kiln ops. Graph inputs become arguments named
// by kiln.name; initializers become kiln.param arguments (--trainable) that
// start from their values (kiln.value), or constants named by their kiln.name;
// graph outputs become results named by kiln.name. With a loss (an
// ONNX loss node that is the graph's only output, or --loss/--target) the
// function returns the scalar loss and is what the training pipeline compiles.
// Every op carries a location naming its ONNX node; every op, attribute or
// element type kiln cannot express exactly is a located error.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_ONNX_ONNXIMPORTER_H
#define KILN_COMPILER_IMPORT_ONNX_ONNXIMPORTER_H

#include "onnx/onnx_pb.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/StringRef.h"

#include <map>
#include <string>
#include <vector>

namespace mlir::kiln {

struct OnnxImportOptions {
  /// Name of the imported function (the pipeline's --function).
  std::string functionName = "loss";
  /// Initializers that become kiln.param arguments: "" (none: all are
  /// constants), "all" (every floating-point one an op reads as a weight,
  /// TrainableInitializers.h), or a comma-separated list of initializer
  /// names.
  std::string trainable;
  /// A loss appended to the graph: "" (none), "mse" or "cross_entropy", on
  /// the graph's single output and a new input named `target`.
  std::string loss;
  std::string target;
  /// Graph inputs bound to fixed values (imported as constants, so that
  /// shapes, axes and indices fed as inputs are static).
  std::map<std::string, onnx::TensorProto> staticInputs;
  /// Reject ops whose results are random (training-mode Dropout with a
  /// nonzero ratio, RandomUniform, ...): kiln's Philox streams cannot
  /// reproduce another framework's numbers, so comparisons would fail.
  bool rejectRandomOps = false;
  /// Trainable initializers start from their #kiln.init (a fresh
  /// initialisation) rather than their values (kiln.value), which the
  /// artifact then does not carry.
  bool freshParameters = false;
  /// Where to write the values of the trainable initializers (safetensors,
  /// by name, in their kiln dtypes), what kiln-ref --inputs and kiln-run
  /// --params load; the parameters start from them anyway (kiln.value).
  /// "" for none.
  std::string weightsPath;
};

/// Imports `model`; diagnostics go to `context`'s handler, located at the
/// nodes (the file name `fileName` is part of every location).
OwningOpRef<ModuleOp> importOnnxModel(const onnx::ModelProto &model,
                                      MLIRContext *context,
                                      const OnnxImportOptions &options,
                                      llvm::StringRef fileName);

/// Reads the data of every tensor of `model` that keeps it in a file beside
/// the model (data_location EXTERNAL: what torch.onnx.export writes for the
/// weights) into the tensor. `modelPath` is the model's file: data files are
/// named relative to its folder and must lie inside it. Errors go to
/// `context`'s handler, located at the tensor.
LogicalResult loadExternalData(onnx::ModelProto &model,
                               llvm::StringRef modelPath, MLIRContext *context);

/// Reads and imports the .onnx file at `path` with its external data (an
/// unreadable or unparsable file is an error at the file's location).
OwningOpRef<ModuleOp> importOnnxFile(llvm::StringRef path, MLIRContext *context,
                                     const OnnxImportOptions &options);

/// Parses a serialized TensorProto (the .pb files of ONNX's test data).
bool parseTensorProto(llvm::StringRef bytes, onnx::TensorProto &tensor);

} // namespace mlir::kiln

#endif // KILN_COMPILER_IMPORT_ONNX_ONNXIMPORTER_H
