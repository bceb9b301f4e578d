//===- TrainStep.h - the training-step builder -------------------*- C++
//-*-===//
//
// Turns a loss function into the four entries of a training artifact:
//
//   forward(args...)                    -> (loss, ...)      the loss function
//   forward_backward(args...)           -> (loss, grads..., model state'...)
//   apply_update(params..., state..., grads..., lr, step)
//                                       -> (params'..., state'..., [stats])
//   train_step(params..., state..., model state..., inputs..., lr, step)
//                                       -> (loss, params'..., state'...,
//                                           model state'..., [stats])
//
// `args` are the loss function's arguments in their order (parameters, model
// state and inputs, told apart by kiln.param and kiln.state). Gradients are
// named outputs of forward_backward and inputs of apply_update, so host code
// can edit them in between; train_step is both in one, with identical
// results when the edit is the identity. lr is a tensor<f32> and step a
// tensor<i32> counting updates from 1, both run-time inputs so schedules
// live on the host. Results that replace an argument carry
// `kiln.updates = <argument index>` so the runtime updates those buffers in
// place.
//
// Model state (kiln.state, role "state") is non-trainable: batch norm
// running statistics. Each state argument is a running statistic of one
// kiln.batch_norm and nothing else; it gets no gradient, forward_backward
// and train_step return that op's updated statistic in its place (the
// forward pass of training updates it, as in PyTorch), and `forward`
// evaluates every batch norm with running statistics in eval form
// (normalising with them, updating nothing).
//
// Optimizer state per parameter p, in this order: `master.p` (an f32 copy,
// only when p is bf16 or f16: the update runs on it and p is its rounded
// copy), then `momentum.p` (SGD with momentum) or `adam_m.p`, `adam_v.p`
// (Adam, AdamW). State starts at zero; a master weight starts as the f32
// value of p's initialiser; model state starts from its kiln.state
// initialiser.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_TRAINING_TRAINSTEP_H
#define KILN_COMPILER_TRAINING_TRAINSTEP_H

#include "compiler/training/ForwardEntry.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <cstdint>
#include <string>

namespace mlir::kiln {

enum class OptimizerKind { SGD, Adam, AdamW };

struct OptimizerOptions {
  OptimizerKind kind = OptimizerKind::AdamW;
  /// SGD: momentum factor (0 disables the buffer) and Nesterov's variant.
  double momentum = 0.0;
  bool nesterov = false;
  /// Adam, AdamW.
  double beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8;
  /// SGD and Adam: L2 penalty added to the gradient; AdamW: decoupled decay
  /// p -= lr * weightDecay * p.
  double weightDecay = 0.0;
};

/// Optional edits of the gradients inside apply_update, applied in this
/// order: statistics (of the incoming gradients), scale, clip by value, clip
/// by global norm, Gaussian noise.
struct GradientTransformOptions {
  /// Emit statistics results: global L2 norm, max |g|, count of NaN/Inf.
  bool statistics = false;
  /// Multiply every gradient by this factor (1 = off).
  double scale = 1.0;
  /// Clamp every element to [-clipValue, clipValue] (0 = off).
  double clipValue = 0.0;
  /// Rescale all gradients together so that their global L2 norm is at most
  /// this (0 = off): g *= min(1, clipNorm / (norm + 1e-6)).
  double clipNorm = 0.0;
  /// Add noiseScale * N(0, 1) to every element (0 = off); parameter i draws
  /// from Philox stream i of noiseSeed at offset = step.
  double noiseScale = 0.0;
  uint64_t noiseSeed = 0;
  /// Skip the whole update when any gradient element is NaN or infinite:
  /// parameters, master weights and optimizer state keep their values, and
  /// the optimizer-state scalar `grad_stats.skipped_updates` counts the
  /// skipped steps (as torch.amp's GradScaler skips optimizer.step()). Adam's
  /// bias correction counts the applied updates only (step - skipped).
  bool skipNonFinite = false;
  /// Dynamic loss scaling (implies skipNonFinite), for f16 training: the
  /// backward starts from the loss scale S instead of 1 and apply_update
  /// divides the gradients by S before anything else. A skipped update
  /// halves S; `lossScaleGrowthInterval` applied updates in a row double it.
  /// S = 2^(lossScaleInitExponent + e), e the optimizer-state scalar
  /// `loss_scale.exponent` (starting at 0, so S starts at 2^16 = 65536 as in
  /// torch.amp); `loss_scale.good_steps` counts the updates since the last
  /// change. forward_backward takes `loss_scale.exponent` as a resident
  /// argument, so the gradients it returns are scaled by S.
  bool dynamicLossScale = false;
  int lossScaleInitExponent = 16;
  int64_t lossScaleGrowthInterval = 2000;
};

struct TrainStepOptions {
  /// The loss function (first result a rank-0 float loss).
  std::string function = "loss";
  OptimizerOptions optimizer;
  GradientTransformOptions transforms;
};

/// Replaces the loss function in `module` by the four entries above.
LogicalResult buildTrainingEntries(ModuleOp module,
                                   const TrainStepOptions &options);

#define GEN_PASS_DECL_KILNMAKETRAINSTEP
#include "compiler/training/Passes.h.inc"

// Registers kiln-make-forward (ForwardEntry.h) too.
#define GEN_PASS_REGISTRATION
#include "compiler/training/Passes.h.inc"

} // namespace mlir::kiln

#endif // KILN_COMPILER_TRAINING_TRAINSTEP_H
