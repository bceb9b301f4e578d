//===- GemmEmitter.h - the kernels of a gemm fusion -------------*- C++ -*-===//
//
// The gemm emitter (createGemmEmitter in KernelEmitter.h) plans each fusion
// with the cost model of GemmConfig.h. emitGemm also takes a configuration
// to use instead, so that the template instances the nvcc check compiles
// are rendered exactly as the planner renders the kernels it chooses.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_CUDA_GEMMEMITTER_H
#define KILN_CODEGEN_CUDA_GEMMEMITTER_H

#include "codegen/cuda/GemmConfig.h"
#include "codegen/cuda/KernelEmitter.h"

#include <optional>

namespace mlir::kiln::codegen {

/// A configuration to use instead of the cost model's choice.
struct GemmForcedChoice {
  GemmTileConfig config;
  /// Splits of K (K tiles divided evenly, the last split shorter).
  int split = 1;
};

/// The kernels and launches of gemm fusion `fusion`; with `forced`, of that
/// configuration (which must suit the fusion: wgmma needs sm_90 and 16-byte
/// aligned operands of one problem).
FailureOr<GeneratedFusion>
emitGemm(FusionOp fusion, const CodegenOptions &options,
         std::optional<GemmForcedChoice> forced = std::nullopt);

} // namespace mlir::kiln::codegen

#endif // KILN_CODEGEN_CUDA_GEMMEMITTER_H
