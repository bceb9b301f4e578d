//===- RnnPlan.h - how a recurrent layer is laid onto the GPU ----*- C++
//-*-===//
//
// The configuration of the persistent recurrent kernels (kernels/rnn.cuh)
// for one kiln.rnn or kiln.rnn_backward: batch rows per group, units per
// block, blocks per group and how they meet, splits of the reduction,
// chosen by a small search over the GpuTarget's registers, shared memory,
// SM count and cluster size.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_CUDA_RNN_RNNPLAN_H
#define KILN_CODEGEN_CUDA_RNN_RNNPLAN_H

#include "codegen/cuda/GpuTarget.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir::kiln::codegen {

struct RnnProblem {
  int function = 0; // kiln::rnn::function_kind
  int64_t batch = 0, steps = 0, heads = 0, units = 0;
  int kind = 0; // kiln::rnn::mma_kind
  bool backward = false;
};

struct RnnPlan {
  int batchTile = 16;     // BT
  int unitsPerBlock = 8;  // U
  int blocksPerGroup = 1; // K
  int splits = 1;         // KS
  int sync = 0;           // kiln::rnn::sync_kind
  int64_t groups = 0;     // heads x batch tiles
  int64_t groupsPerLaunch = 0;
  int threads = 0;
  int64_t sharedBytes = 0;
  /// The estimated registers per thread and cycles per step the search
  /// compared.
  int registers = 0;
  double stepCycles = 0;
  /// No configuration fit the registers with a margin; this one may spill.
  bool relaxed = false;

  int64_t launches() const {
    return (groups + groupsPerLaunch - 1) / groupsPerLaunch;
  }
  /// One line for --stats.
  std::string describe() const;
};

/// The fastest feasible plan for `problem` on `target`; none when no
/// configuration fits (a head too large for the whole GPU).
std::optional<RnnPlan> planRnn(const RnnProblem &problem,
                               const GpuTarget &target);

/// How the `k` blocks of a group meet each step on `target`
/// (kiln::rnn::sync_kind): one block alone, a thread-block cluster, or the
/// whole grid of a cooperative launch.
int rnnSyncOf(int64_t k, const GpuTarget &target);

/// The plan of `problem` with batch tiles of `bt` rows, `k` blocks per group
/// and the reduction split `ks` ways, scored as planRnn's search scores it
/// (`relaxed`: past the registers, spilling); none, with the reason in
/// `*why` when given, where the kernels cannot take it.
std::optional<RnnPlan> scoreRnnPlan(const RnnProblem &problem,
                                    const GpuTarget &target, int bt, int64_t k,
                                    int ks, bool relaxed, std::string *why);

} // namespace mlir::kiln::codegen

#endif // KILN_CODEGEN_CUDA_RNN_RNNPLAN_H
