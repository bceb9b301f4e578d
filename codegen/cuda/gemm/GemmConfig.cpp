//===- GemmConfig.cpp - GEMM tile configurations and their cost model -----===//

#include "codegen/cuda/gemm/GemmConfig.h"

#include "kiln/gemm_layout.cuh"

#include <algorithm>
#include <cmath>
#include <limits>

namespace mlir::kiln::codegen {
namespace {

using ::kiln::gemm::wgmma_block_k;

// Two consumer warpgroups of 64 x BN each; four (128x256) or six (128x128)
// stages of 64-deep swizzled tiles fill the shared memory of one block.
// Ping-pong: two consumer warpgroups of a whole 128x128 tile each, two
// tiles in flight per SM (occupancy 2 in the model's terms), one's
// epilogue under the other's products. Measured on the H200 (bf16, bias and
// GELU, 8192 rows): its main loop runs at 0.93 of the 128x256 tile's, and
// the cooperative tiles' epilogue, which stalls the tensor cores, costs
// about as much as kGemmCooperativeEpilogueK more k per tile (GemmConfig.h);
// short products (K = 1024) gain by ping-pong, deep ones (K >= 4096) lose.
const GemmTileConfig kWgmmaConfigs[] = {
    {GemmPath::Wgmma, 128, 256, wgmma_block_k, 0, 0, 4, 0, 0, 1, 1.00},
    {GemmPath::Wgmma, 128, 128, wgmma_block_k, 0, 0, 6, 0, 0, 1, 0.90},
    {GemmPath::Wgmma, 128, 128, wgmma_block_k, 0, 0, 6, 0, 0, 2, 0.93, 1, true},
};
// BK = 32 with four stages: BK = 64 (three stages) makes ptxas spill the
// 128x256 tile's 64x64 warp tiles (255 registers); BK = 32 fits without.
const GemmTileConfig kMmaConfigs[] = {
    {GemmPath::MmaSync, 128, 256, 32, 2, 4, 4, 0, 0, 1, 1.00},
    {GemmPath::MmaSync, 128, 128, 32, 2, 4, 4, 0, 0, 2, 0.90},
    {GemmPath::MmaSync, 64, 64, 32, 2, 2, 4, 0, 0, 4, 0.55},
};
const GemmTileConfig kTf32Configs[] = {
    {GemmPath::Tf32, 128, 128, 32, 2, 4, 3, 0, 0, 1, 1.00},
    {GemmPath::Tf32, 64, 128, 32, 2, 2, 3, 0, 0, 2, 0.80},
    {GemmPath::Tf32, 64, 64, 32, 2, 2, 3, 0, 0, 3, 0.60},
};
const GemmTileConfig kSimtConfigs[] = {
    // ~150 registers (64 accumulators, the staged next tile, the epilogue):
    // capping at 128 for two blocks per SM spills.
    {GemmPath::Simt, 128, 128, 8, 0, 0, 0, 8, 8, 1, 1.00},
    {GemmPath::Simt, 64, 64, 8, 0, 0, 0, 4, 4, 2, 0.60},
    {GemmPath::Simt, 32, 32, 8, 0, 0, 0, 4, 4, 8, 0.35},
    // Four K slices of 8 (256 threads): a small, deep problem (a weight
    // gradient over all rows of a batch) gets 8 warps per tile in one launch
    // instead of a split-K pair of launches. Last, so that ties keep the
    // plain tile.
    {GemmPath::Simt, 32, 32, 32, 0, 0, 0, 4, 4, 2, 0.35, 4},
};

/// Dense peak rates of the paths on an H100/H200 SXM (FLOP/s of the chip),
/// and the SMs they are spread over: the model's per-SM rates. Only their
/// ratios and the split-K overhead's scale matter to the choice.
double pathRate(GemmPath path) {
  switch (path) {
  case GemmPath::Wgmma:
    return 660e12;
  case GemmPath::MmaSync:
    return 450e12;
  case GemmPath::Tf32:
    return 200e12;
  case GemmPath::Simt:
    return 51e12;
  }
  return 51e12;
}
constexpr double kRateSms = 132;

} // namespace

int GemmTileConfig::threads() const {
  if (path == GemmPath::Wgmma)
    return pingpong ? 256 : bm / 64 * 128;
  return tm ? ::kiln::gemm::simt_slice_threads(bm, bn, tm, tn) * slices
            : warpsM * warpsN * 32;
}

uint32_t GemmTileConfig::sharedBytes(bool aKMajor, bool bKMajor,
                                     int elementBytes) const {
  switch (path) {
  case GemmPath::Wgmma:
    return ::kiln::gemm::wgmma_shared_bytes(bm, bn, stages);
  case GemmPath::Simt:
    return ::kiln::gemm::simt_shared_bytes(bm, bn, bk, tm, tn, slices);
  case GemmPath::MmaSync:
  case GemmPath::Tf32:
    break;
  }
  return ::kiln::gemm::mma_shared_bytes(bm, bn, bk, stages, aKMajor, bKMajor,
                                        path == GemmPath::Tf32, elementBytes);
}

llvm::ArrayRef<GemmTileConfig> gemmWgmmaConfigs() { return kWgmmaConfigs; }
llvm::ArrayRef<GemmTileConfig> gemmMmaConfigs() { return kMmaConfigs; }
llvm::ArrayRef<GemmTileConfig> gemmTf32Configs() { return kTf32Configs; }
llvm::ArrayRef<GemmTileConfig> gemmSimtConfigs() { return kSimtConfigs; }

GemmChoice chooseGemmConfig(llvm::ArrayRef<GemmTileConfig> configs,
                            const GpuTarget &target, int64_t gemmBatch,
                            int64_t rows, int64_t n, int64_t k, int64_t ksums,
                            int64_t outElements, llvm::ArrayRef<int> splits,
                            double tileOverheadK,
                            double cooperativeEpilogueK) {
  GemmChoice best;
  double bestTime = std::numeric_limits<double>::infinity();
  const int64_t sms = target.smCount;
  for (const GemmTileConfig &config : configs) {
    // wgmma tiles only for products that fill one: below that the small
    // mma.sync tiles waste less and start sooner.
    if (config.path == GemmPath::Wgmma && (rows < config.bm || n < config.bn))
      continue;
    int64_t tiles = ((rows + config.bm - 1) / config.bm) *
                    ((n + config.bn - 1) / config.bn) * gemmBatch;
    // K tiles of every summed problem (a tile never spans two).
    int64_t kTiles = ksums * ((k + config.bk - 1) / config.bk);
    for (int split : splits) {
      if (split > 1 && kTiles / split < 4)
        break;
      int64_t perSplit = kTiles ? (kTiles + split - 1) / split : 0;
      int64_t splits = perSplit ? (kTiles + perSplit - 1) / perSplit : 1;
      if (splits != split)
        continue;
      int64_t blocks = tiles * splits;
      int64_t perSM = (blocks + sms - 1) / sms;
      int64_t together = std::min<int64_t>(config.occupancy, perSM);
      int64_t rounds = (perSM + together - 1) / together;
      double warps = config.threads() / 32.0;
      double saturation = std::min(1.0, together * warps / 8.0);
      // A ping-pong block hides one tile's epilogue under the other's
      // products; a cooperative wgmma block stalls for it.
      double overheadK =
          config.pingpong
              ? 0
              : (tileOverheadK +
                 (config.path == GemmPath::Wgmma ? cooperativeEpilogueK : 0)) /
                    together;
      double work = 2.0 * config.bm * config.bn *
                    (config.bk * std::max<int64_t>(perSplit, 1) + overheadK);
      double smRate = pathRate(config.path) / kRateSms;
      double time =
          rounds * together * work / (smRate * config.efficiency * saturation);
      if (splits > 1)
        time += 8.0 * splits * outElements / 4.0e12 + 2.0e-6;
      if (time < bestTime * 0.999) {
        bestTime = time;
        best = {config, static_cast<int>(splits), static_cast<int>(perSplit)};
      }
    }
  }
  return best;
}

} // namespace mlir::kiln::codegen
