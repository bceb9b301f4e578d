//===- AttentionPlanner.h - attention problems to kernel specs -*- C++ -*-===//
//
// Plans the flash-attention kernels of kernels/attention_fwd.cuh and
// kernels/attention_bwd.cuh for one AttentionProblem on a GpuTarget: the
// tile (64, 32 or 16 rows of queries and keys: the largest whose shared
// buffers fit in a block), the configuration struct the templates are
// instantiated with, and one KernelSpec per kernel.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_CUDA_ATTENTIONPLANNER_H
#define KILN_CODEGEN_CUDA_ATTENTIONPLANNER_H

#include "codegen/cuda/AttentionProblem.h"
#include "codegen/cuda/EmitterUtils.h"

namespace mlir::kiln::codegen {

/// The tiles the kernels come in, largest first.
inline constexpr int64_t kAttentionTiles[] = {64, 32, 16};

/// Dynamic shared memory of each kernel with `tile`-row tiles.
int64_t attentionForwardSharedBytes(const AttentionProblem &p, int64_t tile);
int64_t attentionBackwardDqSharedBytes(const AttentionProblem &p, int64_t tile);
int64_t attentionBackwardDkDvSharedBytes(const AttentionProblem &p,
                                         int64_t tile);

/// The largest tile no longer than the (16-padded) sequences whose kernels
/// fit in one block's shared memory on `target`; 16 may exceed the
/// sequences. Fails when not even 16 fits.
FailureOr<int64_t> chooseAttentionTile(const AttentionProblem &p,
                                       const GpuTarget &target);

/// Adds the kernels of `p` with `tile`-row tiles and their launches to
/// `builder`: the forward, or the backward's dq kernel and (when a key or
/// value gradient is taken) its dk/dv kernel, with the row statistics in
/// scratch between them.
void planAttention(const AttentionProblem &p, int64_t tile,
                   FusionBuilder &builder);

} // namespace mlir::kiln::codegen

#endif // KILN_CODEGEN_CUDA_ATTENTIONPLANNER_H
