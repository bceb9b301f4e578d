// RUN: kiln-opt %s --kiln-autodiff | FileCheck %s

// Backward of a batched matmul with transpose_rhs, C = X W^T, where W has no
// batch dims: dX = G W (transposes folded into the flags) and
// dW = (G^T X) summed over the batch dim W was broadcast along.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:arg[0-9]+]]: tensor<2x4x8xf32>
// CHECK-SAME: %[[W:arg[0-9]+]]: tensor<16x8xf32>
// CHECK-SAME: -> (tensor<f32> {kiln.name = "loss"}, tensor<2x4x8xf32> {kiln.name = "grad.x"}, tensor<16x8xf32> {kiln.name = "grad.w"})
// CHECK: %[[E:.*]] = kiln.exp
// CHECK: %[[G:.*]] = kiln.mul %{{.*}}, %[[E]] : tensor<2x4x16xf32>, tensor<2x4x16xf32>
// CHECK: %[[DX:.*]] = kiln.matmul %[[G]], %[[W]] : tensor<2x4x16xf32>, tensor<16x8xf32>
// CHECK: %[[DWB:.*]] = kiln.matmul %[[G]], %[[X]] transpose_lhs : tensor<2x4x16xf32>, tensor<2x4x8xf32>
// CHECK: %[[DW:.*]] = kiln.reduce_sum %[[DWB]] dims = [0] : tensor<2x16x8xf32>
// CHECK: return %{{.*}}, %[[DX]], %[[DW]] : tensor<f32>, tensor<2x4x8xf32>, tensor<16x8xf32>
func.func @loss(%x: tensor<2x4x8xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "x"},
                %w: tensor<16x8xf32> {kiln.param = #kiln.init<normal, std = 0.1>, kiln.name = "w"}) -> tensor<f32> {
  %0 = kiln.matmul %x, %w transpose_rhs : tensor<2x4x8xf32>, tensor<16x8xf32>
  %1 = kiln.exp %0 : tensor<2x4x16xf32>
  %2 = kiln.reduce_sum %1 dims = [0, 1, 2] : tensor<2x4x16xf32>
  return %2 : tensor<f32>
}
