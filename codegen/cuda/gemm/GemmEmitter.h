//===- GemmEmitter.h - the kernels of a gemm fusion -------------*- C++ -*-===//
//
// A gemm fusion's kernel is chosen (selectGemm, the cost model of
// GemmConfig.h), checked (verifyGemm) and rendered (emitGemm) apart, so that
// a choice recorded in the IR (#kiln_cuda.gemm) or made by the template
// instances the nvcc check compiles renders as the planner's own does.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_CUDA_GEMM_GEMMEMITTER_H
#define KILN_CODEGEN_CUDA_GEMM_GEMMEMITTER_H

#include "codegen/cuda/KernelEmitter.h"
#include "codegen/cuda/gemm/GemmConfig.h"

#include <optional>

namespace mlir::kiln::codegen {

/// The kernel of a gemm fusion, as --kiln-select-kernels records it
/// (#kiln_cuda.gemm, GemmKernelAttr.h): a tile of GemmConfig.h's tables and
/// its split of K, and how the TMA kernel runs it.
struct GemmKernelChoice {
  GemmChoice choice;
  /// The wgmma tile runs on operands the tensor memory accelerator copies.
  bool tma = false;
  /// Blocks per cluster sharing the rhs tile (TMA).
  int clusterM = 1;
  /// The first result stored by TMA from the staged epilogue.
  bool tmaStore = false;
};

/// The kernel the cost model chooses for gemm fusion `fusion`.
FailureOr<GemmKernelChoice> selectGemm(FusionOp fusion,
                                       const CodegenOptions &options);

/// Checks that `kernel` can run `fusion` on options.arch (the tile fits,
/// the kernel suits the operands and the target, no split of K is empty);
/// the errors are the fusion's.
LogicalResult verifyGemm(FusionOp fusion, const CodegenOptions &options,
                         const GemmKernelChoice &kernel);

/// The kernels and launches of gemm fusion `fusion` run by `kernel`, which
/// is checked first (verifyGemm).
FailureOr<GeneratedFusion> emitGemm(FusionOp fusion,
                                    const CodegenOptions &options,
                                    const GemmKernelChoice &kernel);

} // namespace mlir::kiln::codegen

#endif // KILN_CODEGEN_CUDA_GEMM_GEMMEMITTER_H
