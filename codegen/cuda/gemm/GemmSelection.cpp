//===- GemmSelection.cpp - a gemm fusion's kernel, chosen and checked -----===//
//
// selectGemm runs the cost model (GemmConfig.h) over the tiles the kernels
// that may run the fusion offer; verifyGemm checks a choice made elsewhere
// (an edited #kiln_cuda.gemm) by the rules the cost model's candidates obey.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/EmitterUtils.h"
#include "codegen/cuda/gemm/GemmEmitter.h"
#include "codegen/cuda/gemm/GemmSetup.h"
#include "codegen/dialect/KilnCudaDialect.h"

#include "kiln/gemm_layout.cuh"

#include <limits>

namespace mlir::kiln::codegen {

FailureOr<GemmSetup> setUpGemm(FusionOp fusion, const CodegenOptions &options) {
  std::string why;
  FailureOr<GemmPlan> analyzed = analyzeGemm(fusion, why);
  if (failed(analyzed))
    return (emitFusionError(fusion)
            << "the gemm emitter cannot generate this fusion: ")
           << why;
  if (archNumber(options.arch) < 80)
    return (emitFusionError(fusion)
            << "the gemm kernels need sm_80 or newer, got '")
           << options.arch << "'";
  GemmSetup setup;
  const GemmPlan &plan = setup.plan = std::move(*analyzed);
  GemmKernelConfig &config = setup.config;
  // Problems with outputs of their own (stacked), or summed into one.
  config.ksums = plan.sum ? plan.problems.size() : 1;
  config.groups = plan.sum ? 1 : plan.problems.size();
  config.m = plan.m;
  config.n = plan.n;
  config.k = plan.k;
  config.batch = plan.batch;
  config.outRows = plan.batch * plan.m;
  bool isF32 = plan.elementType.isF32();
  config.element = plan.elementType.isBF16()  ? GemmElement::Bf16
                   : plan.elementType.isF16() ? GemmElement::F16
                                              : GemmElement::F32;
  // Fold the batch into M when every batch shares the rhs and the lhs is
  // dense [batch..., M, K].
  ArrayRef<int64_t> outBatch = ArrayRef<int64_t>(plan.outShape).drop_back(2);
  setup.fold =
      plan.batch > 1 && !plan.transposeLhs &&
      llvm::all_of(plan.rhsBatchStrides, [](int64_t s) { return s == 0; }) &&
      plan.lhsBatchStrides == gemmBroadcastStrides(outBatch, outBatch);
  config.gemmBatch = setup.fold ? 1 : plan.batch;
  config.rows = setup.fold ? plan.batch * plan.m : plan.m;

  // 16-byte copies need the contiguous dimension of an operand to be a
  // multiple of 16 bytes (base pointers are at least 256-byte aligned).
  int vecElements = isF32 ? 4 : 8;
  config.aKMajor = !plan.transposeLhs;
  config.bKMajor = plan.transposeRhs;
  config.aVec = (config.aKMajor ? plan.k : plan.m) % vecElements == 0;
  config.bVec = (config.bKMajor ? plan.k : plan.n) % vecElements == 0;

  // bf16/f16 on sm_90 may also take the wgmma kernels (sm_90a), which copy
  // whole 16-byte chunks only. The TMA kernel runs one GEMM (a batch that
  // shares the rhs folded into the rows) of several problems, each operand
  // through a tensor map; the cp.async kernel one problem of any batch.
  const GpuTarget &target = options.target();
  setup.wgmma = !isF32 && target.hasWgmma && archNumber(options.arch) == 90 &&
                config.aVec && config.bVec;
  int64_t int32Max = std::numeric_limits<int32_t>::max();
  setup.tmaFits = setup.wgmma && config.gemmBatch == 1 &&
                  setup.problems() <= kGemmTmaMaxProblems &&
                  config.rows <= int32Max && plan.n <= int32Max &&
                  plan.k <= int32Max;
  return setup;
}

int64_t gemmKTilesPerSplit(const GemmSetup &setup, const GemmTileConfig &tile,
                           int split) {
  int64_t kTiles =
      setup.config.ksums * ((setup.plan.k + tile.bk - 1) / tile.bk);
  return kTiles ? (kTiles + split - 1) / split : 0;
}

bool gemmStagedEpilogue(const GemmSetup &setup, const GemmKernelConfig &config,
                        const GpuTarget &target) {
  if (!config.tma || config.choice.split != 1 ||
      setup.plan.n % ::kiln::gemm::wgmma_staged_run != 0)
    return false;
  GemmKernelConfig staged = config;
  staged.stagedEpilogue = true;
  return gemmTmaSharedBytes(staged) <= target.sharedBytesPerBlock;
}

std::optional<unsigned> gemmTmaStoreResult(const GemmSetup &setup,
                                           FusionOp fusion, bool staged) {
  const GemmPlan &plan = setup.plan;
  if (!staged || setup.config.groups != 1 ||
      plan.problems.front().results.empty())
    return std::nullopt;
  unsigned result = plan.problems.front().results.front();
  if (gemmElementTypeOf(fusion.getResult(result)) != plan.elementType)
    return std::nullopt;
  return result;
}

bool gemmClusterFits(const GemmSetup &setup, const GemmTileConfig &tile,
                     const GpuTarget &target) {
  const GemmKernelConfig &config = setup.config;
  return target.hasClusters && target.maxClusterBlocks >= 2 &&
         (config.rows + tile.bm - 1) / tile.bm >= 2 &&
         (config.bKMajor || tile.bn / 64 % 2 == 0);
}

void grantTmaOptions(const GemmSetup &setup, FusionOp fusion,
                     const CodegenOptions &options, GemmKernelChoice &kernel) {
  const GemmTileConfig &tile = kernel.choice.config;
  const GpuTarget &target = options.target();
  kernel.tma = setup.tmaFits && options.allowTma &&
               tile.path == GemmPath::Wgmma;
  GemmKernelConfig chosen = setup.config;
  chosen.choice = kernel.choice;
  chosen.tma = kernel.tma;
  kernel.tmaStore =
      options.gemmTmaStore &&
      gemmTmaStoreResult(setup, fusion,
                         gemmStagedEpilogue(setup, chosen, target));
  // Clusters of two blocks on adjacent tile rows share the rhs tile: each
  // copies half of it into both (TMA multicast), so the L2 serves the rhs
  // once per cluster.
  kernel.clusterM = kernel.tma && options.gemmCluster != 1 &&
                            gemmClusterFits(setup, tile, target)
                        ? 2
                        : 1;
}

FailureOr<GemmKernelChoice> selectGemm(FusionOp fusion,
                                       const CodegenOptions &options) {
  FailureOr<GemmSetup> setUp = setUpGemm(fusion, options);
  if (failed(setUp))
    return failure();
  const GemmSetup &setup = *setUp;
  const GemmKernelConfig &config = setup.config;
  const GpuTarget &target = options.target();
  bool isF32 = config.element == GemmElement::F32;
  bool tma = setup.tmaFits && options.allowTma;
  SmallVector<GemmTileConfig> candidates;
  auto consider = [&](ArrayRef<GemmTileConfig> configs) {
    for (const GemmTileConfig &tile : configs) {
      // The ping-pong schedule is the TMA kernel's; --gemm-schedule may
      // keep one schedule only.
      if (tile.pingpong
              ? !tma || options.gemmSchedule == GemmSchedule::Cooperative
              : tma && tile.path == GemmPath::Wgmma &&
                    options.gemmSchedule == GemmSchedule::PingPong)
        continue;
      if (tile.sharedBytes(config.aKMajor, config.bKMajor,
                           config.elementBytes()) <= target.sharedBytesPerBlock)
        candidates.push_back(tile);
    }
  };
  if (isF32)
    consider(options.allowTf32 ? gemmTf32Configs() : gemmSimtConfigs());
  else {
    if (tma || (setup.wgmma && setup.problems() == 1))
      consider(gemmWgmmaConfigs());
    consider(gemmMmaConfigs());
  }
  if (candidates.empty())
    return (emitFusionError(fusion)
            << "no gemm tile fits the shared memory of ")
           << target.arch;
  GemmKernelChoice kernel;
  // An empty product runs no kernel: any tile does.
  if (config.outElements() == 0) {
    kernel.choice = {candidates.front(), 1, 0};
    return kernel;
  }
  // Where ping-pong tiles compete, the cooperative ones pay for the
  // epilogue they stall on.
  bool pingpong = llvm::any_of(
      candidates, [](const GemmTileConfig &tile) { return tile.pingpong; });
  kernel.choice = chooseGemmConfig(
      candidates, target, config.groups * config.gemmBatch, config.rows,
      setup.plan.n, setup.plan.k, config.ksums, config.outElements(),
      kGemmSplits, 0, pingpong ? kGemmCooperativeEpilogueK : 0);
  grantTmaOptions(setup, fusion, options, kernel);
  return kernel;
}

/// Why the kernel of `path` (`tma`: the TMA kernel) cannot run `setup`'s
/// gemm; empty if it can.
static std::string kernelMismatch(const GemmSetup &setup, GemmPath path,
                                  bool tma) {
  bool isF32 = setup.config.element == GemmElement::F32;
  switch (path) {
  case GemmPath::Wgmma:
    if (!setup.wgmma)
      return "the wgmma kernels need sm_90 and bf16/f16 operands in 16-byte "
             "runs";
    if (tma && !setup.tmaFits)
      return "the TMA kernel runs one GEMM of at most " +
             std::to_string(kGemmTmaMaxProblems) +
             " problems of 32-bit sizes";
    if (!tma && setup.problems() != 1)
      return "the cp.async wgmma kernel runs one problem";
    return "";
  case GemmPath::MmaSync:
    return isF32 ? "the mma kernel multiplies bf16/f16 (f32: tf32 or simt)"
                 : "";
  case GemmPath::Tf32:
  case GemmPath::Simt:
    return isF32 ? "" : "the tf32 and simt kernels multiply f32";
  }
  return "";
}

LogicalResult verifyGemm(FusionOp fusion, const CodegenOptions &options,
                         const GemmKernelChoice &kernel) {
  FailureOr<GemmSetup> setup = setUpGemm(fusion, options);
  return failure(failed(setup) ||
                 failed(verifyGemm(*setup, fusion, options, kernel)));
}

LogicalResult verifyGemm(const GemmSetup &setup, FusionOp fusion,
                         const CodegenOptions &options,
                         const GemmKernelChoice &kernel) {
  const GemmKernelConfig &config = setup.config;
  const GemmTileConfig &tile = kernel.choice.config;
  const GpuTarget &target = options.target();
  // At the fusion, which holds the choice.
  auto error = [&]() {
    return fusion.emitOpError() << cuda::kKernelAttrName << ": ";
  };
  std::string mismatch = kernelMismatch(setup, tile.path, kernel.tma);
  if (!mismatch.empty())
    return error() << mismatch;
  if (kernel.tma && tile.path != GemmPath::Wgmma)
    return error() << "only wgmma tiles run on the TMA kernel";
  if (tile.pingpong && !kernel.tma)
    return error() << "the ping-pong schedule is the TMA kernel's";
  uint32_t shared = tile.sharedBytes(config.aKMajor, config.bKMajor,
                                     config.elementBytes());
  if (shared > target.sharedBytesPerBlock)
    return error() << "the tile's " << shared
                   << " bytes of shared memory exceed the "
                   << target.sharedBytesPerBlock << " of " << target.arch;
  // As the cost model weighs them: every split takes perSplit K tiles, the
  // last one what remains, none nothing.
  int split = kernel.choice.split;
  int64_t perSplit = gemmKTilesPerSplit(setup, tile, split);
  int64_t kTiles = gemmKTilesPerSplit(setup, tile, 1);
  if (split < 1 || (perSplit ? (kTiles + perSplit - 1) / perSplit : 1) != split)
    return error() << "split = " << split << " leaves a split of the "
                   << kTiles << " K tiles empty";
  if (kernel.clusterM != 1 &&
      (kernel.clusterM != 2 || !kernel.tma ||
       !gemmClusterFits(setup, tile, target)))
    return error() << "cluster = " << kernel.clusterM
                   << ": the TMA kernel pairs two blocks on adjacent tile "
                      "rows of a target with clusters, where a half of the "
                      "rhs tile is whole swizzle atoms";
  GemmKernelConfig chosen = config;
  chosen.choice = kernel.choice;
  chosen.tma = kernel.tma;
  if (kernel.tmaStore &&
      !gemmTmaStoreResult(setup, fusion,
                          gemmStagedEpilogue(setup, chosen, target)))
    return error() << "tma_store needs the staged epilogue (one split, N a "
                      "multiple of "
                   << ::kiln::gemm::wgmma_staged_run
                   << ") of one problem whose first result has the "
                      "operands' element type";
  return success();
}

} // namespace mlir::kiln::codegen
