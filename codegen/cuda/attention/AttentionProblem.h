//===- AttentionProblem.h - an attention op, as kernels see it -*- C++ -*-===//
//
// What the attention planner needs of a kiln.attention or
// kiln.attention_backward op: sizes, mask, scale, storage type and where each
// [B, H, T, D] tensor lies in the fusion's buffers. AttentionFusion.h finds
// it in a fusion; the template instances build it directly.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_CUDA_ATTENTION_ATTENTIONPROBLEM_H
#define KILN_CODEGEN_CUDA_ATTENTION_ATTENTIONPROBLEM_H

#include "codegen/cuda/KernelEmitter.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::kiln::codegen {

/// One [B, H, T, D] tensor of the op in its buffer: element (b, h, t, e) at
/// (b * batchStride + h * headStride + t * rowStride + e) (the head dim is
/// contiguous), bound to the kernel parameter `arg`.
struct AttentionTensor {
  int64_t heads = 1;
  int64_t batchStride = 0, headStride = 0, rowStride = 0;
  LaunchArg arg;

  /// A dense buffer of the op's own [B, H, T, D] shape.
  static AttentionTensor dense(int64_t heads, int64_t rows, int64_t dim,
                               LaunchArg arg) {
    return {heads, heads * rows * dim, rows * dim, dim, arg};
  }
};

struct AttentionProblem {
  bool backward = false;
  int64_t batchHeads = 0, tq = 0, tk = 0, d = 0, dv = 0;
  double scale = 1.0;
  bool causal = false;
  /// The CUDA storage type of every tensor ("__nv_bfloat16").
  std::string elem = "float";
  /// Element offsets need 64 bits.
  bool wideIndex = false;
  /// Forward: q, k, v. Backward: q, k, v, out, d_out.
  std::vector<AttentionTensor> operands;
  /// Forward: out. Backward: d_query, d_key, d_value. Empty where no fusion
  /// result takes it.
  std::vector<std::optional<AttentionTensor>> results;
  /// The rows' log-sum-exp (f32 [B * H][Tq], natural log): the forward's
  /// result when a fusion result takes it, the backward's operand when it
  /// has one.
  std::optional<LaunchArg> rowLse;
};

} // namespace mlir::kiln::codegen

#endif // KILN_CODEGEN_CUDA_ATTENTION_ATTENTIONPROBLEM_H
