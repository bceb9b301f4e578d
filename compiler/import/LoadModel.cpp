//===- LoadModel.cpp - a model file, MLIR or ONNX, as a kiln module -------===//

#include "compiler/import/LoadModel.h"
#include "compiler/import/ModelText.h"
#include "dialects/kiln/IR/ModuleVerifier.h"

#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::kiln {
namespace {

namespace cl = llvm::cl;

cl::opt<std::string>
    trainable("trainable",
              cl::desc(".onnx: the initializers that become trainable "
                       "parameters, all (every floating-point one) or "
                       "comma-separated names (the others are constants)"),
              cl::value_desc("all|NAME,..."), cl::init(""),
              cl::cat(modelOptionCategory()));
cl::opt<std::string> loss("loss",
                          cl::desc(".onnx: add a loss on the graph's output "
                                   "(needs --target)"),
                          cl::value_desc("mse|cross_entropy"), cl::init(""),
                          cl::cat(modelOptionCategory()));
cl::opt<std::string> target("target",
                            cl::desc(".onnx: the name of the target input "
                                     "that --loss adds"),
                            cl::value_desc("name"), cl::init(""),
                            cl::cat(modelOptionCategory()));
cl::opt<bool> freshParams(
    "fresh-params",
    cl::desc(".onnx: trainable initializers start from a fresh "
             "initialisation (xavier for weights, zeros for the rest) instead "
             "of their values, which the artifact then does not carry "
             "(kiln-run --params loads them)"),
    cl::init(false), cl::cat(modelOptionCategory()));
cl::opt<std::string>
    weights("onnx-weights",
            cl::desc(".onnx: also write the trainable initializers' values "
                     "(which the parameters start from) to this safetensors "
                     "file, for kiln-ref --inputs and kiln-run --params"),
            cl::value_desc("path"), cl::init(""),
            cl::cat(modelOptionCategory()));

} // namespace

cl::OptionCategory &modelOptionCategory() {
  static cl::OptionCategory category("Model");
  return category;
}

std::string checkModelOptions(llvm::StringRef path) {
  if (!isOnnxPath(path)) {
    for (const cl::opt<std::string> *option :
         {&trainable, &loss, &target, &weights})
      if (option->getNumOccurrences())
        return "--" + option->ArgStr.str() +
               " is an option of the ONNX importer, and " + path.str() +
               " is not an .onnx model";
    return "";
  }
  if (!loss.empty() && loss != "mse" && loss != "cross_entropy")
    return "--loss must be mse or cross_entropy, not '" + loss + "'";
  if (!loss.empty() && target.empty())
    return "--loss needs --target=NAME";
  if (loss.empty() && !target.empty())
    return "--target names the target input of --loss; give --loss too";
  return "";
}

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
  options.freshParameters = freshParams;
  return options;
}

OwningOpRef<ModuleOp> loadModel(llvm::StringRef path,
                                llvm::SourceMgr &sourceMgr,
                                MLIRContext *context,
                                const OnnxImportOptions &options,
                                std::string &error) {
  OwningOpRef<ModuleOp> module;
  if (isOnnxPath(path)) {
    module = importOnnxFile(path, context, options);
  } else {
    std::unique_ptr<llvm::MemoryBuffer> file = openInputFile(path, &error);
    if (!file)
      return nullptr;
    if (failed(checkModelText(*file, error)))
      return nullptr;
    sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
    module = parseSourceFile<ModuleOp>(sourceMgr, context);
  }
  if (!module || failed(verifyModule(*module)))
    return nullptr;
  return module;
}

} // namespace mlir::kiln
