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
//   [kiln-codegen]                              codegen=true (and the
//                                               gradient buckets with
//                                               data-parallel, bucket-bytes,
//                                               first-bucket-bytes)
//
// The options are kilnc's flags, with their names and defaults (train=none
// is kilnc --inference; kilnc --no-merge-launches is reuse-delay=0
// merge-launches=false).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_PIPELINE_PIPELINE_H
#define KILN_COMPILER_PIPELINE_PIPELINE_H

#include "compiler/options/ByteCount.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include <cstdint>
#include <string>

namespace mlir::kiln {
namespace codegen {
struct CompiledModule;
} // namespace codegen

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
      llvm::cl::desc("End with kiln-codegen (kilnc does unless --emit=mlir; "
                     "in kiln-opt it only checks that code generation "
                     "succeeds)"),
      llvm::cl::init(false)};
  Option<std::string> arch{*this, "arch",
                           llvm::cl::desc("Target architecture (codegen)"),
                           llvm::cl::init("sm_90")};
  Option<bool> tf32{
      *this, "tf32",
      llvm::cl::desc("f32 matmuls on TF32 tensor cores (codegen)"),
      llvm::cl::init(false)};
  Option<bool> mergeLaunches{
      *this, "merge-launches",
      llvm::cl::desc("Launches that may run at once run as one kernel "
                     "(codegen)"),
      llvm::cl::init(true)};
  Option<bool> tma{
      *this, "tma",
      llvm::cl::desc("The tensor memory accelerator copies the operands of "
                     "the kernels that can use it (codegen, sm_90)"),
      llvm::cl::init(true)};
  Option<std::string> gemmSchedule{
      *this, "gemm-schedule",
      llvm::cl::desc("The TMA GEMM kernel's consumer schedule: auto, "
                     "cooperative or pingpong (codegen, sm_90)"),
      llvm::cl::init("auto")};
  Option<std::string> gemmCluster{
      *this, "gemm-cluster",
      llvm::cl::desc("Blocks per thread-block cluster of the TMA GEMM "
                     "kernel: 1, 2 or auto (codegen, sm_90)"),
      llvm::cl::init("1")};
  Option<bool> persistentAttention{
      *this, "persistent-attention",
      llvm::cl::desc("The Hopper attention kernels run persistent, one "
                     "block per SM; false: a block per work item, or causal "
                     "pair of items (codegen, sm_90)"),
      llvm::cl::init(true)};
  Option<bool> fusedAttentionBackward{
      *this, "fused-attention-backward",
      llvm::cl::desc("The Hopper attention backward in one pass, dQ added "
                     "by bulk reductions: not deterministic (codegen, "
                     "sm_90)"),
      llvm::cl::init(false)};
  Option<std::string> attentionSchedule{
      *this, "attention-schedule",
      llvm::cl::desc("The Hopper attention forward's consumer schedule: "
                     "auto (pingpong where causal), cooperative or pingpong "
                     "(codegen, sm_90)"),
      llvm::cl::init("auto")};
  Option<bool> gemmTmaStore{
      *this, "gemm-tma-store",
      llvm::cl::desc("The TMA GEMM kernel stores its first result by TMA "
                     "from the staged epilogue (codegen, sm_90)"),
      llvm::cl::init(false)};
  Option<std::string> kernelCache{
      *this, "kernel-cache",
      llvm::cl::desc("Directory of compiled kernels kept between runs "
                     "(codegen; empty: none)"),
      llvm::cl::init("")};
  Option<bool> dataParallel{
      *this, "data-parallel",
      llvm::cl::desc("Data-parallel training: the gradients are averaged "
                     "over the ranks in buckets; train_step runs "
                     "forward_backward's kernels then apply_update's "
                     "(codegen)"),
      llvm::cl::init(false)};
  Option<ByteCount> bucketBytes{
      *this, "bucket-bytes",
      llvm::cl::desc("Bytes of a gradient bucket (data parallel)"),
      llvm::cl::init(25ull << 20)};
  Option<ByteCount> firstBucketBytes{
      *this, "first-bucket-bytes",
      llvm::cl::desc("Bytes of the first gradient bucket (data parallel)"),
      llvm::cl::init(1ull << 20)};
  Option<bool> compile{
      *this, "compile",
      llvm::cl::desc("Compile the kernels (codegen; false: CUDA C++ only)"),
      llvm::cl::init(true)};
  ListOption<std::string> customKernelDirs{
      *this, "custom-kernel-dir",
      llvm::cl::desc("Directories searched for the CUDA files of kiln.custom "
                     "ops after that of the IR file (codegen; kilnc -I)")};
};

/// Checks the options the pipeline's shape depends on (train, precision);
/// the passes check the rest.
LogicalResult
verifyPipelineOptions(const PipelineOptions &options,
                      function_ref<LogicalResult(const Twine &)> emitError);

/// Adds the kiln pipeline to `pm` (anchored on builtin.module). With
/// options.codegen, kiln-codegen ends it and moves the generated module into
/// `*compiled` when that is not null.
void buildKilnPipeline(OpPassManager &pm, const PipelineOptions &options,
                       codegen::CompiledModule *compiled = nullptr);

/// Registers every kiln pass and the pipeline as `kiln-pipeline` (once).
void registerKilnPasses();

} // namespace mlir::kiln

#endif // KILN_COMPILER_PIPELINE_PIPELINE_H
