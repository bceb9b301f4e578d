//===- LoadModel.cpp - a model file, MLIR or ONNX, as a kiln module -------===//

#include "compiler/import/LoadModel.h"

#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::kiln {
namespace {

namespace cl = llvm::cl;

cl::OptionCategory &onnxCategory() {
  static cl::OptionCategory category("ONNX import options (for .onnx models)");
  return category;
}

cl::opt<std::string>
    trainable("trainable",
              cl::desc("initializers that become trainable parameters: all, or "
                       "comma-separated names (others are constants)"),
              cl::init(""), cl::cat(onnxCategory()));
cl::opt<std::string> loss("loss",
                          cl::desc("add a loss on the graph's output: mse or "
                                   "cross_entropy (needs --target)"),
                          cl::init(""), cl::cat(onnxCategory()));
cl::opt<std::string> target("target",
                            cl::desc("name of the target input that --loss "
                                     "adds"),
                            cl::init(""), cl::cat(onnxCategory()));
cl::opt<std::string> weights(
    "onnx-weights",
    cl::desc("write the trainable initializers' values to this safetensors "
             "file (kiln-run --params)"),
    cl::init(""), cl::cat(onnxCategory()));

} // namespace

std::unique_ptr<ScopedDiagnosticHandler>
makeOnnxDiagnosticHandler(MLIRContext *context) {
  return std::make_unique<ScopedDiagnosticHandler>(
      context, [](Diagnostic &diagnostic) -> LogicalResult {
        auto name = llvm::dyn_cast<NameLoc>(diagnostic.getLocation());
        auto file = name ? llvm::dyn_cast<FileLineColLoc>(name.getChildLoc())
                         : FileLineColLoc();
        if (!file || file.getLine() != 0)
          return failure();
        const char *severity = "error";
        switch (diagnostic.getSeverity()) {
        case DiagnosticSeverity::Warning:
          severity = "warning";
          break;
        case DiagnosticSeverity::Note:
          severity = "note";
          break;
        case DiagnosticSeverity::Remark:
          severity = "remark";
          break;
        case DiagnosticSeverity::Error:
          break;
        }
        llvm::errs() << file.getFilename().getValue() << ": "
                     << name.getName().getValue() << ": " << severity << ": "
                     << diagnostic.str() << "\n";
        for (const Diagnostic &note : diagnostic.getNotes())
          llvm::errs() << file.getFilename().getValue()
                       << ": note: " << note.str() << "\n";
        return success();
      });
}

bool isOnnxPath(llvm::StringRef path) {
  return llvm::sys::path::extension(path).equals_insensitive(".onnx");
}

OnnxImportOptions
onnxImportOptionsFromCommandLine(llvm::StringRef functionName) {
  OnnxImportOptions options;
  options.functionName = functionName.str();
  options.trainable = trainable;
  options.loss = loss;
  options.target = target;
  options.weightsPath = weights;
  return options;
}

OwningOpRef<ModuleOp> loadModel(llvm::StringRef path,
                                llvm::SourceMgr &sourceMgr,
                                MLIRContext *context,
                                const OnnxImportOptions &options,
                                std::string &error) {
  if (isOnnxPath(path))
    return importOnnxFile(path, context, options);
  std::unique_ptr<llvm::MemoryBuffer> file = openInputFile(path, &error);
  if (!file)
    return nullptr;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  return parseSourceFile<ModuleOp>(sourceMgr, context);
}

} // namespace mlir::kiln
