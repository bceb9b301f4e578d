// RUN: kiln-opt %s --kiln-autodiff | FileCheck %s

// The gradient of a mean over dims [0, 2] of a 4x3x5 tensor: the reduced
// dims are put back as size 1, the gradient is divided by the group size
// 4 * 5 = 20 and broadcast back over the group.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: -> (tensor<f32> {kiln.name = "loss"}, tensor<4x3x5xf32> {kiln.name = "grad.x"})
// CHECK: %[[E:.*]] = kiln.exp %{{.*}} : tensor<3xf32>
// CHECK: %[[G:.*]] = kiln.mul %{{.*}}, %[[E]] : tensor<3xf32>, tensor<3xf32>
// CHECK: %[[K:.*]] = kiln.reshape %[[G]] : tensor<3xf32> -> tensor<1x3x1xf32>
// CHECK: %[[N:.*]] = kiln.constant dense<2.000000e+01> : tensor<f32>
// CHECK: %[[D:.*]] = kiln.div %[[K]], %[[N]] : tensor<1x3x1xf32>, tensor<f32>
// CHECK: %[[DX:.*]] = kiln.broadcast_to %[[D]] : tensor<1x3x1xf32> -> tensor<4x3x5xf32>
// CHECK: return %{{.*}}, %[[DX]] : tensor<f32>, tensor<4x3x5xf32>
func.func @loss(%x: tensor<4x3x5xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "x"}) -> tensor<f32> {
  %0 = kiln.reduce_mean %x dims = [0, 2] : tensor<4x3x5xf32>
  %1 = kiln.exp %0 : tensor<3xf32>
  %2 = kiln.reduce_sum %1 dims = [0] : tensor<3xf32>
  return %2 : tensor<f32>
}
