// RUN: kiln-opt %s --kiln-make-train-step="optimizer=sgd" | FileCheck %s
// RUN: kiln-opt %s --kiln-make-forward | FileCheck %s --check-prefix=FWD
// RUN: kiln-opt %s --kiln-mixed-precision="precision=bf16" --kiln-make-train-step="optimizer=sgd" | FileCheck %s --check-prefix=BF16

// Running statistics are model state (kiln.state): forward normalises with
// them (eval) and updates nothing.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: kiln.name = "rm", kiln.role = "state", kiln.state = #kiln.init<zeros>
// CHECK-SAME: kiln.name = "rv", kiln.role = "state", kiln.state = #kiln.init<ones>
// CHECK: kiln.batch_norm {{.*}} running %arg3, %arg4 momentum = 2.000000e-01 eval :
// CHECK: return

// forward_backward differentiates the parameters only and writes the updated
// statistics back to their arguments.
// CHECK-LABEL: func.func @forward_backward(
// CHECK-SAME: -> (tensor<f32> {kiln.name = "loss", kiln.role = "loss"}, tensor<3xf32> {kiln.name = "grad.g", kiln.role = "gradient"}, tensor<3xf32> {kiln.name = "grad.b", kiln.role = "gradient"}, tensor<3xf32> {kiln.name = "rm", kiln.role = "state", kiln.updates = 3 : i64}, tensor<3xf32> {kiln.name = "rv", kiln.role = "state", kiln.updates = 4 : i64})
// CHECK: %[[Y:.*]], %{{.*}}, %{{.*}}, %[[U:.*]]:2 = kiln.batch_norm {{.*}} running %arg3, %arg4 momentum = 2.000000e-01 :
// CHECK: kiln.batch_norm_backward
// CHECK: return {{.*}}, %[[U]]#0, %[[U]]#1 :

// apply_update knows nothing of model state.
// CHECK-LABEL: func.func @apply_update(
// CHECK-NOT: "state"
// CHECK: return

// train_step: parameters, model state, inputs, lr, step; the state is
// updated in place after the parameters.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %arg2: tensor<3xf32> {kiln.name = "rm", kiln.role = "state"}
// CHECK-SAME: %arg3: tensor<3xf32> {kiln.name = "rv", kiln.role = "state"}
// CHECK-SAME: %arg4: tensor<4x3x2xf32> {kiln.name = "x", kiln.role = "input"}
// CHECK-SAME: tensor<3xf32> {kiln.name = "b", kiln.role = "param", kiln.updates = 1 : i64}, tensor<3xf32> {kiln.name = "rm", kiln.role = "state", kiln.updates = 2 : i64}, tensor<3xf32> {kiln.name = "rv", kiln.role = "state", kiln.updates = 3 : i64})

// FWD-LABEL: func.func @forward(
// FWD-SAME: kiln.role = "state"
// FWD: kiln.batch_norm {{.*}} eval :

// Mixed precision keeps the state (and the updated statistics) in f32.
// BF16-LABEL: func.func @forward_backward(
// BF16-SAME: %arg3: tensor<3xf32> {kiln.name = "rm"
// BF16: kiln.batch_norm {{.*}} running %arg3, %arg4 {{.*}}: tensor<4x3x2xbf16>, tensor<3xbf16>, tensor<3xbf16>, tensor<3xf32>, tensor<3xf32>
func.func @loss(%x: tensor<4x3x2xf32> {kiln.name = "x"},
                %g: tensor<3xf32> {kiln.param = #kiln.init<ones>, kiln.name = "g"},
                %b: tensor<3xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "b"},
                %rm: tensor<3xf32> {kiln.state = #kiln.init<zeros>, kiln.name = "rm"},
                %rv: tensor<3xf32> {kiln.state = #kiln.init<ones>, kiln.name = "rv"},
                %t: tensor<4x3x2xf32> {kiln.name = "t"}) -> tensor<f32> {
  %y, %m, %v, %rm1, %rv1 = kiln.batch_norm %x, %g, %b running %rm, %rv momentum = 0.2
      : tensor<4x3x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
  %l = kiln.mse_loss %y, %t reduction = mean : tensor<4x3x2xf32>
  return %l : tensor<f32>
}
