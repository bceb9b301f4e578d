// RUN: kiln-opt %s --kiln-autodiff | FileCheck %s

// softmax's rule: dx = y * (g - sum(g * y)), the sum along dim 1 kept as a
// size-1 dim so that it broadcasts back; y is the forward result.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: -> (tensor<f32> {kiln.name = "loss"}, tensor<3x5xf32> {kiln.name = "grad.x"})
// CHECK: %[[Y:.*]] = kiln.softmax %arg0 dim = 1 : tensor<3x5xf32>
// mse_loss's rule: g = (y - t) * (2/15) * seed.
// CHECK: %[[D:.*]] = kiln.add %[[Y]], %{{.*}} : tensor<3x5xf32>, tensor<3x5xf32>
// CHECK: %[[S:.*]] = kiln.constant dense<0.13333334> : tensor<f32>
// CHECK: %[[G:.*]] = kiln.mul %[[D]], %{{.*}} : tensor<3x5xf32>, tensor<f32>
// CHECK: %[[GY:.*]] = kiln.mul %[[G]], %[[Y]] : tensor<3x5xf32>, tensor<3x5xf32>
// CHECK: %[[DOT:.*]] = kiln.reduce_sum %[[GY]] dims = [1] keepdim : tensor<3x5xf32>
// CHECK: %[[NEG:.*]] = kiln.mul %[[DOT]], %{{.*}} : tensor<3x1xf32>, tensor<f32>
// CHECK: %[[DIFF:.*]] = kiln.add %[[G]], %[[NEG]] : tensor<3x5xf32>, tensor<3x1xf32>
// CHECK: %[[DX:.*]] = kiln.mul %[[Y]], %[[DIFF]] : tensor<3x5xf32>, tensor<3x5xf32>
// CHECK: return %{{.*}}, %[[DX]] : tensor<f32>, tensor<3x5xf32>

func.func @loss(%x: tensor<3x5xf32> {kiln.param = #kiln.init<normal, std = 1.0>, kiln.name = "x"},
                %t: tensor<3x5xf32>) -> tensor<f32> {
  %y = kiln.softmax %x dim = 1 : tensor<3x5xf32>
  %l = kiln.mse_loss %y, %t : tensor<3x5xf32>
  return %l : tensor<f32>
}
