//===- EmitCudaPass.cpp - the recorded kernels as CUDA --------------------===//

#include "codegen/passes/CodegenPass.h"

#include "codegen/dialect/KilnCudaDialect.h"
#include "codegen/distributed/GradientBuckets.h"
#include "codegen/distributed/SplitTrainStep.h"

namespace mlir::kiln {

#define GEN_PASS_DEF_KILNEMITCUDA
#include "codegen/passes/Passes.h.inc"

namespace {
struct EmitCudaPass : public impl::KilnEmitCudaBase<EmitCudaPass> {
  using KilnEmitCudaBase::KilnEmitCudaBase;
  EmitCudaPass(const KilnEmitCudaOptions &options,
               codegen::CompiledModule *result)
      : KilnEmitCudaBase(options), result(result) {}

  void runOnOperation() override {
    FailureOr<codegen::CodegenOptions> options = generatorOptions();
    if (failed(options) || failed(checkKernelsRecorded()))
      return signalPassFailure();
    FailureOr<codegen::CompiledModule> compiled =
        codegen::generateModule(getOperation(), *options, compile);
    if (failed(compiled))
      return signalPassFailure();
    if (dataParallel && failed(planDataParallel(*compiled)))
      return signalPassFailure();
    if (result)
      *result = std::move(*compiled);
    markAllAnalysesPreserved();
  }

  /// The code generator's options: the module's recorded target and the
  /// pass's own.
  FailureOr<codegen::CodegenOptions> generatorOptions() {
    auto target = getOperation()->getAttrOfType<cuda::TargetAttr>(
        cuda::kTargetAttrName);
    if (!target)
      return getOperation().emitError()
             << "kiln-emit-cuda: the module has no " << cuda::kTargetAttrName
             << " (a #kiln_cuda.target): run --kiln-select-kernels first";
    codegen::CodegenOptions options;
    options.arch = target.getArch().str();
    options.allowTf32 = target.getTf32();
    options.mergeLaunches = mergeLaunches;
    options.kernelCacheDirectory = kernelCache;
    options.customKernelDirs.assign(customKernelDirs.begin(),
                                    customKernelDirs.end());
    return options;
  }

  /// Every fusion records its kernel: this pass renders, it chooses none.
  LogicalResult checkKernelsRecorded() {
    bool missing = false;
    getOperation().walk([&](FusionOp fusion) {
      if (fusion->hasAttr(cuda::kKernelAttrName))
        return;
      fusion.emitOpError()
          << "has no " << cuda::kKernelAttrName
          << ": kiln-emit-cuda renders the recorded kernels; run "
             "--kiln-select-kernels first";
      missing = true;
    });
    return failure(missing);
  }

  /// Splits train_step and plans its gradient buckets (data parallel).
  LogicalResult planDataParallel(codegen::CompiledModule &compiled) {
    codegen::BucketOptions buckets;
    buckets.bucketBytes = bucketBytes;
    buckets.firstBucketBytes = firstBucketBytes;
    if (failed(codegen::splitTrainStep(compiled, getOperation())))
      return failure();
    return codegen::planGradientBuckets(compiled, getOperation(), buckets);
  }

  /// The option named `name`, null if the pass has none (as
  /// SelectKernelsPass::option).
  static const llvm::cl::Option *option(llvm::StringRef name) {
    static const EmitCudaPass *pass = new EmitCudaPass();
    return llvm::cl::getRegisteredOptions(**pass->mergeLaunches.Subs.begin())
        .lookup(name);
  }

  /// Where the generated module goes (may be null).
  codegen::CompiledModule *result = nullptr;
};
} // namespace

const llvm::cl::Option *codegen::emitCudaOption(llvm::StringRef name) {
  return EmitCudaPass::option(name);
}

std::unique_ptr<Pass>
codegen::createKilnEmitCudaPass(const KilnEmitCudaOptions &options,
                                CompiledModule *result) {
  return std::make_unique<EmitCudaPass>(options, result);
}

} // namespace mlir::kiln
