// RUN: kiln-opt %s --kiln-autodiff | FileCheck %s

// The gradient of a strided slice scatters the result gradient back with
// zeros in between. dim 1 takes 1, 4, 7 of 0..8 (step 3): each gradient
// element gets 2 zeros after it (reshape to 4x3x1, pad to 4x3x3, reshape to
// 4x9), the zeros after the last one are sliced off (4x7), and a final pad
// shifts everything to its place (start 1 before, 8 - 7 - 1 = 0 after; dim 0
// is a unit-step slice of rows 1..4 of 6: 1 before, 1 after).
// CHECK-LABEL: func.func @loss_grad
// CHECK: %[[G:.*]] = kiln.mul %{{.*}}, %{{.*}} : tensor<4x3xf32>, tensor<4x3xf32>
// CHECK: %[[S:.*]] = kiln.reshape %[[G]] : tensor<4x3xf32> -> tensor<4x3x1xf32>
// CHECK: %[[P:.*]] = kiln.pad %[[S]] low = [0, 0, 0] high = [0, 0, 2] : tensor<4x3x1xf32>
// CHECK: %[[M:.*]] = kiln.reshape %[[P]] : tensor<4x3x3xf32> -> tensor<4x9xf32>
// CHECK: %[[C:.*]] = kiln.slice %[[M]] start = [0, 0] limit = [4, 7] step = [1, 1] : tensor<4x9xf32>
// CHECK: %[[DX:.*]] = kiln.pad %[[C]] low = [1, 1] high = [1, 0] : tensor<4x7xf32>
// CHECK: return %{{.*}}, %[[DX]] : tensor<f32>, tensor<6x8xf32>
func.func @loss(%x: tensor<6x8xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "x"}) -> tensor<f32> {
  %0 = kiln.slice %x start = [1, 1] limit = [5, 8] step = [1, 3] : tensor<6x8xf32>
  %1 = kiln.exp %0 : tensor<4x3xf32>
  %2 = kiln.reduce_sum %1 dims = [0, 1] : tensor<4x3xf32>
  return %2 : tensor<f32>
}
