//===- kiln-opt.cpp - the kiln pass driver
//---------------------------------===//
//
// mlir-opt for kiln: parses, verifies, runs pass pipelines and prints IR. The
// lit tests drive every pass and diagnostic through it. Every kiln pass and
// the whole compiler, --kiln-pipeline (compiler/pipeline), are registered.
// A .onnx input goes through the ONNX importer first (compiler/import), with
// its options (--trainable, --loss, --target); its locations name the ONNX
// nodes.
//
//===----------------------------------------------------------------------===//

#include "compiler/import/LoadModel.h"
#include "compiler/pipeline/Pipeline.h"
#include "dialects/kiln/Gradients/GradientUtils.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

/// Imports the ONNX model at `path` and prints it (with its locations) as
/// the buffer MlirOptMain then parses; null after errors, already printed.
static std::unique_ptr<llvm::MemoryBuffer>
importToBuffer(llvm::StringRef path, mlir::DialectRegistry &registry) {
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  auto onnxDiagnostics = mlir::kiln::makeOnnxDiagnosticHandler(&context);
  std::string error;
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::kiln::loadModel(
      path, sourceMgr, &context,
      mlir::kiln::onnxImportOptionsFromCommandLine("loss"), error);
  if (!module) {
    if (!error.empty())
      llvm::errs() << "error: " << error << "\n";
    return nullptr;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os, mlir::OpPrintingFlags().enableDebugInfo());
  return llvm::MemoryBuffer::getMemBufferCopy(os.str(), path);
}

int main(int argc, char **argv) {
  mlir::registerTransformsPasses();
  mlir::kiln::registerKilnPasses();
  mlir::DialectRegistry registry;
  registry.insert<mlir::kiln::KilnDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect>();
  mlir::kiln::registerGradientRules(registry);
  auto [inputPath, outputPath] = mlir::registerAndParseCLIOptions(
      argc, argv, "kiln optimizer driver\n", registry);
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input;
  if (mlir::kiln::isOnnxPath(inputPath)) {
    input = importToBuffer(inputPath, registry);
    if (!input)
      return 1;
  } else {
    input = mlir::openInputFile(inputPath, &error);
    if (!input) {
      llvm::errs() << error << "\n";
      return 1;
    }
  }
  auto output = mlir::openOutputFile(outputPath, &error);
  if (!output) {
    llvm::errs() << error << "\n";
    return 1;
  }
  if (mlir::failed(
          mlir::MlirOptMain(output->os(), std::move(input), registry, config)))
    return 1;
  output->keep();
  return 0;
}
