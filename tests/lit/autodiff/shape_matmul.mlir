// RUN: kiln-opt %s --split-input-file --kiln-autodiff | FileCheck %s

// Backward of a batched matmul with transpose_rhs, C = X W^T, where W has no
// batch dims: dX = G W (transposes folded into the flags), and dW = G^T X as
// one 2-D product over all 2*4 rows of the batch (the rows are reshaped
// views), so the sum over the batch is the GEMM's own K loop: no batched
// product and no reduction.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:arg[0-9]+]]: tensor<2x4x8xf32>
// CHECK-SAME: %[[W:arg[0-9]+]]: tensor<16x8xf32>
// CHECK-SAME: -> (tensor<f32> {kiln.name = "loss"}, tensor<2x4x8xf32> {kiln.name = "grad.x"}, tensor<16x8xf32> {kiln.name = "grad.w"})
// CHECK: %[[E:.*]] = kiln.exp
// CHECK: %[[G:.*]] = kiln.mul %{{.*}}, %[[E]] : tensor<2x4x16xf32>, tensor<2x4x16xf32>
// CHECK: %[[DX:.*]] = kiln.matmul %[[G]], %[[W]] : tensor<2x4x16xf32>, tensor<16x8xf32>
// CHECK: %[[X2:.*]] = kiln.reshape %[[X]] : tensor<2x4x8xf32> -> tensor<8x8xf32>
// CHECK: %[[G2:.*]] = kiln.reshape %[[G]] : tensor<2x4x16xf32> -> tensor<8x16xf32>
// CHECK: %[[DW:.*]] = kiln.matmul %[[G2]], %[[X2]] transpose_lhs : tensor<8x16xf32>, tensor<8x8xf32>
// CHECK-NOT: kiln.reduce_sum
// CHECK: return %{{.*}}, %[[DX]], %[[DW]] : tensor<f32>, tensor<2x4x8xf32>, tensor<16x8xf32>
func.func @loss(%x: tensor<2x4x8xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "x"},
                %w: tensor<16x8xf32> {kiln.param = #kiln.init<normal, std = 0.1>, kiln.name = "w"}) -> tensor<f32> {
  %0 = kiln.matmul %x, %w transpose_rhs : tensor<2x4x8xf32>, tensor<16x8xf32>
  %1 = kiln.exp %0 : tensor<2x4x16xf32>
  %2 = kiln.reduce_sum %1 dims = [0, 1, 2] : tensor<2x4x16xf32>
  return %2 : tensor<f32>
}

// -----

// A weight [1, K, N] with a unit batch dim applied to activations [3, M, K]:
// the same single product over 3*M rows, reshaped back to [1, K, N].
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:arg[0-9]+]]: tensor<3x5x4xf32>
// CHECK: %[[X2:.*]] = kiln.reshape %[[X]] : tensor<3x5x4xf32> -> tensor<15x4xf32>
// CHECK: %[[G2:.*]] = kiln.reshape %{{.*}} : tensor<3x5x6xf32> -> tensor<15x6xf32>
// CHECK: %[[DW2:.*]] = kiln.matmul %[[X2]], %[[G2]] transpose_lhs : tensor<15x4xf32>, tensor<15x6xf32>
// CHECK: %[[DW:.*]] = kiln.reshape %[[DW2]] : tensor<4x6xf32> -> tensor<1x4x6xf32>
// CHECK-NOT: kiln.reduce_sum
// CHECK: return %{{.*}}, %[[DW]]
func.func @loss(%x: tensor<3x5x4xf32> {kiln.name = "x"},
                %w: tensor<1x4x6xf32> {kiln.param = #kiln.init<normal, std = 0.1>, kiln.name = "w"}) -> tensor<f32> {
  %0 = kiln.matmul %x, %w : tensor<3x5x4xf32>, tensor<1x4x6xf32>
  %1 = kiln.exp %0 : tensor<3x5x6xf32>
  %2 = kiln.reduce_sum %1 dims = [0, 1, 2] : tensor<3x5x6xf32>
  return %2 : tensor<f32>
}

// -----

// With a transposed lhs the rows of the batch are not contiguous rows of one
// matrix: the batched product and the sum over the batch stay.
// CHECK-LABEL: func.func @loss_grad
// CHECK: %[[DWB:.*]] = kiln.matmul %{{.*}}, %{{.*}} : tensor<2x8x4xf32>, tensor<2x4x16xf32>
// CHECK: %[[DW:.*]] = kiln.reduce_sum %[[DWB]] dims = [0] : tensor<2x8x16xf32>
// CHECK: return %{{.*}}, %[[DW]]
func.func @loss(%x: tensor<2x8x4xf32> {kiln.name = "x"},
                %w: tensor<8x16xf32> {kiln.param = #kiln.init<normal, std = 0.1>, kiln.name = "w"}) -> tensor<f32> {
  %0 = kiln.matmul %x, %w transpose_lhs : tensor<2x8x4xf32>, tensor<8x16xf32>
  %1 = kiln.exp %0 : tensor<2x4x16xf32>
  %2 = kiln.reduce_sum %1 dims = [0, 1, 2] : tensor<2x4x16xf32>
  return %2 : tensor<f32>
}
