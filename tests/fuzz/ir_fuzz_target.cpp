//===- ir_fuzz_target.cpp - fuzz entry for the IR parser and verifier -----===//
//
// libFuzzer entry point: any byte string goes the way the tools load a
// model: the checks of its text (compiler/import/ModelText.h: binary,
// empty, nested too deep), MLIR's parser and verifier, then the module's
// own checks (dialects/kiln/IR/ModuleVerifier.h). Diagnostics are
// swallowed; the only failure is a crash. Built two ways: with clang's
// -fsanitize=fuzzer by tools/fuzz/run_ir_fuzzer.sh, and with a
// replay/mutation driver (ir_fuzz_driver.cpp) in the test suite.
//
//===----------------------------------------------------------------------===//

#include "compiler/import/ModelText.h"
#include "dialects/kiln/IR/KilnDialect.h"
#include "dialects/kiln/IR/ModuleVerifier.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace {
long inputs = 0, parsed = 0;
} // namespace

extern "C" void KilnFuzzCounts(long *inputCount, long *parsedCount) {
  *inputCount = inputs;
  *parsedCount = parsed;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ++inputs;
  static mlir::DialectRegistry *registry = [] {
    auto *r = new mlir::DialectRegistry();
    r->insert<mlir::kiln::KilnDialect, mlir::func::FuncDialect,
              mlir::arith::ArithDialect>();
    return r;
  }();
  // A fresh context per input: nothing one input interns can affect the next.
  mlir::MLIRContext context(*registry, mlir::MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  mlir::ScopedDiagnosticHandler silence(&context, [](mlir::Diagnostic &) {
    return mlir::success();
  });
  // kiln-opt reads files into NUL-terminated buffers, and MLIR's lexer relies
  // on that terminator: give the parser the same.
  std::string text(reinterpret_cast<const char *>(data), size);
  std::unique_ptr<llvm::MemoryBuffer> buffer =
      llvm::MemoryBuffer::getMemBuffer(text, "fuzz-input",
                                       /*RequiresNullTerminator=*/true);
  std::string error;
  if (failed(mlir::kiln::checkModelText(*buffer, error)))
    return 0;
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  mlir::ParserConfig config(&context, /*verifyAfterParse=*/false);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, config);
  if (!module)
    return 0;
  ++parsed;
  if (succeeded(mlir::verify(*module)))
    (void)mlir::kiln::verifyModule(*module);
  return 0;
}
