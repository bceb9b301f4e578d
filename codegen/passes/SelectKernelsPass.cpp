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

  void runOnOperation() override {
    codegen::CodegenOptions options = plannerOptions();
    if (failed(recordTarget(options)))
      return signalPassFailure();
    // Every fusion is checked, so that one run reports every bad choice.
    bool failedAny = false;
    getOperation().walk([&](FusionOp fusion) {
      failedAny |= failed(codegen::selectFusionKernel(fusion, options));
    });
    if (failedAny)
      signalPassFailure();
  }

  /// The code generator's options that the kernel planners read.
  codegen::CodegenOptions plannerOptions() const {
    codegen::CodegenOptions options;
    options.arch = arch;
    options.allowTf32 = tf32;
    options.allowTma = tma;
    options.gemmSchedule = gemmSchedule;
    options.gemmCluster =
        static_cast<int>(static_cast<codegen::GemmCluster>(gemmCluster));
    options.gemmTmaStore = gemmTmaStore;
    options.persistentAttention = persistentAttention;
    options.fusedAttentionBackward = fusedAttentionBackward;
    options.attentionSchedule = attentionSchedule;
    return options;
  }

  /// Sets the module's kiln_cuda.target, or checks that the one it has is
  /// the pass's: its recorded kernels were chosen for that target.
  LogicalResult recordTarget(const codegen::CodegenOptions &options) {
    ModuleOp module = getOperation();
    auto target = cuda::TargetAttr::get(module.getContext(), options.arch,
                                        options.allowTf32);
    Attribute recorded = module->getAttr(cuda::kTargetAttrName);
    if (!recorded) {
      module->setAttr(cuda::kTargetAttrName, target);
      return success();
    }
    if (recorded == target)
      return success();
    return module.emitError()
           << cuda::kTargetAttrName << ": the module's kernels are chosen for "
           << recorded << ", not for the pass's " << target
           << " (arch and tf32)";
  }

  /// The option named `name`, null if the pass has none: every option of a
  /// pass belongs to the pass's own subcommand, read here from a pass that
  /// lives as long as the program.
  static const llvm::cl::Option *option(llvm::StringRef name) {
    static const SelectKernelsPass *pass = new SelectKernelsPass();
    return llvm::cl::getRegisteredOptions(**pass->arch.Subs.begin())
        .lookup(name);
  }
};
} // namespace

std::unique_ptr<Pass>
codegen::createKilnSelectKernelsPass(const KilnSelectKernelsOptions &options) {
  return std::make_unique<SelectKernelsPass>(options);
}

const llvm::cl::Option *codegen::selectKernelsOption(llvm::StringRef name) {
  return SelectKernelsPass::option(name);
}

} // namespace mlir::kiln
