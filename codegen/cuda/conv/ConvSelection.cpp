//===- ConvSelection.cpp - a conv fusion's kernel, chosen and checked -----===//
//
// selectConv runs the planner (ConvPlan.h: the tile tables and the GEMM cost
// model, then the TMA copies where they fit); verifyConv checks a kernel
// chosen elsewhere (an edited #kiln_cuda.conv, a tile sweep's) by the
// rules the kernels' templates set.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/EmitterUtils.h"
#include "codegen/cuda/conv/ConvEmitter.h"
#include "codegen/cuda/conv/ConvSetup.h"
#include "codegen/dialect/KilnCudaDialect.h"

#include "kiln/batch_norm_layout.cuh"
#include "kiln/conv_layout.cuh"
#include "kiln/gemm_layout.cuh"

namespace mlir::kiln::codegen {

FailureOr<ConvPlan> prepareConv(FusionOp fusion,
                                const CodegenOptions &options) {
  std::string why;
  FailureOr<ConvPlan> plan = analyzeConv(fusion, why);
  if (failed(plan))
    return (emitFusionError(fusion)
            << "the conv emitter cannot generate this fusion: ")
           << why;
  if (archNumber(options.arch) < 80)
    return (emitFusionError(fusion)
            << "the convolution kernels need sm_80 or newer, got '")
           << options.arch << "'";
  if (failed(configureConv(*plan, options.target(), options.allowTf32,
                           archNumber(options.arch) == 90, why)))
    return emitFusionError(fusion) << why;
  return plan;
}

uint32_t convStaticSharedBytes(const ConvPlan &plan, FusionOp fusion) {
  return convStatsInEpilogue(plan, fusion)
             ? ::kiln::bn::tile_stats_shared_bytes(
                   plan.choice.config.threads())
             : 0;
}

/// The kernel of `plan`'s tile (set), with the TMA copies the planner
/// grants it.
static ConvKernelChoice withTma(ConvPlan &plan, FusionOp fusion,
                                const CodegenOptions &options) {
  chooseConvTma(plan, options.target(),
                options.allowTma && archNumber(options.arch) == 90,
                convStaticSharedBytes(plan, fusion));
  return {plan.choice, plan.tma, plan.tmaStages};
}

FailureOr<std::optional<ConvKernelChoice>>
selectConv(FusionOp fusion, const CodegenOptions &options) {
  FailureOr<ConvPlan> plan = prepareConv(fusion, options);
  if (failed(plan))
    return failure();
  if (plan->depthwise)
    return std::optional<ConvKernelChoice>();
  return std::optional<ConvKernelChoice>(withTma(*plan, fusion, options));
}

FailureOr<std::optional<ConvKernelChoice>>
forceConvTile(FusionOp fusion, const CodegenOptions &options,
              const GemmTileConfig &tile, int split) {
  FailureOr<ConvPlan> plan = prepareConv(fusion, options);
  if (failed(plan))
    return failure();
  if (plan->depthwise)
    return std::optional<ConvKernelChoice>();
  setConvChoice(*plan, convTileFor(*plan, tile), split);
  return std::optional<ConvKernelChoice>(withTma(*plan, fusion, options));
}

/// Why `tile` is not a tile of its kernel's template; empty if it is.
static std::string tileMismatch(const GemmTileConfig &tile, bool tma) {
  if (tile.path == GemmPath::Wgmma) {
    bool shape = (tile.bm == 64 || tile.bm == 128) &&
                 (tile.bn == 64 || tile.bn == 128 ||
                  (tile.bn == 256 && tile.bm == 128)) &&
                 tile.bk == ::kiln::gemm::wgmma_block_k;
    if (!shape)
      return "a wgmma tile is 64 or 128 rows by 64, 128 or 256 (128 rows) "
             "columns by " +
             std::to_string(::kiln::gemm::wgmma_block_k);
    if (!tma && tile.stages < 3)
      return "the wgmma kernel takes three or more stages";
    return "";
  }
  if (tile.warpsM < 1 || tile.warpsN < 1 || tile.bm % (16 * tile.warpsM) ||
      tile.bn % (16 * tile.warpsN) || tile.bk < 16 || tile.bk % 16)
    return "an mma tile is whole 16x16 tiles per warp, BK a multiple of 16";
  if (tile.stages < 2)
    return "the mma kernel takes two or more stages";
  return "";
}

/// Why `plan`'s kernel (its choice set to `kernel`'s) cannot run it; empty
/// if it can.
static std::string kernelMismatch(const ConvPlan &plan,
                                  const ConvKernelChoice &kernel,
                                  uint32_t staticBytes,
                                  const GpuTarget &target) {
  const GemmTileConfig &tile = kernel.choice.config;
  bool halves = plan.kind == ConvKind::Bf16 || plan.kind == ConvKind::F16;
  if (tile.path == GemmPath::Wgmma && !plan.wgmmaAllowed)
    return "the wgmma kernels need sm_90 and bf16/f16 operands in 16-byte "
           "runs";
  if (tile.path == GemmPath::MmaSync && !halves)
    return "the mma kernel multiplies bf16/f16 (f32: tf32)";
  if (tile.path == GemmPath::Tf32 && halves)
    return "the tf32 kernel multiplies f32";
  if (std::string why = tileMismatch(tile, kernel.tma); !why.empty())
    return why;
  if (kernel.tma && !convTmaFits(plan))
    return "the TMA kernel runs the channels-last forward pass of bf16/f16 "
           "with channels per group a multiple of 64, within the reach of "
           "its im2col copies";
  if (kernel.tma && (kernel.tmaStages < 2 || kernel.tmaStages > 8))
    return "the TMA kernel takes two to eight stages";
  uint32_t shared =
      kernel.tma
          ? ::kiln::conv::tma_shared_bytes(tile.bm, tile.bn, kernel.tmaStages) +
                staticBytes
          : tile.sharedBytes(plan.aKMajor, plan.bKMajor, plan.elementBytes());
  if (shared > target.sharedBytesPerBlock)
    return "the tile's " + std::to_string(shared) +
           " bytes of shared memory exceed the " +
           std::to_string(target.sharedBytesPerBlock) + " of " +
           target.arch.str();
  // As the cost model weighs splits: each takes ktPerSplit K tiles, the
  // last what remains, none nothing.
  int64_t kTiles = (plan.k + tile.bk - 1) / tile.bk;
  int split = kernel.choice.split;
  int64_t perSplit = kTiles ? (kTiles + split - 1) / split : 0;
  if (split < 1 || (perSplit ? (kTiles + perSplit - 1) / perSplit : 1) != split)
    return "split = " + std::to_string(split) + " leaves a split of the " +
           std::to_string(kTiles) + " K tiles empty";
  return "";
}

LogicalResult verifyConv(ConvPlan plan, FusionOp fusion,
                         const CodegenOptions &options,
                         const ConvKernelChoice &kernel) {
  auto error = [&]() {
    return fusion.emitOpError() << cuda::kKernelAttrName << ": ";
  };
  if (plan.depthwise)
    return error() << "a depthwise convolution runs the direct kernels, "
                      "#kiln_cuda.conv<depthwise>";
  setConvChoice(plan, kernel.choice.config, kernel.choice.split);
  std::string why = kernelMismatch(plan, kernel,
                                   convStaticSharedBytes(plan, fusion),
                                   options.target());
  if (!why.empty())
    return error() << why;
  return success();
}

LogicalResult verifyConv(FusionOp fusion, const CodegenOptions &options,
                         const ConvKernelChoice &kernel) {
  FailureOr<ConvPlan> plan = prepareConv(fusion, options);
  return failure(failed(plan) ||
                 failed(verifyConv(*plan, fusion, options, kernel)));
}

} // namespace mlir::kiln::codegen
