//===- LoadModel.h - MLIR or ONNX model files as kiln modules ---*- C++ -*-===//
//
// The tools (kilnc, kiln-opt, kiln-ref) accept a model as kiln MLIR or as an
// ONNX file, chosen by the file extension (.onnx). The ONNX importer's
// options are command-line options of every tool that links this library:
//
//   --trainable=all|NAME,NAME   initializers that become kiln.param arguments
//   --loss=mse|cross_entropy    a loss on the graph's single output ...
//   --target=NAME               ... against a new input of this name
//   --fresh-params              trainable initializers start from their
//                               #kiln.init, not their values
//   --onnx-weights=FILE         also writes the trainable initializers'
//                               values (which the parameters start from, as
//                               kiln.value) as safetensors (kiln-ref --inputs,
//                               kiln-run --params FILE)
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_LOADMODEL_H
#define KILN_COMPILER_IMPORT_LOADMODEL_H

#include "compiler/import/onnx/OnnxImporter.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/SourceMgr.h"

namespace mlir::kiln {

/// The category of the options above, under which --help shows them; tools
/// add their --function to it.
llvm::cl::OptionCategory &modelOptionCategory();

/// Why the options above do not fit the model at `path` (ONNX options for a
/// model that is not .onnx, --loss without --target, an unknown --loss), or
/// empty when they do: a command-line error.
std::string checkModelOptions(llvm::StringRef path);

/// Whether `path` names an ONNX model (by its extension).
bool isOnnxPath(llvm::StringRef path);

/// The importer options given on the command line, with `functionName`.
OnnxImportOptions
onnxImportOptionsFromCommandLine(llvm::StringRef functionName);

/// A diagnostic handler for models imported from ONNX: a diagnostic located
/// at an ONNX node, graph input or initializer (a named location in the
/// .onnx file) prints as "model.onnx: node 'fc1' (Gemm): error: ...";
/// others go on to the handlers registered before it. Keep it alive while
/// the module is compiled.
std::unique_ptr<ScopedDiagnosticHandler>
makeOnnxDiagnosticHandler(MLIRContext *context);

/// Parses the MLIR file at `path` into `sourceMgr` (so that a
/// SourceMgrDiagnosticHandler on it shows file:line:col), after the checks
/// of its bytes (ModelText.h), or imports it as ONNX with `options`; then
/// checks the module as a whole (dialects/kiln/IR/ModuleVerifier.h). Null
/// after errors, which went to the context's diagnostic handler, or
/// (unreadable or binary file) into `error`.
OwningOpRef<ModuleOp> loadModel(llvm::StringRef path,
                                llvm::SourceMgr &sourceMgr,
                                MLIRContext *context,
                                const OnnxImportOptions &options,
                                std::string &error);

} // namespace mlir::kiln

#endif // KILN_COMPILER_IMPORT_LOADMODEL_H
