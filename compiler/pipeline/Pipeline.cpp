//===- Pipeline.cpp - the kiln pass pipeline ------------------------------===//

#include "compiler/pipeline/Pipeline.h"

#include "compiler/autodiff/Autodiff.h"
#include "compiler/pipeline/CodegenPass.h"
#include "compiler/training/ForwardEntry.h"
#include "compiler/training/TrainStep.h"
#include "compiler/transforms/Fusion.h"

#include "mlir/Pass/PassRegistry.h"

namespace mlir::kiln {

LogicalResult
verifyPipelineOptions(const PipelineOptions &options,
                      function_ref<LogicalResult(const Twine &)> emitError) {
  StringRef train = options.train;
  if (train != "adamw" && train != "adam" && train != "sgd" && train != "none")
    return emitError("kiln-pipeline: train must be adamw, adam, sgd or none, "
                     "got '" +
                     train + "'");
  StringRef precision = options.precision;
  if (precision != "f32" && precision != "bf16" && precision != "f16")
    return emitError(
        "kiln-pipeline: precision must be f32, bf16 or f16, got '" + precision +
        "'");
  if (options.dataParallel && train == "none")
    return emitError("kiln-pipeline: data-parallel needs training entries "
                     "(train=adamw, adam or sgd)");
  if (options.dataParallel &&
      (options.bucketBytes == 0 || options.firstBucketBytes == 0))
    return emitError("kiln-pipeline: bucket-bytes and first-bucket-bytes "
                     "must be positive");
  return success();
}

void buildKilnPipeline(OpPassManager &pm, const PipelineOptions &options,
                       codegen::CompiledModule *compiled) {
  if (options.precision != "f32") {
    KilnMixedPrecisionOptions mixed;
    mixed.function = options.function;
    mixed.precision = options.precision;
    pm.addPass(createKilnMixedPrecision(mixed));
  }

  if (options.train == "none") {
    KilnMakeForwardOptions forward;
    forward.function = options.function;
    pm.addPass(createKilnMakeForward(forward));
  } else {
    KilnMakeTrainStepOptions step;
    step.function = options.function;
    step.optimizer = options.train;
    step.momentum = options.momentum;
    step.nesterov = options.nesterov;
    step.beta1 = options.beta1;
    step.beta2 = options.beta2;
    step.epsilon = options.epsilon;
    step.weightDecay = options.weightDecay;
    step.statistics = options.gradStats;
    step.gradScale = options.gradScale;
    step.clipValue = options.clipValue;
    step.clipNorm = options.clipNorm;
    step.noiseScale = options.gradNoise;
    step.noiseSeed = options.gradNoiseSeed;
    step.nonFiniteGrads = options.nonFiniteGrads;
    step.lossScale = options.lossScale;
    step.lossScaleInit = options.lossScaleInit;
    step.lossScaleGrowthInterval = options.lossScaleGrowthInterval;
    pm.addPass(createKilnMakeTrainStep(step));
  }

  // Before recompute, which counts the resident bytes.
  pm.addPass(createKilnResidentConstants());
  if (options.memoryBudget > 0) {
    KilnRecomputeOptions recompute;
    recompute.memoryBudget = options.memoryBudget;
    recompute.reuseDelay = options.reuseDelay;
    pm.addPass(createKilnRecompute(recompute));
  }
  pm.addPass(createKilnFuse());
  KilnPlanMemoryOptions memory;
  memory.reuseDelay = options.reuseDelay;
  pm.addPass(createKilnPlanMemory(memory));

  if (!options.codegen)
    return;
  KilnCodegenOptions codegen;
  codegen.arch = options.arch;
  codegen.tf32 = options.tf32;
  codegen.mergeLaunches = options.mergeLaunches;
  codegen.tma = options.tma;
  codegen.gemmSchedule = options.gemmSchedule;
  codegen.gemmCluster = options.gemmCluster;
  codegen.persistentAttention = options.persistentAttention;
  codegen.fusedAttentionBackward = options.fusedAttentionBackward;
  codegen.attentionSchedule = options.attentionSchedule;
  codegen.gemmTmaStore = options.gemmTmaStore;
  codegen.kernelCache = options.kernelCache;
  codegen.compile = options.compile;
  // A view of the options' list, which the pass copies when it is created.
  if (!options.customKernelDirs.empty())
    codegen.customKernelDirs = llvm::ArrayRef<std::string>(
        &options.customKernelDirs[0], options.customKernelDirs.size());
  codegen.dataParallel = options.dataParallel;
  codegen.bucketBytes = options.bucketBytes;
  codegen.firstBucketBytes = options.firstBucketBytes;
  pm.addPass(createKilnCodegenPass(codegen, compiled));
}

static void registerKilnPipeline() {
  registerPassPipeline(
      "kiln-pipeline",
      "The whole kiln compiler as kilnc runs it: mixed precision, the "
      "training (or inference) entries, fusion, memory planning and, with "
      "codegen=true, code generation",
      [](OpPassManager &pm, StringRef text,
         function_ref<LogicalResult(const Twine &)> emitError) {
        PipelineOptions options;
        if (failed(options.parseFromString(text)) ||
            failed(verifyPipelineOptions(options, emitError)))
          return failure();
        buildKilnPipeline(pm, options);
        return success();
      },
      [](function_ref<void(const mlir::detail::PassOptions &)> handler) {
        handler(PipelineOptions());
      });
}

void registerKilnPasses() {
  static bool registered = [] {
    registerAutodiffPasses();
    registerTrainingPasses();
    registerTransformsPasses();
    registerPipelinePasses();
    registerKilnPipeline();
    return true;
  }();
  (void)registered;
}

} // namespace mlir::kiln
