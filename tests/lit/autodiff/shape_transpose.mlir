// RUN: kiln-opt %s --kiln-autodiff | FileCheck %s

// The gradient of a transpose is the gradient transposed by the inverse
// permutation: perm [2, 0, 1] is undone by [1, 2, 0].
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: -> (tensor<f32> {kiln.name = "loss"}, tensor<3x4x5xf32> {kiln.name = "grad.x"})
// CHECK: %[[E:.*]] = kiln.exp %{{.*}} : tensor<5x3x4xf32>
// CHECK: %[[G:.*]] = kiln.mul %{{.*}}, %[[E]] : tensor<5x3x4xf32>, tensor<5x3x4xf32>
// CHECK: %[[DX:.*]] = kiln.transpose %[[G]] perm = [1, 2, 0] : tensor<5x3x4xf32>
// CHECK: return %{{.*}}, %[[DX]] : tensor<f32>, tensor<3x4x5xf32>
func.func @loss(%x: tensor<3x4x5xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "x"}) -> tensor<f32> {
  %0 = kiln.transpose %x perm = [2, 0, 1] : tensor<3x4x5xf32>
  %1 = kiln.exp %0 : tensor<5x3x4xf32>
  %2 = kiln.reduce_sum %1 dims = [0, 1, 2] : tensor<5x3x4xf32>
  return %2 : tensor<f32>
}
