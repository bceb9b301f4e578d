// RUN: kiln-opt %s --kiln-autodiff -split-input-file | FileCheck %s

// A kiln.custom differentiates into one kiln.custom_backward of the user's
// backward entry: the forward inputs, the forward outputs and the output
// gradients in, the gradients of the float inputs out, with the forward
// op's parameters and block size. The second output does not reach the
// loss, so its gradient is zeros; the i32 input gets no gradient.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: -> (tensor<f32> {kiln.name = "loss"}, tensor<4x8xf32> {kiln.name = "grad.x"}, tensor<8xf32> {kiln.name = "grad.s"})
// CHECK: %[[Y:.*]]:2 = kiln.custom "fwd" from "k.cu" (%[[X:.*]], %[[I:.*]], %[[S:.*]]) backward "bwd" backward_from "k_grad.cu" params {p = 3 : i64} block_size = 64
// CHECK: %[[DY:.*]] = kiln.broadcast_to %{{.*}} : tensor<1x1xf32> -> tensor<4x8xf32>
// CHECK: %[[Z:.*]] = kiln.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK: %[[G:.*]]:2 = kiln.custom_backward "bwd" from "k_grad.cu" inputs(%[[X]], %[[I]], %[[S]]) outputs(%[[Y]]#0, %[[Y]]#1) output_grads(%[[DY]], %[[Z]]) params {p = 3 : i64} block_size = 64 : (tensor<4x8xf32>, tensor<4xi32>, tensor<8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4x8xf32>, tensor<4xf32>) -> (tensor<4x8xf32>, tensor<8xf32>)
// CHECK: return %{{.*}}, %[[G]]#0, %[[G]]#1
func.func @loss(%x: tensor<4x8xf32> {kiln.param = #kiln.init<normal>, kiln.name = "x"},
                %i: tensor<4xi32> {kiln.name = "i"},
                %s: tensor<8xf32> {kiln.param = #kiln.init<ones>, kiln.name = "s"}) -> tensor<f32> {
  %y, %aux = kiln.custom "fwd" from "k.cu" (%x, %i, %s) backward "bwd"
      backward_from "k_grad.cu" params {p = 3 : i64} block_size = 64
      : (tensor<4x8xf32>, tensor<4xi32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>)
  %l = kiln.reduce_sum %y dims = [0, 1] : tensor<4x8xf32>
  return %l : tensor<f32>
}

// -----

// A custom op that no differentiated argument reaches needs no backward.
// CHECK-LABEL: func.func @constant_path_grad
// CHECK: kiln.custom "fwd" from "k.cu" (%{{.*}}) :
// CHECK-NOT: kiln.custom_backward
// CHECK: return
func.func @constant_path(%w: tensor<4xf32> {kiln.param = #kiln.init<ones>, kiln.name = "w"},
                         %x: tensor<4xf32> {kiln.name = "x"}) -> tensor<f32> {
  %y = kiln.custom "fwd" from "k.cu" (%x) : (tensor<4xf32>) -> tensor<4xf32>
  %p = kiln.mul %y, %w : tensor<4xf32>, tensor<4xf32>
  %l = kiln.reduce_sum %p dims = [0] : tensor<4xf32>
  return %l : tensor<f32>
}
