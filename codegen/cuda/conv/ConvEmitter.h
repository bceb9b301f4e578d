//===- ConvEmitter.h - conv fusions to CUDA kernels -------------*- C++ -*-===//
//
// A conv fusion's kernel is chosen (selectConv: ConvPlan.h's planner),
// checked (verifyConv) and rendered (emitConv) apart, so that a choice
// recorded in the IR (#kiln_cuda.conv, ConvKernelAttr.h) or made by the
// template instances the nvcc check compiles renders as the planner's own.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_CUDA_CONV_CONVEMITTER_H
#define KILN_CODEGEN_CUDA_CONV_CONVEMITTER_H

#include "codegen/cuda/KernelEmitter.h"
#include "codegen/cuda/conv/ConvPlan.h"
#include "codegen/cuda/gemm/GemmConfig.h"

#include <optional>

namespace mlir::kiln::codegen {

/// The implicit-GEMM kernel of a conv fusion: its tile (the warps, stages
/// and blocks per SM included; any tile of whole warp tiles, not only the
/// tables'), its split of the reduction, and whether the wgmma tile runs on
/// TMA copies (conv_tma.cuh, with tmaStages stages).
struct ConvKernelChoice {
  GemmChoice choice;
  bool tma = false;
  int tmaStages = 0;
};

/// The kernel the planner chooses for conv fusion `fusion`; std::nullopt
/// for a depthwise convolution, whose direct kernels take no choice.
FailureOr<std::optional<ConvKernelChoice>>
selectConv(FusionOp fusion, const CodegenOptions &options);

/// The kernel of `tile` and `split` for `fusion`, as the planner would run
/// that tile (its blocks per SM and TMA copies): the template instances';
/// std::nullopt for a depthwise convolution, as selectConv.
FailureOr<std::optional<ConvKernelChoice>>
forceConvTile(FusionOp fusion, const CodegenOptions &options,
              const GemmTileConfig &tile, int split);

/// Checks that `kernel` can run `fusion` on options.arch; the errors are
/// the fusion's.
LogicalResult verifyConv(FusionOp fusion, const CodegenOptions &options,
                         const ConvKernelChoice &kernel);

/// The kernels and launches of conv fusion `fusion` run by `kernel` (which
/// is checked first; std::nullopt for a depthwise convolution).
FailureOr<GeneratedFusion> emitConv(FusionOp fusion,
                                    const CodegenOptions &options,
                                    const std::optional<ConvKernelChoice> &kernel);

/// Whether the epilogue of `plan`'s tile takes the trailing batch norm's
/// statistics: the wgmma kernel stages its tiles, and the tiles' columns are
/// the batch norm's channels (the forward pass's channels-last result).
bool convStatsInEpilogue(const ConvPlan &plan, FusionOp fusion);

} // namespace mlir::kiln::codegen

#endif // KILN_CODEGEN_CUDA_CONV_CONVEMITTER_H
