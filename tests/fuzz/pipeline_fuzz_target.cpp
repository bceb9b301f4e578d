//===- pipeline_fuzz_target.cpp - fuzz entry for kilnc's whole pipeline ---===//
//
// libFuzzer entry point: a byte string that parses and verifies as kiln IR
// goes through the whole of kilnc's pipeline twice, as `kilnc --inference`
// and as `kilnc --train=adamw --precision=bf16` would run it (mixed
// precision, the entries, autodiff, the train step, fusion, memory planning
// and code generation of every kernel's CUDA C++; NVRTC is left out so that
// a run stays fast). The function is the module's first. Each run either
// succeeds or fails with at least one error diagnostic that has a location
// in the input; a failure without one aborts, as does any crash.
//
//===----------------------------------------------------------------------===//

#include "compiler/pipeline/Pipeline.h"
#include "dialects/kiln/Gradients/GradientUtils.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

/// What the inputs came to: not parsed or verified, then per pipeline run
/// compiled or refused with a located error.
struct Counts {
  long inputs = 0, parsed = 0, compiled = 0, refused = 0;
} counts;

/// Whether `loc` points into the input (a file position, possibly behind a
/// name or inside a fused or call-site location).
bool isLocated(mlir::Location loc) {
  bool located = false;
  loc->walk([&](mlir::Location inner) {
    if (llvm::isa<mlir::FileLineColLoc>(inner))
      located = true;
    return located ? mlir::WalkResult::interrupt()
                   : mlir::WalkResult::advance();
  });
  return located;
}

/// Runs the pipeline on a copy of `module`; aborts on a failure that no
/// located error explains.
void runPipeline(mlir::ModuleOp module, llvm::StringRef function,
                 bool training) {
  mlir::MLIRContext *context = module.getContext();
  mlir::OwningOpRef<mlir::ModuleOp> copy = module.clone();
  bool locatedError = false;
  std::string errors;
  mlir::ScopedDiagnosticHandler collect(context, [&](mlir::Diagnostic &diag) {
    if (diag.getSeverity() == mlir::DiagnosticSeverity::Error) {
      locatedError |= isLocated(diag.getLocation());
      errors += diag.str() + "\n";
    }
    return mlir::success();
  });
  mlir::kiln::PipelineOptions options;
  options.function = function.str();
  options.train = training ? "adamw" : "none";
  options.precision = training ? "bf16" : "f32";
  mlir::PassManager pm(context);
  mlir::kiln::buildKilnPipeline(pm, options);
  if (succeeded(pm.run(*copy))) {
    ++counts.compiled;
    return;
  }
  if (locatedError) {
    ++counts.refused;
    return;
  }
  llvm::errs() << "the pipeline (" << (training ? "training" : "inference")
               << ") failed without a located error:\n"
               << errors;
  std::abort();
}

} // namespace

extern "C" void KilnFuzzCounts(long *inputs, long *parsed) {
  *inputs = counts.inputs;
  *parsed = counts.parsed;
}

/// Prints the counts (the driver calls it at the end).
extern "C" void PipelineFuzzReport() {
  std::printf("%ld inputs, %ld parsed and verified; pipeline runs: %ld "
              "compiled, %ld refused with a located error\n",
              counts.inputs, counts.parsed, counts.compiled, counts.refused);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ++counts.inputs;
  static mlir::DialectRegistry *registry = [] {
    auto *r = new mlir::DialectRegistry();
    r->insert<mlir::kiln::KilnDialect, mlir::func::FuncDialect>();
    mlir::kiln::registerGradientRules(*r);
    return r;
  }();
  mlir::MLIRContext context(*registry, mlir::MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  context.printOpOnDiagnostic(false);
  std::string text(reinterpret_cast<const char *>(data), size);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(text, "fuzz-input",
                                       /*RequiresNullTerminator=*/true),
      llvm::SMLoc());
  mlir::OwningOpRef<mlir::ModuleOp> module;
  {
    mlir::ScopedDiagnosticHandler silence(&context, [](mlir::Diagnostic &) {
      return mlir::success();
    });
    mlir::ParserConfig config(&context, /*verifyAfterParse=*/true);
    module = mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, config);
  }
  if (!module)
    return 0;
  ++counts.parsed;
  mlir::func::FuncOp first;
  for (auto function : module->getOps<mlir::func::FuncOp>()) {
    first = function;
    break;
  }
  if (!first || first.isExternal())
    return 0;
  runPipeline(*module, first.getSymName(), /*training=*/false);
  runPipeline(*module, first.getSymName(), /*training=*/true);
  return 0;
}
