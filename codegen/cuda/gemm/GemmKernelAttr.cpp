//===- GemmKernelAttr.cpp - a gemm kernel as #kiln_cuda.gemm --------------===//

#include "codegen/cuda/gemm/GemmKernelAttr.h"

namespace mlir::kiln::codegen {

static cuda::GemmKind kindOf(const GemmKernelChoice &kernel) {
  switch (kernel.choice.config.path) {
  case GemmPath::Wgmma:
    return kernel.tma ? cuda::GemmKind::Tma : cuda::GemmKind::Wgmma;
  case GemmPath::MmaSync:
    return cuda::GemmKind::Mma;
  case GemmPath::Tf32:
    return cuda::GemmKind::Tf32;
  case GemmPath::Simt:
    return cuda::GemmKind::Simt;
  }
  return cuda::GemmKind::Simt;
}

/// The tile table of `kind`'s kernel.
static ArrayRef<GemmTileConfig> tilesOf(cuda::GemmKind kind) {
  switch (kind) {
  case cuda::GemmKind::Tma:
  case cuda::GemmKind::Wgmma:
    return gemmWgmmaConfigs();
  case cuda::GemmKind::Mma:
    return gemmMmaConfigs();
  case cuda::GemmKind::Tf32:
    return gemmTf32Configs();
  case cuda::GemmKind::Simt:
    return gemmSimtConfigs();
  }
  return {};
}

cuda::GemmAttr gemmKernelAttr(MLIRContext *context,
                              const GemmKernelChoice &kernel) {
  const GemmTileConfig &tile = kernel.choice.config;
  return cuda::GemmAttr::get(context, kindOf(kernel), tile.bm, tile.bn,
                             tile.bk, tile.stages, tile.pingpong,
                             kernel.clusterM, kernel.choice.split,
                             kernel.tmaStore);
}

FailureOr<GemmKernelChoice> gemmKernelFromAttr(cuda::GemmAttr attr,
                                               std::string &why) {
  cuda::GemmKind kind = attr.getKind();
  ArrayRef<GemmTileConfig> tiles = tilesOf(kind);
  const GemmTileConfig *tile = llvm::find_if(tiles, [&](const auto &t) {
    return t.bm == attr.getTileM() && t.bn == attr.getTileN() &&
           t.bk == attr.getTileK() && t.pingpong == attr.getPingpong();
  });
  if (tile == tiles.end() || tile->stages != attr.getStages()) {
    why = "no " + cuda::stringifyGemmKind(kind).str() + " tile " +
          std::to_string(attr.getTileM()) + "x" +
          std::to_string(attr.getTileN()) + "x" +
          std::to_string(attr.getTileK()) + " of " +
          std::to_string(attr.getStages()) + " stages" +
          (attr.getPingpong() ? " (ping-pong)" : "") + "; the kernel's are";
    for (const GemmTileConfig &t : tiles)
      why += " " + std::to_string(t.bm) + "x" + std::to_string(t.bn) + "x" +
             std::to_string(t.bk) + "/" + std::to_string(t.stages) +
             (t.pingpong ? "/pingpong" : "");
    return failure();
  }
  GemmKernelChoice kernel;
  kernel.choice.config = *tile;
  kernel.choice.split = static_cast<int>(attr.getSplit());
  kernel.tma = kind == cuda::GemmKind::Tma;
  kernel.clusterM = static_cast<int>(attr.getCluster());
  kernel.tmaStore = attr.getTmaStore();
  return kernel;
}

FailureOr<GemmKernelChoice> gemmKernelOf(FusionOp fusion,
                                         const CodegenOptions &options) {
  Attribute recorded = fusion->getAttr(cuda::kKernelAttrName);
  if (!recorded)
    return selectGemm(fusion, options);
  auto attr = dyn_cast<cuda::GemmAttr>(recorded);
  if (!attr)
    return fusion.emitOpError()
           << cuda::kKernelAttrName
           << ": a gemm fusion's kernel is a #kiln_cuda.gemm, got "
           << recorded;
  std::string why;
  FailureOr<GemmKernelChoice> kernel = gemmKernelFromAttr(attr, why);
  if (failed(kernel))
    return fusion.emitOpError() << cuda::kKernelAttrName << ": " << why;
  return kernel;
}

} // namespace mlir::kiln::codegen
