//===- SelectKernelsPass.cpp - each fusion's kernel into the IR -----------===//

#include "codegen/dialect/KilnCudaDialect.h"
#include "codegen/passes/CodegenPass.h"

namespace mlir::kiln {

#define GEN_PASS_DEF_KILNSELECTKERNELS
#include "codegen/passes/Passes.h.inc"

namespace {
struct SelectKernelsPass
    : public impl::KilnSelectKernelsBase<SelectKernelsPass> {
  using KilnSelectKernelsBase::KilnSelectKernelsBase;
  // The planners' options are the base's (protected).
  friend codegen::CodegenOptions
  codegen::kernelChoiceOptions<SelectKernelsPass>(const SelectKernelsPass &);

  void runOnOperation() override {
    codegen::CodegenOptions options = codegen::kernelChoiceOptions(*this);
    // Every fusion is checked, so that one run reports every bad choice.
    bool failedAny = false;
    getOperation().walk([&](FusionOp fusion) {
      failedAny |= failed(codegen::selectFusionKernel(fusion, options));
    });
    if (failedAny)
      signalPassFailure();
  }
};
} // namespace

std::unique_ptr<Pass>
codegen::createKilnSelectKernelsPass(const KilnSelectKernelsOptions &options) {
  return std::make_unique<SelectKernelsPass>(options);
}

KilnSelectKernelsOptions
codegen::selectionOptionsOf(const KilnCodegenOptions &options) {
  KilnSelectKernelsOptions selection;
  selection.arch = options.arch;
  selection.tf32 = options.tf32;
  selection.tma = options.tma;
  selection.gemmSchedule = options.gemmSchedule;
  selection.gemmCluster = options.gemmCluster;
  selection.gemmTmaStore = options.gemmTmaStore;
  selection.persistentAttention = options.persistentAttention;
  selection.fusedAttentionBackward = options.fusedAttentionBackward;
  selection.attentionSchedule = options.attentionSchedule;
  return selection;
}

} // namespace mlir::kiln
