//===- GemmConfig.h - GEMM tiles and their cost model -----------*- C++ -*-===//
//
// The tile tables of the GEMM kernels and the small cost model that picks
// one (and a split of K) per problem from the GpuTarget:
//  - wgmma (sm_90a) 128x256x64 (4 stages) and 128x128x64 (6 stages), one
//    block per SM, and 128x128x64 ping-pong (6 stages, two tiles in flight
//    per SM; the TMA kernel only);
//  - mma.sync bf16/f16 128x256x32 (8 warps of 64x64, 4 stages, 1 block/SM),
//    128x128x32 (8 warps of 64x32, 4 stages, 2/SM), 64x64x32 (4 warps,
//    4 stages);
//  - mma.sync tf32 128x128, 64x128, 64x64 (3 stages);
//  - SIMT f32 128x128 (8x8 per thread), 64x64 and 32x32 (4x4), BK = 8, and
//    32x32 in four K slices of 8.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_CUDA_GEMM_GEMMCONFIG_H
#define KILN_CODEGEN_CUDA_GEMM_GEMMCONFIG_H

#include "codegen/cuda/GpuTarget.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>

namespace mlir::kiln::codegen {

/// The kernels a configuration runs on.
enum class GemmPath { Wgmma, MmaSync, Tf32, Simt };

/// One tile configuration: block tile BM x BN x BK; mma.sync/tf32: warps
/// WARPS_M x WARPS_N; wgmma: BM / 64 warpgroups; tensor cores: STAGES shared
/// stages; SIMT: TM x TN outputs per thread. `occupancy` is the blocks per SM
/// the shared memory and registers allow; `efficiency` the fraction of the
/// path's peak a saturated SM reaches with this tile (larger tiles reuse more
/// operands per load).
struct GemmTileConfig {
  GemmPath path;
  int bm, bn, bk;
  int warpsM, warpsN, stages; // tensor cores
  int tm, tn;                 // SIMT
  int occupancy;
  double efficiency;
  int slices = 1; // SIMT: K slices of the block (bk is their total depth)
  /// wgmma with TMA: two consumer warpgroups take whole tiles in turn
  /// (gemm_tma.cuh's ping-pong schedule) instead of sharing each tile.
  bool pingpong = false;

  int threads() const;
  /// Dynamic shared memory of the kernel for operands stored K-major
  /// (`aKMajor`: A [M][K]; `bKMajor`: B [N][K]) of `elementBytes` bytes.
  uint32_t sharedBytes(bool aKMajor, bool bKMajor, int elementBytes) const;
};

llvm::ArrayRef<GemmTileConfig> gemmWgmmaConfigs();
llvm::ArrayRef<GemmTileConfig> gemmMmaConfigs();
llvm::ArrayRef<GemmTileConfig> gemmTf32Configs();
llvm::ArrayRef<GemmTileConfig> gemmSimtConfigs();

struct GemmChoice {
  GemmTileConfig config;
  int split = 1;
  int ktPerSplit = 0;
};

/// Picks the configuration and split-K factor with the lowest modelled
/// time on `target`: waves of blocks at the config's per-SM rate (a lone
/// block with few warps does not saturate an SM), plus for split-K the f32
/// partials' traffic and a second launch. Deterministic (first best wins).
/// The mma.sync, tf32 and SIMT configurations take any shape.
/// `tileOverheadK`: what each tile costs beyond its K loop (filling the
/// pipeline, the epilogue), as the work of that many more k of the tile,
/// hidden by the blocks resident beside it.
/// The splits of K it weighs, in increasing order.
/// `cooperativeEpilogueK`: what the epilogue of a cooperative wgmma tile,
/// which stalls its tensor cores, costs on top (a ping-pong tile hides
/// it); the GEMM emitter weighs kGemmCooperativeEpilogueK where ping-pong
/// tiles compete.
inline constexpr int kGemmSplits[] = {1, 2, 3, 4, 6, 8, 12, 16};
inline constexpr double kGemmCooperativeEpilogueK = 192;
GemmChoice chooseGemmConfig(llvm::ArrayRef<GemmTileConfig> configs,
                            const GpuTarget &target, int64_t gemmBatch,
                            int64_t rows, int64_t n, int64_t k, int64_t ksums,
                            int64_t outElements,
                            llvm::ArrayRef<int> splits = kGemmSplits,
                            double tileOverheadK = 0,
                            double cooperativeEpilogueK = 0);

} // namespace mlir::kiln::codegen

#endif // KILN_CODEGEN_CUDA_GEMM_GEMMCONFIG_H
