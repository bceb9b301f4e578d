//===- Pipeline.h - the kiln pass pipeline ----------------------*- C++ -*-===//
//
// The one pass pipeline of the compiler, which kilnc runs and kiln-opt
// registers as --kiln-pipeline:
//
//   [kiln-mixed-precision]                      precision=bf16|f16
//   kiln-make-train-step | kiln-make-forward    train=adamw|adam|sgd | none
//                                               (autodiff runs inside
//                                               kiln-make-train-step)
//   kiln-fuse
//   kiln-plan-memory                            reuse-delay
//   [kiln-select-kernels, kiln-emit-cuda]       codegen=true, and every
//                                               option that is not the
//                                               pipeline's
//
// The options are kilnc's flags, with their names and defaults (train=none
// is kilnc --inference; kilnc --no-merge-launches is reuse-delay=0
// merge-launches=false). Code generation belongs to the code generator
// (codegen/passes), which the compiler does not depend on: the registered
// pipeline finds its pipeline, kiln-cuda, by name and hands it the options
// it does not know.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_PIPELINE_PIPELINE_H
#define KILN_COMPILER_PIPELINE_PIPELINE_H

#include "compiler/options/ByteCount.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include <cstdint>
#include <string>
#include <utility>

namespace mlir::kiln {

struct PipelineOptions : public PassPipelineOptions<PipelineOptions> {
  Option<std::string> function{*this, "function",
                               llvm::cl::desc("Name of the loss function"),
                               llvm::cl::init("loss")};
  Option<std::string> train{
      *this, "train",
      llvm::cl::desc("adamw, adam or sgd: the training entries with that "
                     "optimizer; none: only the forward entry (inference)"),
      llvm::cl::init("adamw")};
  Option<double> momentum{*this, "momentum", llvm::cl::desc("SGD momentum"),
                          llvm::cl::init(0.0)};
  Option<bool> nesterov{*this, "nesterov",
                        llvm::cl::desc("SGD Nesterov momentum"),
                        llvm::cl::init(false)};
  Option<double> beta1{*this, "beta1", llvm::cl::desc("Adam(W) beta1"),
                       llvm::cl::init(0.9)};
  Option<double> beta2{*this, "beta2", llvm::cl::desc("Adam(W) beta2"),
                       llvm::cl::init(0.999)};
  Option<double> epsilon{*this, "epsilon", llvm::cl::desc("Adam(W) epsilon"),
                         llvm::cl::init(1e-8)};
  Option<double> weightDecay{
      *this, "weight-decay",
      llvm::cl::desc("Weight decay (negative: 0.01 for adamw, 0 otherwise)"),
      llvm::cl::init(-1.0)};
  Option<double> clipNorm{
      *this, "clip-norm",
      llvm::cl::desc("Clip the global gradient norm (0: off)"),
      llvm::cl::init(0.0)};
  Option<double> clipValue{*this, "clip-value",
                           llvm::cl::desc("Clip gradient elements (0: off)"),
                           llvm::cl::init(0.0)};
  Option<double> gradScale{*this, "grad-scale",
                           llvm::cl::desc("Scale gradients"),
                           llvm::cl::init(1.0)};
  Option<double> gradNoise{
      *this, "grad-noise",
      llvm::cl::desc("Std of Gaussian gradient noise (0: off)"),
      llvm::cl::init(0.0)};
  Option<uint64_t> gradNoiseSeed{*this, "grad-noise-seed",
                                 llvm::cl::desc("Seed of the gradient noise"),
                                 llvm::cl::init(0)};
  Option<std::string> nonFiniteGrads{
      *this, "nonfinite-grads",
      llvm::cl::desc("apply, or skip: no update when a gradient is NaN or "
                     "infinite (counted in grad_stats.skipped_updates)"),
      llvm::cl::init("apply")};
  Option<std::string> lossScale{
      *this, "loss-scale",
      llvm::cl::desc("none or dynamic (loss scaling for f16; implies "
                     "nonfinite-grads=skip)"),
      llvm::cl::init("none")};
  Option<double> lossScaleInit{
      *this, "loss-scale-init",
      llvm::cl::desc("Initial dynamic loss scale (a power of two)"),
      llvm::cl::init(65536.0)};
  Option<int64_t> lossScaleGrowthInterval{
      *this, "loss-scale-growth-interval",
      llvm::cl::desc("Applied updates in a row before the loss scale doubles"),
      llvm::cl::init(2000)};
  Option<bool> gradStats{*this, "grad-stats",
                         llvm::cl::desc("Emit gradient statistics outputs"),
                         llvm::cl::init(false)};
  Option<std::string> precision{
      *this, "precision",
      llvm::cl::desc("Storage of parameters and activations: f32, bf16 or "
                     "f16 (compute stays f32)"),
      llvm::cl::init("f32")};
  Option<std::string> layout{
      *this, "layout",
      llvm::cl::desc("Activation layout of convolutional graphs: as-written "
                     "or channels-last (NHWC inside, whatever the source "
                     "wrote; kiln-assign-layouts)"),
      llvm::cl::init("as-written")};
  Option<ByteCount> memoryBudget{
      *this, "memory-budget",
      llvm::cl::desc("Device bytes a training step may use (resident buffers "
                     "plus its arena); above it, cheap activations are "
                     "recomputed in the backward (e.g. 437MiB; 0: no "
                     "budget)"),
      llvm::cl::init(0)};
  Option<unsigned> reuseDelay{
      *this, "reuse-delay",
      llvm::cl::desc("Kernels after a tensor's last use before its bytes are "
                     "reused (1 leaves room for launch merging)"),
      llvm::cl::init(1)};
  Option<bool> codegen{
      *this, "codegen",
      llvm::cl::desc("End with code generation, kiln-select-kernels then "
                     "kiln-emit-cuda, found by name in the pass registry "
                     "(kilnc does unless --emit=mlir; in kiln-opt it only "
                     "checks that code generation succeeds). The options "
                     "that are not kiln-pipeline's go to them"),
      llvm::cl::init(false)};

  /// Whether `name` is one of these options (the others of kiln-pipeline's
  /// text are code generation's).
  bool declares(llvm::StringRef name) const { return OptionsMap.count(name); }
};

/// Checks the options the pipeline's shape depends on (train, precision);
/// the passes check the rest.
LogicalResult
verifyPipelineOptions(const PipelineOptions &options,
                      function_ref<LogicalResult(const Twine &)> emitError);

/// Adds the compiler's stages of the kiln pipeline to `pm` (anchored on
/// builtin.module), up to kiln-plan-memory. Code generation is the code
/// generator's pass: its creator adds it (kilnc), or the registered
/// kiln-pipeline adds it by name with codegen=true.
void buildKilnPipeline(OpPassManager &pm, const PipelineOptions &options);

/// Registers every pass of the compiler and the pipeline as `kiln-pipeline`
/// (once). Code generation's passes and their pipeline, kiln-cuda, are
/// registered by the code generator (registerCodegenPasses), in the tools
/// that link it.
void registerKilnPasses();

} // namespace mlir::kiln

#endif // KILN_COMPILER_PIPELINE_PIPELINE_H
