//===- CodegenPass.h - code generation as a pass ----------------*- C++ -*-===//
//
// --kiln-codegen, the kiln pipeline's last stage: runs the code generator on
// a fused, memory-planned module and hands the generated module (kernels,
// launches, buffers) to the pass's creator.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_PIPELINE_CODEGENPASS_H
#define KILN_COMPILER_PIPELINE_CODEGENPASS_H

#include "codegen/cuda/ModuleCodegen.h"
#include "compiler/options/ByteCount.h"

#include "mlir/Pass/Pass.h"

#include <memory>

namespace mlir::kiln {

#define GEN_PASS_DECL_KILNCODEGEN
#include "compiler/pipeline/Passes.h.inc"

/// A --kiln-codegen pass that moves what it generates into `*result` (when
/// not null; it must outlive the pass manager's run). Without a result, the
/// pass only checks that code generation succeeds.
std::unique_ptr<Pass> createKilnCodegenPass(const KilnCodegenOptions &options,
                                            codegen::CompiledModule *result);

#define GEN_PASS_REGISTRATION
#include "compiler/pipeline/Passes.h.inc"

} // namespace mlir::kiln

#endif // KILN_COMPILER_PIPELINE_CODEGENPASS_H
