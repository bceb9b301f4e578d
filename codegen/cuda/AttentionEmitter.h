//===- AttentionEmitter.h - kernels of "attention" fusions ------*- C++ -*-===//
//
// kiln.attention as a flash-attention forward kernel and
// kiln.attention_backward as two deterministic kernels (row statistics and
// dq over query tiles, dk/dv over key tiles).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_CUDA_ATTENTIONEMITTER_H
#define KILN_CODEGEN_CUDA_ATTENTIONEMITTER_H

#include "codegen/cuda/KernelEmitter.h"

namespace mlir::kiln::codegen {

std::unique_ptr<KernelEmitter> createAttentionEmitter();

} // namespace mlir::kiln::codegen

#endif // KILN_CODEGEN_CUDA_ATTENTIONEMITTER_H
