// RUN: kiln-opt %s --kiln-make-train-step | FileCheck %s
// RUN: kiln-opt %s --kiln-make-train-step="optimizer=sgd momentum=0.9 statistics=true" | FileCheck %s --check-prefix=SGD

// The loss function becomes forward; arguments get roles.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: kiln.name = "w", kiln.param = #kiln.init<zeros>, kiln.role = "param"
// CHECK-SAME: kiln.name = "x", kiln.role = "input"
// CHECK-SAME: -> (tensor<bf16> {kiln.name = "loss", kiln.role = "loss"})

// CHECK-LABEL: func.func @forward_backward(
// CHECK-SAME: -> (tensor<bf16> {kiln.name = "loss", kiln.role = "loss"}, tensor<3xbf16> {kiln.name = "grad.w", kiln.role = "gradient"})

// A bf16 parameter gets an f32 master copy before its Adam moments.
// CHECK-LABEL: func.func @apply_update(
// CHECK-SAME: %arg0: tensor<3xbf16> {kiln.name = "w", kiln.role = "param"}
// CHECK-SAME: %arg1: tensor<3xf32> {kiln.name = "master.w", kiln.role = "master_weight"}
// CHECK-SAME: %arg2: tensor<3xf32> {kiln.name = "adam_m.w", kiln.role = "optimizer_state"}
// CHECK-SAME: %arg3: tensor<3xf32> {kiln.name = "adam_v.w", kiln.role = "optimizer_state"}
// CHECK-SAME: %arg4: tensor<3xbf16> {kiln.name = "grad.w", kiln.role = "gradient"}
// CHECK-SAME: %arg5: tensor<f32> {kiln.name = "lr", kiln.role = "learning_rate"}
// CHECK-SAME: %arg6: tensor<i32> {kiln.name = "step", kiln.role = "step"}
// CHECK-SAME: -> (tensor<3xbf16> {kiln.name = "w", kiln.role = "param", kiln.updates = 0 : i64}
// CHECK-SAME: tensor<3xf32> {kiln.name = "master.w", kiln.role = "master_weight", kiln.updates = 1 : i64}
// CHECK: kiln.pow
// CHECK: kiln.sqrt
// CHECK: kiln.cast %{{.*}} : tensor<3xf32> to tensor<3xbf16>

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %arg4: tensor<2x3xbf16> {kiln.name = "x", kiln.role = "input"}
// CHECK-SAME: -> (tensor<bf16> {kiln.name = "loss", kiln.role = "loss"}, tensor<3xbf16> {kiln.name = "w", kiln.role = "param", kiln.updates = 0 : i64}

// SGD-LABEL: func.func @apply_update(
// SGD-SAME: kiln.name = "momentum.w"
// SGD-SAME: -> ({{.*}}kiln.name = "grad_stats.global_norm"{{.*}}kiln.name = "grad_stats.max_abs"{{.*}}kiln.name = "grad_stats.nonfinite_count"
// SGD-NOT: kiln.pow
// SGD: return
func.func @loss(%w: tensor<3xbf16> {kiln.param = #kiln.init<zeros>, kiln.name = "w"},
                %x: tensor<2x3xbf16> {kiln.name = "x"}) -> tensor<bf16> {
  %0 = kiln.add %x, %w : tensor<2x3xbf16>, tensor<3xbf16>
  %1 = kiln.exp %0 : tensor<2x3xbf16>
  %2 = kiln.reduce_sum %1 dims = [0, 1] : tensor<2x3xbf16>
  return %2 : tensor<bf16>
}
