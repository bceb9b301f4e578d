//===- CodegenPass.h - code generation as passes ----------------*- C++ -*-===//
//
// Code generation is two passes, the kiln pipeline's last stages:
// --kiln-select-kernels records each fusion's kernel in the IR (a kiln_cuda
// attribute) and the module's target; --kiln-emit-cuda renders those
// choices, on a fused, memory-planned module, and hands the generated
// module (kernels, launches, buffers) to the pass's creator. The compiler
// reaches them only by name, through the pass registry
// (compiler/pipeline/Pipeline.h): registerCodegenPasses() registers them and
// the pipeline `kiln-cuda` (both, each given the options it declares) in
// the tools that link the code generator.
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

#define GEN_PASS_DECL_KILNEMITCUDA
#define GEN_PASS_DECL_KILNSELECTKERNELS
#include "codegen/passes/Passes.h.inc"

namespace codegen {

/// A --kiln-emit-cuda pass that moves what it generates into `*result`
/// (when not null; it must outlive the pass manager's run). Without a
/// result, the pass only checks that code generation succeeds.
std::unique_ptr<Pass> createKilnEmitCudaPass(const KilnEmitCudaOptions &options,
                                             CompiledModule *result);

/// A --kiln-select-kernels pass.
std::unique_ptr<Pass>
createKilnSelectKernelsPass(const KilnSelectKernelsOptions &options);

/// The option of kiln-select-kernels, or of kiln-emit-cuda, named `name`;
/// null where the pass has none.
const llvm::cl::Option *selectKernelsOption(llvm::StringRef name);
const llvm::cl::Option *emitCudaOption(llvm::StringRef name);

/// The help of the kiln-select-kernels or kiln-emit-cuda option named
/// `name` (Passes.td), for the tools' flags that set it.
llvm::StringRef codegenOptionHelp(llvm::StringRef name);

/// The name of the pipeline registerCodegenPasses registers:
/// kiln-select-kernels then kiln-emit-cuda.
inline constexpr llvm::StringLiteral kCodegenPipelineName = "kiln-cuda";

} // namespace codegen

/// Registers kiln-select-kernels, kiln-emit-cuda and the kiln-cuda pipeline
/// (once).
void registerCodegenPasses();

} // namespace mlir::kiln

#endif // KILN_CODEGEN_PASSES_CODEGENPASS_H
