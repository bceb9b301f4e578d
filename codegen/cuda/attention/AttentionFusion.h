//===- AttentionFusion.h - attention fusions taken apart -------*- C++ -*-===//
//
// An "attention" fusion holds one kiln.attention or kiln.attention_backward
// and, besides it, only transposes that keep the head dim innermost: of a
// block argument into an operand, or of a result into a yielded value (q, k,
// v kept as [B, T, H, D] rows of a projection). The kernels then read and
// write those buffers directly, through strides of their own.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_CUDA_ATTENTION_ATTENTIONFUSION_H
#define KILN_CODEGEN_CUDA_ATTENTION_ATTENTIONFUSION_H

#include "codegen/cuda/attention/AttentionProblem.h"

namespace mlir::kiln::codegen {

struct AttentionFusion {
  Operation *op = nullptr;
  AttentionProblem problem;
};

/// The attention op of `fusion` and its problem; fails when the body holds
/// anything else or yields a value in a way the kernels cannot write.
FailureOr<AttentionFusion> analyzeAttentionFusion(FusionOp fusion);

} // namespace mlir::kiln::codegen

#endif // KILN_CODEGEN_CUDA_ATTENTION_ATTENTIONFUSION_H
