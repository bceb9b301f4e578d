//===- CodegenPass.h - code generation as a pass ----------------*- C++ -*-===//
//
// --kiln-select-kernels records each fusion's kernel in the IR (a kiln_cuda
// attribute); --kiln-codegen, the kiln pipeline's last stage, runs the code
// generator on a fused, memory-planned module, rendering those choices, and
// hands the generated module (kernels, launches, buffers) to the pass's
// creator. The compiler reaches it only by
// name, through the pass registry (compiler/pipeline/Pipeline.h); tools
// that link the code generator register it with registerCodegenPasses().
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_PASSES_CODEGENPASS_H
#define KILN_CODEGEN_PASSES_CODEGENPASS_H

#include "codegen/cuda/ModuleCodegen.h"
#include "codegen/passes/CodegenOptionTypes.h"
#include "compiler/options/ByteCount.h"

#include "mlir/Pass/Pass.h"

#include <memory>

namespace mlir::kiln {

#define GEN_PASS_DECL_KILNCODEGEN
#define GEN_PASS_DECL_KILNSELECTKERNELS
#include "codegen/passes/Passes.h.inc"

namespace codegen {

/// A --kiln-codegen pass that moves what it generates into `*result` (when
/// not null; it must outlive the pass manager's run). Without a result, the
/// pass only checks that code generation succeeds.
std::unique_ptr<Pass> createKilnCodegenPass(const KilnCodegenOptions &options,
                                            CompiledModule *result);

/// A --kiln-select-kernels pass.
std::unique_ptr<Pass>
createKilnSelectKernelsPass(const KilnSelectKernelsOptions &options);

/// The same options of kiln-select-kernels as `options` has.
KilnSelectKernelsOptions selectionOptionsOf(const KilnCodegenOptions &options);

/// The code generator's options that the kernel planners read, from a pass
/// or pass options with the options of Passes.td's kernelChoiceOptions (a
/// pass makes it its friend).
template <class PassOptions>
CodegenOptions kernelChoiceOptions(const PassOptions &pass) {
  CodegenOptions options;
  options.arch = std::string(pass.arch);
  options.allowTf32 = pass.tf32;
  options.allowTma = pass.tma;
  options.gemmSchedule = pass.gemmSchedule;
  options.gemmCluster =
      static_cast<int>(static_cast<GemmCluster>(pass.gemmCluster));
  options.gemmTmaStore = pass.gemmTmaStore;
  options.persistentAttention = pass.persistentAttention;
  options.fusedAttentionBackward = pass.fusedAttentionBackward;
  options.attentionSchedule = pass.attentionSchedule;
  return options;
}

/// The help of the kiln-codegen option named `name` (Passes.td), for the
/// tools' flags that set it.
llvm::StringRef codegenOptionHelp(llvm::StringRef name);

} // namespace codegen

#define GEN_PASS_REGISTRATION
#include "codegen/passes/Passes.h.inc"

} // namespace mlir::kiln

#endif // KILN_CODEGEN_PASSES_CODEGENPASS_H
