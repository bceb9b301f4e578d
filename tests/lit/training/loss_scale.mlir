// Dynamic loss scaling and the non-finite gradient policy.
// RUN: kiln-opt %samples/mlp.mlir '--kiln-make-train-step=loss-scale=dynamic' | FileCheck %s
// RUN: kiln-opt %samples/mlp.mlir '--kiln-make-train-step=nonfinite-grads=skip' | FileCheck %s --check-prefix=SKIP
// RUN: kilnc %samples/mlp.mlir --train=adamw --precision=f16 --loss-scale=dynamic -o %t.kiln --stats 2>&1 | FileCheck %s --check-prefix=F16
// RUN: not kilnc %samples/mlp.mlir --train=adamw --loss-scale=dynamic --loss-scale-init=1000 -o %t.bad 2>&1 | FileCheck %s --check-prefix=INIT
// RUN: not kilnc %samples/mlp.mlir --train=adamw --nonfinite-grads=maybe -o %t.bad 2>&1 | FileCheck %s --check-prefix=POLICY
// RUN: not kiln-opt %samples/mlp.mlir '--kiln-make-train-step=loss-scale=static' 2>&1 | FileCheck %s --check-prefix=KIND

// The backward starts from 2^exponent, read from resident optimizer state.
// CHECK-LABEL: func.func @forward_backward(
// CHECK-SAME: %arg6: tensor<f32> {kiln.name = "loss_scale.exponent", kiln.role = "optimizer_state"}
// CHECK: kiln.pow

// apply_update owns the skip count and the scale's exponent and good-step
// count; loss scaling implies skipping non-finite updates.
// CHECK-LABEL: func.func @apply_update(
// CHECK-SAME: kiln.name = "grad_stats.skipped_updates", kiln.role = "optimizer_state"
// CHECK-SAME: kiln.name = "loss_scale.exponent", kiln.role = "optimizer_state"
// CHECK-SAME: kiln.name = "loss_scale.good_steps", kiln.role = "optimizer_state"
// CHECK-SAME: -> (
// CHECK-SAME: kiln.name = "grad_stats.skipped_updates", kiln.role = "optimizer_state", kiln.updates
// CHECK: kiln.select

// train_step reads the exponent once, as optimizer state, never as an input.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: kiln.name = "loss_scale.exponent", kiln.role = "optimizer_state"
// CHECK-NOT: kiln.name = "loss_scale.exponent", kiln.role = "input"
// CHECK-SAME: kiln.name = "lr", kiln.role = "learning_rate"

// SKIP-LABEL: func.func @forward_backward(
// SKIP-NOT: loss_scale
// SKIP-LABEL: func.func @apply_update(
// SKIP-SAME: kiln.name = "grad_stats.skipped_updates", kiln.role = "optimizer_state"
// SKIP-NOT: loss_scale
// SKIP: kiln.select

// F16: entry apply_update:
// F16: entry train_step:

// INIT: --loss-scale-init must be a power of two
// POLICY: --nonfinite-grads must be apply or skip, got 'maybe'
// KIND: error: kiln-make-train-step: loss-scale must be none or dynamic, got 'static'
