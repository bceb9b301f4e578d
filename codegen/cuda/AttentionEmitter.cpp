//===- AttentionEmitter.cpp - kernels of "attention" fusions --------------===//
//
// kiln.attention is a flash-attention forward, kiln.attention_backward two
// deterministic kernels (row statistics and dq over query tiles, dk/dv over
// key tiles): on sm_90a with TMA, bf16/f16 problems whose tensors TMA can
// copy run on tensor cores (kernels/attention_wgmma_*.cuh), every other one
// on CUDA cores (kernels/attention_fwd.cuh, attention_bwd.cuh). The fusion
// is taken apart by AttentionFusion.h and planned by AttentionPlanner.h;
// head dims too large for 16-row SIMT tiles are rejected.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/AttentionEmitter.h"

#include "codegen/cuda/AttentionFusion.h"
#include "codegen/cuda/AttentionPlanner.h"

namespace mlir::kiln::codegen {
namespace {

class AttentionEmitter : public KernelEmitter {
public:
  /// Attention fusions whose kernels fit on the default architecture; emit
  /// checks the requested one.
  bool matches(FusionOp fusion) const override {
    if (fusion.getKind() != "attention")
      return false;
    FailureOr<AttentionFusion> single = analyzeAttentionFusion(fusion);
    return succeeded(single) &&
           succeeded(
               chooseAttentionTile(single->problem, CodegenOptions().target()));
  }

  FailureOr<GeneratedFusion>
  emit(FusionOp fusion, const CodegenOptions &options) const override {
    FailureOr<AttentionFusion> single = analyzeAttentionFusion(fusion);
    if (fusion.getKind() != "attention" || failed(single))
      return (emitFusionError(fusion)
              << "is not a supported single-op attention fusion");
    const AttentionProblem &problem = single->problem;
    FailureOr<int64_t> tile = chooseAttentionTile(problem, options.target());
    if (failed(tile))
      return (emitFusionError(fusion) << "attention head dims ")
             << problem.d << "/" << problem.dv
             << " do not fit in shared memory on " << options.arch;
    FusionBuilder builder("// kiln attention fusion of\n" +
                          describeOp(single->op));
    if (problem.batchHeads == 0 || problem.tq == 0)
      return builder.take();
    if (std::optional<AttentionWgmmaPlan> wgmma = chooseAttentionWgmma(
            problem, options.target(),
            options.allowTma && archNumber(options.arch) == 90,
            options.persistentAttention, options.fusedAttentionBackward,
            options.attentionSchedule))
      planAttentionWgmma(problem, *wgmma, builder);
    else
      planAttention(problem, *tile, builder);
    return builder.take();
  }
};

} // namespace

std::unique_ptr<KernelEmitter> createAttentionEmitter() {
  return std::make_unique<AttentionEmitter>();
}

} // namespace mlir::kiln::codegen
