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
// The command line is mlir-opt's, registered here rather than by
// mlir::registerAndParseCLIOptions so that --help shows mlir-opt's, MLIR's
// and the importer's options and the passes, not libLLVM's (--help-hidden
// has those), and a bad command line exits with status 2
// (tools/common/ToolOptions.h).
//
//===----------------------------------------------------------------------===//

#include "codegen/dialect/KilnCudaDialect.h"
#include "codegen/passes/CodegenPass.h"
#include "compiler/import/LoadModel.h"
#include "compiler/import/ModelText.h"
#include "compiler/pipeline/Pipeline.h"
#include "dialects/kiln/Gradients/GradientUtils.h"
#include "dialects/kiln/IR/KilnDialect.h"
#include "dialects/kiln/IR/ModuleVerifier.h"

#include "mlir/Debug/Counter.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "tools/common/ToolOptions.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <set>

namespace cl = llvm::cl;

static cl::OptionCategory optCategory("mlir-opt's options");
static cl::OptionCategory
    mlirCategory("MLIR's printing, pass-manager and timing options");
static cl::OptionCategory passCategory("Passes");
static cl::opt<std::string> inputPath(cl::Positional,
                                      cl::desc("<input.mlir|input.onnx>"),
                                      cl::init("-"));
static cl::opt<std::string> outputPath("o", cl::desc("output file"),
                                       cl::value_desc("path"), cl::init("-"),
                                       cl::cat(optCategory));

/// Registers mlir-opt's options as mlir::registerAndParseCLIOptions does,
/// each in its category: the pass list, MLIR's --mlir-* options, and the
/// rest of mlir-opt's.
static void registerOptOptions(mlir::DialectRegistry &registry) {
  std::set<cl::Option *> before;
  for (auto &entry : cl::getRegisteredOptions())
    before.insert(entry.getValue());
  mlir::MlirOptMainConfig::registerCLOptions(registry);
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerPassManagerCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  mlir::tracing::DebugCounter::registerCLOptions();
  for (auto &entry : cl::getRegisteredOptions()) {
    cl::Option *option = entry.getValue();
    if (before.count(option) || option->getOptionHiddenFlag() != cl::NotHidden)
      continue;
    if (option->ArgStr.empty())
      option->addCategory(passCategory);
    else if (option->ArgStr.starts_with("mlir-"))
      option->addCategory(mlirCategory);
    else
      option->addCategory(optCategory);
  }
}

static ::kiln::tools::ToolCommandLine
commandLine(const mlir::DialectRegistry &registry) {
  return {
      "kiln-opt",
      "kiln-opt [options] [<input.mlir|input.onnx>] [-o output.mlir]",
      "kiln-opt: mlir-opt for kiln. Parses and verifies the input (standard "
      "input without one), runs the passes given as flags or by "
      "--pass-pipeline, and prints the IR. Dialects: " +
          llvm::join(registry.getDialectNames(), ", ") + ".",
      {&optCategory, &::mlir::kiln::modelOptionCategory(), &mlirCategory,
       &passCategory},
      {{"function", "kiln-opt takes the function of a pass as the "
                    "pass's option, --kiln-pipeline=\"function=NAME\""},
       {"train", "kilnc compiles; kiln-opt runs passes, such as "
                 "--kiln-pipeline=\"train=adamw\""}},
      ""};
}

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
  llvm::InitLLVM init(argc, argv);
  mlir::registerTransformsPasses();
  mlir::kiln::registerKilnPasses();
  mlir::kiln::registerCodegenPasses();
  mlir::DialectRegistry registry;
  registry.insert<mlir::kiln::KilnDialect, mlir::kiln::cuda::KilnCudaDialect,
                  mlir::func::FuncDialect, mlir::arith::ArithDialect>();
  mlir::kiln::registerGradientRules(registry);
  registerOptOptions(registry);
  ::kiln::tools::ToolCommandLine tool = commandLine(registry);
  ::kiln::tools::parseToolCommandLine(argc, argv, tool);
  if (std::string problem = mlir::kiln::checkModelOptions(inputPath);
      !problem.empty())
    return ::kiln::tools::usageError(tool, problem);
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();
  // The checks of a whole module that the other tools make as they load a
  // model run before the passes given.
  config.setPassPipelineSetupFn(
      [given = mlir::MlirOptMainConfig(config)](mlir::PassManager &pm) {
        pm.addPass(mlir::kiln::createVerifyModulePass());
        return given.setupPassPipeline(pm);
      });

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
    // The checks of the text every tool makes before parsing.
    if (mlir::failed(mlir::kiln::checkModelText(*input, error))) {
      llvm::errs() << "kiln-opt: error: " << error << "\n";
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
