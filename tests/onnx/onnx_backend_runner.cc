//===- onnx_backend_runner.cc - ONNX's backend tests on the CPU reference -===//
//
//   onnx_backend_runner --data DIR [--filter SUBSTRING] [--results FILE.md]
//                       [--min-pass N] [--export DIR]
//
// Runs every test folder under DIR (e.g. Debian's
// /usr/share/libonnx-testdata/data/node) through the ONNX importer and the
// CPU reference, and prints one line per test, "PASS name", "FAIL name:
// why" or "UNSUPPORTED name: the importer's diagnostic", then the summary
// "onnx backend tests: P passed, F failed, U unsupported of T". A FAIL is a
// wrong answer (or a run-time error) of a model that imported.
//
// Exit status 1 if any test failed or fewer than --min-pass passed.
// --results writes the same lines as a Markdown table; --export writes, for
// every passing test, the imported module (NAME/model.mlir), its inputs and
// expected outputs (NAME/inputs.safetensors, NAME/expected.safetensors) for
// the GPU bundle (tests/gpu/onnx).
//
//===----------------------------------------------------------------------===//

#include "tests/onnx/BackendTest.h"
#include "tests/onnx/TensorFiles.h"

#include "compiler/interpreter/Interpreter.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <filesystem>
#include <fstream>

namespace cl = llvm::cl;
namespace fs = std::filesystem;
using kiln::onnx_tests::Outcome;

static cl::opt<std::string> dataDir("data", cl::desc("folder of test folders"),
                                    cl::Required);
static cl::opt<std::string> filter("filter",
                                   cl::desc("run only tests whose name "
                                            "contains this"),
                                   cl::init(""));
static cl::opt<std::string>
    resultsPath("results", cl::desc("write a Markdown table"), cl::init(""));
static cl::opt<int> minPass("min-pass", cl::desc("fail when fewer tests pass"),
                            cl::init(0));
static cl::opt<std::string>
    exportDir("export",
              cl::desc("write the passing tests' modules and data here"),
              cl::init(""));

namespace {

const char *outcomeName(Outcome outcome) {
  switch (outcome) {
  case Outcome::kPass:
    return "PASS";
  case Outcome::kFail:
    return "FAIL";
  case Outcome::kUnsupported:
    return "UNSUPPORTED";
  }
  return "";
}

/// One line of text: newlines of multi-line diagnostics become spaces.
std::string oneLine(std::string text) {
  for (char &c : text)
    if (c == '\n' || c == '|')
      c = c == '\n' ? ' ' : '/';
  return text;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv,
                              "ONNX backend tests on kiln's CPU reference\n");
  std::vector<fs::path> tests;
  std::error_code error;
  for (const auto &entry : fs::directory_iterator(dataDir.getValue(), error))
    if (entry.is_directory() && fs::exists(entry.path() / "model.onnx") &&
        entry.path().filename().string().find(filter) != std::string::npos)
      tests.push_back(entry.path());
  if (error || tests.empty()) {
    llvm::errs() << "error: no ONNX test folders under '" << dataDir << "'\n";
    return 1;
  }
  std::sort(tests.begin(), tests.end());

  mlir::DialectRegistry registry;
  registry.insert<mlir::kiln::KilnDialect, mlir::func::FuncDialect>();
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  context.printOpOnDiagnostic(false);

  int passed = 0, failed = 0, unsupported = 0;
  std::string table = "| test | result | detail |\n|---|---|---|\n";
  for (const fs::path &test : tests) {
    std::string name = test.filename().string();
    kiln::onnx_tests::TestResult result = kiln::onnx_tests::runBackendTest(
        test.string(), kiln::onnx_tests::Tolerance(), context);
    std::string message = oneLine(result.message);
    llvm::outs() << outcomeName(result.outcome) << " " << name
                 << (message.empty() ? "" : ": " + message) << "\n";
    llvm::outs().flush();
    table += "| " + name + " | " + outcomeName(result.outcome) + " | " +
             message + " |\n";
    switch (result.outcome) {
    case Outcome::kPass:
      ++passed;
      break;
    case Outcome::kFail:
      ++failed;
      break;
    case Outcome::kUnsupported:
      ++unsupported;
      break;
    }
    if (result.outcome == Outcome::kPass && !exportDir.empty()) {
      std::string problem;
      if (!kiln::onnx_tests::exportTest(exportDir + "/" + name, result,
                                        problem)) {
        llvm::errs() << "error: exporting " << name << ": " << problem << "\n";
        return 1;
      }
    }
  }
  std::string summary = "onnx backend tests: " + std::to_string(passed) +
                        " passed, " + std::to_string(failed) + " failed, " +
                        std::to_string(unsupported) + " unsupported of " +
                        std::to_string(tests.size());
  llvm::outs() << summary << "\n";
  if (!resultsPath.empty()) {
    std::ofstream out(resultsPath.getValue());
    out << "# ONNX backend tests on kiln's CPU reference\n\n"
        << "Data: `" << dataDir << "` (Debian's libonnx-testdata 1.12), "
        << "f32 reference interpreter, rtol 1e-3, atol 1e-7.\n\n"
        << summary << "\n\n"
        << table;
  }
  if (failed > 0) {
    llvm::errs() << "error: " << failed << " test(s) gave wrong answers\n";
    return 1;
  }
  if (passed < minPass) {
    llvm::errs() << "error: " << passed << " tests passed, fewer than the "
                 << "floor of " << minPass << "\n";
    return 1;
  }
  return 0;
}
