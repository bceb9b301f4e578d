//===- ConvEmitter.h - conv fusions to CUDA kernels --------------*- C++
//-*-===//

#ifndef KILN_CODEGEN_CUDA_CONVEMITTER_H
#define KILN_CODEGEN_CUDA_CONVEMITTER_H

#include "codegen/cuda/GemmConfig.h"
#include "codegen/cuda/KernelEmitter.h"

#include <optional>

namespace mlir::kiln::codegen {

/// The kernels and launches of conv fusion `fusion` (ConvPlan.h); with
/// `forced`, of that implicit-GEMM tile and split instead of the cost
/// model's (the template instances that every table entry is checked by).
FailureOr<GeneratedFusion>
emitConv(FusionOp fusion, const CodegenOptions &options,
         std::optional<GemmChoice> forced = std::nullopt);

} // namespace mlir::kiln::codegen

#endif // KILN_CODEGEN_CUDA_CONVEMITTER_H
