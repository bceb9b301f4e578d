//===- AttentionEmitter.h - kernels of "attention" fusions ------*- C++ -*-===//
//
// kiln.attention as a flash-attention forward kernel and
// kiln.attention_backward as two deterministic kernels (row statistics and
// dq over query tiles, dk/dv over key tiles). The kernels of a fusion are
// chosen (selectAttention: AttentionPlanner.h's planner), checked
// (verifyAttention) and rendered apart, so that a choice recorded in the IR
// (#kiln_cuda.attention, AttentionKernelAttr.h) renders as the planner's
// own.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_CUDA_ATTENTION_ATTENTIONEMITTER_H
#define KILN_CODEGEN_CUDA_ATTENTION_ATTENTIONEMITTER_H

#include "codegen/cuda/KernelEmitter.h"
#include "codegen/cuda/attention/AttentionPlanner.h"

#include <optional>

namespace mlir::kiln::codegen {

/// The kernels of an attention fusion: the Hopper tensor-core kernels of
/// `wgmma`, or without a plan the SIMT kernels with `tile`-row tiles.
struct AttentionKernelChoice {
  std::optional<AttentionWgmmaPlan> wgmma;
  int64_t tile = 0;
};

/// The kernels the planner chooses for `p`, attention fusion `fusion`'s
/// problem; the errors are the fusion's.
FailureOr<AttentionKernelChoice> selectAttention(FusionOp fusion,
                                                 const AttentionProblem &p,
                                                 const CodegenOptions &options);

/// Checks that `kernel` can run `p` on options.arch; the errors are
/// `fusion`'s.
LogicalResult verifyAttention(FusionOp fusion, const AttentionProblem &p,
                              const CodegenOptions &options,
                              const AttentionKernelChoice &kernel);

std::unique_ptr<KernelEmitter> createAttentionEmitter();

} // namespace mlir::kiln::codegen

#endif // KILN_CODEGEN_CUDA_ATTENTION_ATTENTIONEMITTER_H
