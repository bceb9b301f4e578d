//===- ConvKernelAttr.cpp - a conv kernel as #kiln_cuda.conv --------------===//

#include "codegen/cuda/conv/ConvKernelAttr.h"

namespace mlir::kiln::codegen {

static cuda::ConvKind kindOf(const ConvKernelChoice &kernel) {
  switch (kernel.choice.config.path) {
  case GemmPath::Wgmma:
    return kernel.tma ? cuda::ConvKind::Tma : cuda::ConvKind::Wgmma;
  case GemmPath::MmaSync:
    return cuda::ConvKind::Mma;
  case GemmPath::Tf32:
  case GemmPath::Simt:
    break;
  }
  return cuda::ConvKind::Tf32;
}

static GemmPath pathOf(cuda::ConvKind kind) {
  switch (kind) {
  case cuda::ConvKind::Tma:
  case cuda::ConvKind::Wgmma:
    return GemmPath::Wgmma;
  case cuda::ConvKind::Mma:
    return GemmPath::MmaSync;
  case cuda::ConvKind::Tf32:
  case cuda::ConvKind::Depthwise:
    break;
  }
  return GemmPath::Tf32;
}

cuda::ConvAttr convKernelAttr(MLIRContext *context,
                              const ConvKernelChoice &kernel) {
  const GemmTileConfig &tile = kernel.choice.config;
  return cuda::ConvAttr::get(context, kindOf(kernel), tile.bm, tile.bn,
                             tile.bk, tile.warpsM, tile.warpsN,
                             kernel.tma ? kernel.tmaStages : tile.stages,
                             tile.occupancy, kernel.choice.split);
}

ConvKernelChoice convKernelFromAttr(cuda::ConvAttr attr) {
  ConvKernelChoice kernel;
  GemmTileConfig &tile = kernel.choice.config;
  tile = {pathOf(attr.getKind()),
          static_cast<int>(attr.getTileM()),
          static_cast<int>(attr.getTileN()),
          static_cast<int>(attr.getTileK()),
          static_cast<int>(attr.getWarpsM()),
          static_cast<int>(attr.getWarpsN()),
          static_cast<int>(attr.getStages()),
          /*tm=*/0,
          /*tn=*/0,
          static_cast<int>(attr.getBlocksPerSm()),
          /*efficiency=*/1.0};
  kernel.choice.split = static_cast<int>(attr.getSplit());
  kernel.tma = attr.getKind() == cuda::ConvKind::Tma;
  kernel.tmaStages = kernel.tma ? tile.stages : 0;
  return kernel;
}

FailureOr<std::optional<ConvKernelChoice>>
convKernelOf(FusionOp fusion, const CodegenOptions &options) {
  Attribute recorded = fusion->getAttr(cuda::kKernelAttrName);
  if (!recorded)
    return selectConv(fusion, options);
  auto attr = dyn_cast<cuda::ConvAttr>(recorded);
  if (!attr)
    return fusion.emitOpError()
           << cuda::kKernelAttrName
           << ": a conv fusion's kernel is a #kiln_cuda.conv, got "
           << recorded;
  if (attr.getKind() != cuda::ConvKind::Depthwise)
    return std::optional<ConvKernelChoice>(convKernelFromAttr(attr));
  FailureOr<std::optional<ConvKernelChoice>> planned =
      selectConv(fusion, options);
  if (succeeded(planned) && *planned)
    return fusion.emitOpError()
           << cuda::kKernelAttrName
           << ": only a depthwise convolution runs the direct kernels";
  return planned;
}

} // namespace mlir::kiln::codegen
