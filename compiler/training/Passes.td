//===- Passes.td - the training-entry passes ---------------*- tablegen -*-===//

#ifndef KILN_TRAINING_PASSES_TD
#define KILN_TRAINING_PASSES_TD

include "mlir/Pass/PassBase.td"

def KilnMakeTrainStep : Pass<"kiln-make-train-step", "mlir::ModuleOp"> {
  let summary = "Builds forward, forward_backward, apply_update and train_step";
  let description = [{
    Replaces the loss function by the training entries: the forward pass, the
    forward and backward pass with gradients as named results, the optimizer
    update with gradients as inputs (after the optional gradient transforms),
    and the whole step in one function. Parameters and optimizer state are
    updated in place (`kiln.updates`); the learning rate (tensor<f32>) and the
    step number (tensor<i32>, from 1) are run-time inputs. `kiln.state`
    arguments (batch norm running statistics) are not differentiated:
    forward_backward and train_step write the updated statistics of their
    kiln.batch_norm back to them, and `forward` evaluates in eval form.
  }];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"loss\"",
           "Name of the loss function">,
    Option<"optimizer", "optimizer", "std::string", /*default=*/"\"adamw\"",
           "sgd, adam or adamw">,
    Option<"momentum", "momentum", "double", "0.0", "SGD momentum">,
    Option<"nesterov", "nesterov", "bool", "false", "SGD with Nesterov momentum">,
    Option<"beta1", "beta1", "double", "0.9", "Adam(W) beta1">,
    Option<"beta2", "beta2", "double", "0.999", "Adam(W) beta2">,
    Option<"epsilon", "epsilon", "double", "1e-8", "Adam(W) epsilon">,
    Option<"weightDecay", "weight-decay", "double", "-1.0",
           "Weight decay (default 0.01 for adamw, 0 otherwise)">,
    Option<"statistics", "statistics", "bool", "false",
           "Emit gradient statistics (global norm, max |g|, non-finite count)">,
    Option<"gradScale", "grad-scale", "double", "1.0", "Scale gradients">,
    Option<"clipValue", "clip-value", "double", "0.0",
           "Clip gradient elements to [-v, v] (0 = off)">,
    Option<"clipNorm", "clip-norm", "double", "0.0",
           "Clip the global gradient norm (0 = off)">,
    Option<"noiseScale", "grad-noise", "double", "0.0",
           "Standard deviation of Gaussian gradient noise (0 = off)">,
    Option<"noiseSeed", "grad-noise-seed", "uint64_t", "0",
           "Seed of the gradient noise">,
    Option<"nonFiniteGrads", "nonfinite-grads", "std::string", "\"apply\"",
           "apply: update with whatever the gradients are; skip: leave "
           "everything unchanged when a gradient is NaN or infinite and "
           "count the step in grad_stats.skipped_updates">,
    Option<"lossScale", "loss-scale", "std::string", "\"none\"",
           "none or dynamic (loss scaling for f16; implies "
           "nonfinite-grads=skip)">,
    Option<"lossScaleInit", "loss-scale-init", "double", "65536.0",
           "Initial dynamic loss scale (a power of two)">,
    Option<"lossScaleGrowthInterval", "loss-scale-growth-interval", "int64_t",
           "2000", "Applied updates in a row before the loss scale doubles">,
  ];
  let dependentDialects = ["::mlir::kiln::KilnDialect"];
}

def KilnMakeForward : Pass<"kiln-make-forward", "mlir::ModuleOp"> {
  let summary = "Makes the loss function the inference entry `forward`";
  let description = [{
    For an inference artifact (kilnc --inference): renames the function to
    `forward` and marks its arguments (`param` where `kiln.param`, `state`
    where `kiln.state`, `input` otherwise) and results (`output`) with their
    `kiln.role`; every kiln.batch_norm with running statistics gets `eval`
    (it normalises with them, as PyTorch's model.eval()). Nothing is
    differentiated and no other entry is built.
  }];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"loss\"",
           "Name of the function">,
  ];
  let dependentDialects = ["::mlir::kiln::KilnDialect"];
}

#endif // KILN_TRAINING_PASSES_TD
