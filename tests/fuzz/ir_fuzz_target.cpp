//===- ir_fuzz_target.cpp - fuzz entry for the IR parser and verifier -----===//
//
// libFuzzer entry point: any byte string is parsed as kiln IR and, when it
// parses, verified. Diagnostics are swallowed; the only failure is a crash.
// Built two ways: with clang's -fsanitize=fuzzer by tools/fuzz/run_ir_fuzzer.sh,
// and with a replay/mutation driver (ir_fuzz_driver.cpp) in the test suite.
//
//===----------------------------------------------------------------------===//

#include "dialects/kiln/IR/KilnDialect.h"

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
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
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
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(text, "fuzz-input",
                                       /*RequiresNullTerminator=*/true),
      llvm::SMLoc());
  mlir::ParserConfig config(&context, /*verifyAfterParse=*/true);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, config);
  if (module)
    (void)mlir::verify(*module);
  return 0;
}
