//===- CodegenPass.cpp - code generation as a pass ------------------------===//

#include "compiler/pipeline/CodegenPass.h"

#include "codegen/distributed/GradientBuckets.h"
#include "codegen/distributed/SplitTrainStep.h"

namespace mlir::kiln {

#define GEN_PASS_DEF_KILNCODEGEN
#include "compiler/pipeline/Passes.h.inc"

namespace {
struct CodegenPass : public impl::KilnCodegenBase<CodegenPass> {
  using KilnCodegenBase::KilnCodegenBase;
  CodegenPass(const KilnCodegenOptions &options,
              codegen::CompiledModule *result)
      : KilnCodegenBase(options), result(result) {}

  void runOnOperation() override {
    codegen::CodegenOptions options;
    options.arch = arch;
    options.allowTf32 = tf32;
    options.mergeLaunches = mergeLaunches;
    options.allowTma = tma;
    if (failed(parseSchedule("gemm-schedule", gemmSchedule,
                             options.gemmSchedule)) ||
        failed(parseSchedule("attention-schedule", attentionSchedule,
                             options.attentionSchedule)))
      return signalPassFailure();
    if (gemmCluster == "auto" || gemmCluster == "1" || gemmCluster == "2")
      options.gemmCluster = gemmCluster == "auto" ? 0
                            : gemmCluster == "1"  ? 1
                                                  : 2;
    else {
      getOperation().emitError() << "unknown gemm-cluster '" << gemmCluster
                                 << "' (expected auto, 1 or 2)";
      return signalPassFailure();
    }
    options.persistentAttention = persistentAttention;
    options.fusedAttentionBackward = fusedAttentionBackward;
    options.gemmTmaStore = gemmTmaStore;
    options.kernelCacheDirectory = kernelCache;
    options.customKernelDirs.assign(customKernelDirs.begin(),
                                    customKernelDirs.end());
    FailureOr<codegen::CompiledModule> compiled =
        codegen::generateModule(getOperation(), options, compile);
    if (failed(compiled))
      return signalPassFailure();
    if (dataParallel) {
      codegen::BucketOptions buckets;
      buckets.bucketBytes = bucketBytes;
      buckets.firstBucketBytes = firstBucketBytes;
      if (failed(codegen::splitTrainStep(*compiled, getOperation())) ||
          failed(
              codegen::planGradientBuckets(*compiled, getOperation(), buckets)))
        return signalPassFailure();
    }
    if (result)
      *result = std::move(*compiled);
    markAllAnalysesPreserved();
  }

  /// Sets `schedule` (codegen::GemmSchedule or AttentionSchedule) from the
  /// value of option `name`: auto, cooperative or pingpong.
  template <typename Schedule>
  LogicalResult parseSchedule(llvm::StringRef name, llvm::StringRef value,
                              Schedule &schedule) {
    if (value == "auto")
      schedule = Schedule::Auto;
    else if (value == "cooperative")
      schedule = Schedule::Cooperative;
    else if (value == "pingpong")
      schedule = Schedule::PingPong;
    else
      return getOperation().emitError()
             << "unknown " << name << " '" << value
             << "' (expected auto, cooperative or pingpong)";
    return success();
  }

  /// Where the generated module goes (may be null).
  codegen::CompiledModule *result = nullptr;
};
} // namespace

std::unique_ptr<Pass> createKilnCodegenPass(const KilnCodegenOptions &options,
                                            codegen::CompiledModule *result) {
  return std::make_unique<CodegenPass>(options, result);
}

} // namespace mlir::kiln
