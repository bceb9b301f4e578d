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

#include "codegen/cuda/attention/AttentionEmitter.h"

#include "codegen/cuda/EmitterRegistry.h"
#include "codegen/cuda/attention/AttentionFusion.h"
#include "codegen/cuda/attention/AttentionKernelAttr.h"

namespace mlir::kiln::codegen {
namespace {

/// The attention op of `fusion` and its problem; an error at the fusion
/// where it is not one the kernels take.
FailureOr<AttentionFusion> analyze(FusionOp fusion) {
  FailureOr<AttentionFusion> single = analyzeAttentionFusion(fusion);
  if (fusion.getKind() != "attention" || failed(single))
    return (emitFusionError(fusion)
            << "is not a supported single-op attention fusion");
  return single;
}

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
    FailureOr<AttentionFusion> single = analyze(fusion);
    if (failed(single))
      return failure();
    const AttentionProblem &problem = single->problem;
    FailureOr<AttentionKernelChoice> kernel =
        attentionKernelOf(fusion, problem, options);
    if (failed(kernel))
      return failure();
    FusionBuilder builder("// kiln attention fusion of\n" +
                          describeOp(single->op));
    if (problem.batchHeads == 0 || problem.tq == 0)
      return builder.take();
    if (kernel->wgmma)
      planAttentionWgmma(problem, *kernel->wgmma, builder);
    else
      planAttention(problem, kernel->tile, builder);
    return builder.take();
  }

  FailureOr<Attribute>
  selectKernel(FusionOp fusion, const CodegenOptions &options) const override {
    FailureOr<AttentionFusion> single = analyze(fusion);
    if (failed(single))
      return failure();
    FailureOr<AttentionKernelChoice> kernel =
        selectAttention(fusion, single->problem, options);
    if (failed(kernel))
      return failure();
    return Attribute(attentionKernelAttr(fusion.getContext(), *kernel,
                                         single->problem.backward));
  }

  LogicalResult verifyKernel(FusionOp fusion, Attribute,
                             const CodegenOptions &options) const override {
    FailureOr<AttentionFusion> single = analyze(fusion);
    return failure(failed(single) ||
                   failed(attentionKernelOf(fusion, single->problem, options)));
  }
};

} // namespace

std::unique_ptr<KernelEmitter> createAttentionEmitter() {
  return std::make_unique<AttentionEmitter>();
}

static const EmitterRegistration registration(EmitterOrder::Attention,
                                              createAttentionEmitter);

} // namespace mlir::kiln::codegen
