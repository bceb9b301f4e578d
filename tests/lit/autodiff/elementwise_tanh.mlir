// RUN: kiln-opt %s --kiln-autodiff | FileCheck %s

// tanh's rule reuses the forward result y: g * (1 - y * y).
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: -> (tensor<f32> {kiln.name = "loss"}, tensor<2x3xf32> {kiln.name = "grad.x"})
// CHECK: %[[Y:.*]] = kiln.tanh %{{.*}} : tensor<2x3xf32>
// CHECK: %[[G:.*]] = kiln.broadcast_to %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK: %[[YY:.*]] = kiln.mul %[[Y]], %[[Y]] : tensor<2x3xf32>, tensor<2x3xf32>
// CHECK: %[[ONE:.*]] = kiln.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[D:.*]] = kiln.sub %[[ONE]], %[[YY]] : tensor<f32>, tensor<2x3xf32>
// CHECK: %[[GX:.*]] = kiln.mul %[[G]], %[[D]] : tensor<2x3xf32>, tensor<2x3xf32>
// CHECK-NOT: kiln.tanh
// CHECK: return %{{.*}}, %[[GX]] : tensor<f32>, tensor<2x3xf32>
func.func @loss(%x: tensor<2x3xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "x"}) -> tensor<f32> {
  %0 = kiln.tanh %x : tensor<2x3xf32>
  %1 = kiln.reduce_sum %0 dims = [0, 1] : tensor<2x3xf32>
  return %1 : tensor<f32>
}
