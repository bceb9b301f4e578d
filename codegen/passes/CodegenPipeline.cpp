//===- CodegenPipeline.cpp - the passes' registration and options ---------===//
//
// registerCodegenPasses() registers the two passes and the `kiln-cuda`
// pipeline, which the registered kiln-pipeline adds with codegen=true:
// kiln-select-kernels then kiln-emit-cuda, each given the options of the
// pipeline's text that it declares.
//
//===----------------------------------------------------------------------===//

#include "codegen/passes/CodegenPass.h"

#include "compiler/options/OptionText.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

namespace mlir::kiln {

#define GEN_PASS_REGISTRATION
#include "codegen/passes/Passes.h.inc"

llvm::StringRef codegen::codegenOptionHelp(llvm::StringRef name) {
  const llvm::cl::Option *option = selectKernelsOption(name);
  if (!option)
    option = emitCudaOption(name);
  assert(option && "not an option of kiln-select-kernels or kiln-emit-cuda");
  return option->HelpStr;
}

/// Adds the registered pass `name` with the options `text` to `pm`.
static LogicalResult
addRegisteredPass(OpPassManager &pm, StringRef name, StringRef text,
                  function_ref<LogicalResult(const Twine &)> emitError) {
  const PassInfo *pass = PassInfo::lookup(name);
  assert(pass && "registered with the pipeline");
  return pass->addToPipeline(pm, text, emitError);
}

static void registerCodegenPipeline() {
  registerPassPipeline(
      codegen::kCodegenPipelineName,
      "Code generation: kiln-select-kernels records every fusion's kernel, "
      "kiln-emit-cuda renders them; each takes the options it declares",
      [](OpPassManager &pm, StringRef text,
         function_ref<LogicalResult(const Twine &)> emitError) {
        auto [choices, emission] =
            partitionOptions(text, [](StringRef name) {
              return codegen::selectKernelsOption(name) != nullptr;
            });
        return failure(
            failed(addRegisteredPass(pm, "kiln-select-kernels", choices,
                                     emitError)) ||
            failed(addRegisteredPass(pm, "kiln-emit-cuda", emission,
                                     emitError)));
      },
      [](function_ref<void(const mlir::detail::PassOptions &)>) {});
}

void registerCodegenPasses() {
  static bool registered = [] {
    registerCudaPasses();
    registerCodegenPipeline();
    return true;
  }();
  (void)registered;
}

} // namespace mlir::kiln
