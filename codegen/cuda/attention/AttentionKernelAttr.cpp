//===- AttentionKernelAttr.cpp - attention kernels as an attribute --------===//

#include "codegen/cuda/attention/AttentionKernelAttr.h"

namespace mlir::kiln::codegen {

/// A Hopper kernel as BMxBNxS.
static SmallVector<int64_t, 3> sizesOf(const AttentionWgmmaKernel &k) {
  return {k.fixedRows, k.streamedRows, k.stages};
}

static AttentionWgmmaKernel kernelOf(ArrayRef<int64_t> sizes) {
  if (sizes.empty())
    return {};
  return {sizes[0], sizes[1], sizes[2]};
}

cuda::AttentionAttr attentionKernelAttr(MLIRContext *context,
                                        const AttentionKernelChoice &kernel,
                                        bool backward) {
  if (!kernel.wgmma)
    return cuda::AttentionAttr::get(context, cuda::AttentionKind::Simt,
                                    kernel.tile, {}, {}, {}, false, false,
                                    false, 0);
  const AttentionWgmmaPlan &plan = *kernel.wgmma;
  SmallVector<int64_t, 3> forward, dq, dkdv;
  if (!backward)
    forward = sizesOf(plan.forward);
  else if (plan.fused)
    dkdv = sizesOf(plan.dkdv);
  else
    dq = sizesOf(plan.dq), dkdv = sizesOf(plan.dkdv);
  return cuda::AttentionAttr::get(context, cuda::AttentionKind::Wgmma, 0,
                                  forward, dq, dkdv, !backward && plan.pingpong,
                                  backward && !plan.fused && plan.separateDkDv,
                                  backward && plan.fused, plan.maxBlocks);
}

AttentionKernelChoice attentionKernelFromAttr(cuda::AttentionAttr attr) {
  AttentionKernelChoice kernel;
  if (attr.getKind() == cuda::AttentionKind::Simt) {
    kernel.tile = attr.getTile();
    return kernel;
  }
  AttentionWgmmaPlan plan;
  plan.forward = kernelOf(attr.getForward());
  plan.dq = kernelOf(attr.getDq());
  plan.dkdv = kernelOf(attr.getDkdv());
  plan.pingpong = attr.getPingpong();
  plan.separateDkDv = attr.getSeparateDkdv();
  plan.fused = attr.getFused();
  plan.maxBlocks = attr.getPersistent();
  kernel.wgmma = plan;
  return kernel;
}

FailureOr<AttentionKernelChoice>
attentionKernelOf(FusionOp fusion, const AttentionProblem &p,
                  const CodegenOptions &options) {
  Attribute recorded = fusion->getAttr(cuda::kKernelAttrName);
  if (!recorded)
    return selectAttention(fusion, p, options);
  auto attr = dyn_cast<cuda::AttentionAttr>(recorded);
  if (!attr)
    return fusion.emitOpError()
           << cuda::kKernelAttrName
           << ": an attention fusion's kernel is a #kiln_cuda.attention, got "
           << recorded;
  AttentionKernelChoice kernel = attentionKernelFromAttr(attr);
  if (failed(verifyAttention(fusion, p, options, kernel)))
    return failure();
  return kernel;
}

} // namespace mlir::kiln::codegen
