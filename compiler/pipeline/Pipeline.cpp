//===- Pipeline.cpp - the kiln pass pipeline ------------------------------===//

#include "compiler/pipeline/Pipeline.h"

#include "compiler/autodiff/Autodiff.h"
#include "compiler/options/OptionText.h"
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
  StringRef layout = options.layout;
  if (layout != "as-written" && layout != "channels-last")
    return emitError("kiln-pipeline: layout must be as-written or "
                     "channels-last, got '" +
                     layout + "'");
  return success();
}

void buildKilnPipeline(OpPassManager &pm, const PipelineOptions &options) {
  if (options.layout == "channels-last") {
    KilnAssignLayoutsOptions layouts;
    layouts.function = options.function;
    pm.addPass(createKilnAssignLayouts(layouts));
  }
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
}

/// Adds the registered kiln-cuda pipeline (kiln-select-kernels, then
/// kiln-emit-cuda) with `codegenOptions` to `pm`.
static LogicalResult
addRegisteredCodegen(OpPassManager &pm, StringRef codegenOptions,
                     function_ref<LogicalResult(const Twine &)> emitError) {
  const PassPipelineInfo *codegen = PassPipelineInfo::lookup("kiln-cuda");
  if (!codegen)
    return emitError("kiln-pipeline: codegen=true needs kiln-cuda (code "
                     "generation), which this program does not register");
  return codegen->addToPipeline(pm, codegenOptions, emitError);
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
        auto [own, codegenOptions] = partitionOptions(
            text, [&](StringRef name) { return options.declares(name); });
        if (failed(options.parseFromString(own)) ||
            failed(verifyPipelineOptions(options, emitError)))
          return failure();
        if (!options.codegen && !codegenOptions.empty())
          return emitError("kiln-pipeline: '" + codegenOptions +
                           "': not options of kiln-pipeline (those of "
                           "code generation need codegen=true)");
        buildKilnPipeline(pm, options);
        if (!options.codegen)
          return success();
        return addRegisteredCodegen(pm, codegenOptions, emitError);
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
    registerKilnPipeline();
    return true;
  }();
  (void)registered;
}

} // namespace mlir::kiln
