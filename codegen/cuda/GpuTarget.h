//===- GpuTarget.h - what the planners know of the target GPU ----*- C++ -*-===//
//
// Kernel planners choose tiles, stages, warps and grid sizes from the
// resources of the GPU the artifact is compiled for. This is the one place
// those numbers live: chosen by the architecture (kilnc --arch), each is the
// figure of the architecture's reference data-centre part (sm_90: H100/H200
// SXM), which is what a kernel sized for it runs best on; smaller parts of
// the same architecture run the same kernels correctly.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_CUDA_GPUTARGET_H
#define KILN_CODEGEN_CUDA_GPUTARGET_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace mlir::kiln::codegen {

/// The arch-specific target of `arch` ("sm_90" -> "sm_90a"; "sm_90a" stays):
/// what kernels that use its arch-specific instructions (wgmma) are compiled
/// for. Their code runs only on that exact architecture.
std::string archSpecificTarget(llvm::StringRef arch);

/// The number of an architecture name ("sm_90" and "sm_90a" -> 90); 0 when
/// `arch` does not look like sm_<digits>.
unsigned archNumber(llvm::StringRef arch);


struct GpuTarget {
  /// The architecture ("sm_90") and its number (90).
  llvm::StringRef arch;
  unsigned archNumber = 0;
  /// The part whose figures these are, for --stats.
  llvm::StringRef part;
  unsigned smCount = 0;
  /// Shared memory one block may use (after opting in past 48 KiB), and one
  /// SM holds for all its blocks.
  uint32_t sharedBytesPerBlock = 0;
  uint32_t sharedBytesPerSm = 0;
  uint32_t registersPerSm = 65536;
  unsigned maxRegistersPerThread = 255;
  unsigned maxThreadsPerSm = 2048;
  unsigned maxBlocksPerSm = 32;
  uint64_t l2Bytes = 0;
  /// Instruction families: cp.async (sm_80+), bf16/f16 mma.sync m16n8k16
  /// (sm_80+), warpgroup MMA (sm_90a), the bulk tensor copy engine and
  /// thread-block clusters with distributed shared memory (sm_90+).
  bool hasCpAsync = false;
  bool hasBf16Mma = false;
  bool hasWgmma = false;
  bool hasTma = false;
  bool hasClusters = false;
  /// Blocks in one cluster at most (the portable size).
  unsigned maxClusterBlocks = 1;

  /// Blocks that fill the GPU `waves` times over with `blocksPerSm` blocks
  /// resident on each SM.
  int64_t blocksForWaves(int64_t waves, int64_t blocksPerSm = 1) const {
    return waves * blocksPerSm * smCount;
  }

  /// The target of `arch` ("sm_90" or "sm_90a"): the known architecture of
  /// the same number, else the newest known one below it; null when `arch`
  /// is not sm_<number> or older than every known one.
  static const GpuTarget *forArch(llvm::StringRef arch);
  /// The oldest known target.
  static const GpuTarget &oldest();
};

} // namespace mlir::kiln::codegen

#endif // KILN_CODEGEN_CUDA_GPUTARGET_H
