//===- CodegenPass.cpp - code generation as a pass ------------------------===//

#include "codegen/passes/CodegenPass.h"

#include "codegen/distributed/GradientBuckets.h"
#include "codegen/distributed/SplitTrainStep.h"

namespace mlir::kiln {

#define GEN_PASS_DEF_KILNCODEGEN
#include "codegen/passes/Passes.h.inc"

namespace {
struct CodegenPass : public impl::KilnCodegenBase<CodegenPass> {
  using KilnCodegenBase::KilnCodegenBase;
  // The planners' options are the base's (protected).
  friend codegen::CodegenOptions
  codegen::kernelChoiceOptions<CodegenPass>(const CodegenPass &);
  CodegenPass(const KilnCodegenOptions &options,
              codegen::CompiledModule *result)
      : KilnCodegenBase(options), result(result) {}

  void runOnOperation() override {
    FailureOr<codegen::CompiledModule> compiled =
        codegen::generateModule(getOperation(), generatorOptions(), compile);
    if (failed(compiled))
      return signalPassFailure();
    if (dataParallel && failed(planDataParallel(*compiled)))
      return signalPassFailure();
    if (result)
      *result = std::move(*compiled);
    markAllAnalysesPreserved();
  }

  /// The code generator's options, from the pass's.
  codegen::CodegenOptions generatorOptions() const {
    codegen::CodegenOptions options = codegen::kernelChoiceOptions(*this);
    options.mergeLaunches = mergeLaunches;
    options.kernelCacheDirectory = kernelCache;
    options.customKernelDirs.assign(customKernelDirs.begin(),
                                    customKernelDirs.end());
    return options;
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

  /// The help of option `name`, read from a pass that lives as long as the
  /// program: every option of a pass belongs to the pass's own subcommand.
  static llvm::StringRef optionHelp(llvm::StringRef name) {
    static const CodegenPass *pass = new CodegenPass();
    llvm::cl::SubCommand &options = **pass->arch.Subs.begin();
    llvm::cl::Option *option =
        llvm::cl::getRegisteredOptions(options).lookup(name);
    assert(option && "not an option of kiln-codegen");
    return option->HelpStr;
  }

  /// Where the generated module goes (may be null).
  codegen::CompiledModule *result = nullptr;
};
} // namespace

std::unique_ptr<Pass>
codegen::createKilnCodegenPass(const KilnCodegenOptions &options,
                               CompiledModule *result) {
  return std::make_unique<CodegenPass>(options, result);
}

llvm::StringRef codegen::codegenOptionHelp(llvm::StringRef name) {
  return CodegenPass::optionHelp(name);
}

} // namespace mlir::kiln
