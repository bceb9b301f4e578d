//===- GemmSetup.h - what choosing and rendering a gemm share ---*- C++ -*-===//
//
// A gemm fusion's kernel is chosen (selectGemm), checked (verifyGemm) and
// rendered (emitGemm) apart (GemmEmitter.h); the three start from the same
// setup, the fusion taken apart and the kernel configuration it implies,
// and decide the TMA kernel's options by the same rules.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_CUDA_GEMM_GEMMSETUP_H
#define KILN_CODEGEN_CUDA_GEMM_GEMMSETUP_H

#include "codegen/cuda/KernelEmitter.h"
#include "codegen/cuda/gemm/GemmEmitter.h"
#include "codegen/cuda/gemm/GemmKernelSpec.h"
#include "codegen/cuda/gemm/GemmPlan.h"

#include <optional>

namespace mlir::kiln::codegen {

struct GemmSetup {
  GemmPlan plan;
  /// Everything but the choice and what follows from it.
  GemmKernelConfig config;
  /// The batch is folded into the rows (every batch shares the rhs).
  bool fold = false;
  /// The wgmma kernels may run it (sm_90, both operands in 16-byte runs);
  /// the TMA kernel too (one GEMM of few enough problems, 32-bit sizes),
  /// --no-tma aside.
  bool wgmma = false, tmaFits = false;

  int64_t problems() const { return config.groups * config.ksums; }
};

/// Takes gemm fusion `fusion` apart for options.arch; the errors are the
/// fusion's.
FailureOr<GemmSetup> setUpGemm(FusionOp fusion, const CodegenOptions &options);

/// The K tiles of each of `split` splits of `tile` (0 where K is empty).
int64_t gemmKTilesPerSplit(const GemmSetup &setup, const GemmTileConfig &tile,
                           int split);

/// The TMA kernel (config.tma and config.choice set) stages its epilogue
/// through the shared memory its stages leave: one split, whole runs of
/// columns, and the staging fits.
bool gemmStagedEpilogue(const GemmSetup &setup, const GemmKernelConfig &config,
                        const GpuTarget &target);

/// The result the staged epilogue (`staged`) may store by TMA: the first of
/// a lone problem, of the operands' element type.
std::optional<unsigned> gemmTmaStoreResult(const GemmSetup &setup,
                                           FusionOp fusion, bool staged);

/// Clusters of two blocks on adjacent tile rows may share `tile`'s rhs: the
/// target has clusters, there are two tile rows to pair and a half of the
/// rhs tile is whole swizzle atoms.
bool gemmClusterFits(const GemmSetup &setup, const GemmTileConfig &tile,
                     const GpuTarget &target);

/// Sets `kernel`'s TMA kernel, its TMA store and its clusters from its tile
/// (chosen or forced) as `options` allow them where `setup` can take them.
void grantTmaOptions(const GemmSetup &setup, FusionOp fusion,
                     const CodegenOptions &options, GemmKernelChoice &kernel);

/// verifyGemm (GemmEmitter.h) of a fusion already set up.
LogicalResult verifyGemm(const GemmSetup &setup, FusionOp fusion,
                         const CodegenOptions &options,
                         const GemmKernelChoice &kernel);

} // namespace mlir::kiln::codegen

#endif // KILN_CODEGEN_CUDA_GEMM_GEMMSETUP_H
