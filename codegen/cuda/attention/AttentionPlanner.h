//===- AttentionPlanner.h - attention problems to kernel specs -*- C++ -*-===//
//
// Plans the flash-attention kernels for one AttentionProblem on a
// GpuTarget: on sm_90a, bf16/f16 problems whose tensors TMA can copy take
// the warp-specialised tensor-core kernels of kernels/attention_wgmma_*.cuh
// (tiles and stages that fit in a block's shared memory); every other one
// the SIMT kernels of kernels/attention_fwd.cuh and attention_bwd.cuh (the
// tile: 64, 32 or 16 rows of queries and keys, the largest whose shared
// buffers fit). Each gets the configuration struct its templates are
// instantiated with and one KernelSpec per kernel.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_CUDA_ATTENTION_ATTENTIONPLANNER_H
#define KILN_CODEGEN_CUDA_ATTENTION_ATTENTIONPLANNER_H

#include "codegen/cuda/EmitterUtils.h"
#include "codegen/cuda/attention/AttentionProblem.h"

#include <optional>

namespace mlir::kiln::codegen {

/// The tiles the kernels come in, largest first.
inline constexpr int64_t kAttentionTiles[] = {64, 32, 16};

/// Dynamic shared memory of each kernel with `tile`-row tiles.
int64_t attentionForwardSharedBytes(const AttentionProblem &p, int64_t tile);
int64_t attentionBackwardDqSharedBytes(const AttentionProblem &p, int64_t tile);
int64_t attentionBackwardDkDvSharedBytes(const AttentionProblem &p,
                                         int64_t tile);

/// The most dynamic shared memory of the SIMT kernels of `p` with
/// `tile`-row tiles.
int64_t attentionSharedBytes(const AttentionProblem &p, int64_t tile);

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

/// One Hopper kernel of kernels/attention_wgmma_*.cuh: the rows of the tile
/// a block keeps (a multiple of 64, one consumer warpgroup per 64), the rows
/// of the tiles it streams, and the pipeline stages.
struct AttentionWgmmaKernel {
  int64_t fixedRows = 0, streamedRows = 0, stages = 0;
  int64_t threads() const { return 128 * (fixedRows / 64 + 1); }
};

/// The Hopper kernels of a problem: the forward, or the backward's dq and
/// dk/dv kernels, the latter as two launches (dk, then dv) where both
/// gradients' accumulators would not fit in registers; or, `fused`, the
/// one-pass backward (kernels/attention_wgmma_bwd_fused.cuh: its `dkdv`
/// kernel computes every gradient, between the row preparation and dQ's
/// conversion). The kernels launch a block per unit of work (an item, or
/// causal, a pair of items: work_order of kernels/attention_wgmma_layout.cuh),
/// or, persistent, at most `maxBlocks` blocks (one per SM) that take the
/// units in turn.
struct AttentionWgmmaPlan {
  AttentionWgmmaKernel forward, dq, dkdv;
  bool separateDkDv = false;
  bool fused = false;
  /// The forward's consumer warpgroups take turns issuing their products
  /// (C::pingpong of kernels/attention_wgmma_fwd.cuh).
  bool pingpong = false;
  /// 0: a block per unit of work (an item, or causal, a pair).
  int64_t maxBlocks = 0;
};

/// Dynamic shared memory of the Hopper kernels: the forward, the backward's
/// dq (`rowStats` false) or dk/dv kernel, the one-pass backward.
int64_t attentionWgmmaForwardBytes(const AttentionProblem &p,
                                   const AttentionWgmmaKernel &k);
int64_t attentionWgmmaBackwardBytes(const AttentionProblem &p,
                                    const AttentionWgmmaKernel &k,
                                    bool rowStats);
int64_t attentionWgmmaFusedBackwardBytes(const AttentionProblem &p,
                                         const AttentionWgmmaKernel &k);

/// Why the Hopper kernels cannot run `p` (`allowed`: sm_90a with TMA); empty
/// if they can.
std::string attentionWgmmaMismatch(const AttentionProblem &p, bool allowed);

/// Whether the one-pass backward can run `p`: every gradient taken, the
/// forward's row log-sum-exp given, and head dims of at most 128, since it
/// keeps dK, dV and a share of dQ (head dim x 64 queries) in registers.
bool attentionFusedBackwardFits(const AttentionProblem &p);

/// Whether the Hopper backward of `p` computes dK and dV in two launches:
/// both gradients' accumulators (a 64-row slice of each) in registers take
/// 32 per 64 head-dim elements, at most four panels together.
bool attentionNeedsSeparateDkDv(const AttentionProblem &p);

/// The Hopper plan of `p` when its kernels can run on tensor cores by TMA:
/// `allowed` (sm_90a with TMA), bf16/f16 storage, head dims of at most 256
/// in whole 16-byte rows, and every tensor's strides whole 16-byte rows.
/// `persistent`: one block per SM of `target` at most. `fused`: the one-pass
/// backward where it applies (every gradient taken, the forward's row
/// log-sum-exp given, head dims of at most 128, its tiles fit).
/// `schedule`: whether the forward's two consumer warpgroups take turns
/// (Auto: where `p` is causal).
std::optional<AttentionWgmmaPlan>
chooseAttentionWgmma(const AttentionProblem &p, const GpuTarget &target,
                     bool allowed, bool persistent = false, bool fused = false,
                     AttentionSchedule schedule = AttentionSchedule::Auto);

/// Adds the Hopper kernels of `p` and their launches to `builder`.
void planAttentionWgmma(const AttentionProblem &p,
                        const AttentionWgmmaPlan &plan, FusionBuilder &builder);

} // namespace mlir::kiln::codegen

#endif // KILN_CODEGEN_CUDA_ATTENTION_ATTENTIONPLANNER_H
