// RUN: kiln-opt %s --kiln-autodiff | FileCheck %s

// mul's rule multiplies the incoming gradient by the other operand (at the
// broadcast shape 4x3x5), then sumToShape undoes each operand's broadcast:
// %a (4x1x5) sums dim 1 keeping it, %b (3x1) sums dim 2 keeping it and then
// drops the leading dim 0 it never had.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[A:[a-z0-9]+]]: tensor<4x1x5xf32> {{[^%]*}}%[[B:[a-z0-9]+]]: tensor<3x1xf32>
// CHECK-SAME: -> (tensor<f32> {kiln.name = "loss"}, tensor<4x1x5xf32> {kiln.name = "grad.a"}, tensor<3x1xf32> {kiln.name = "grad.b"})
// CHECK: %[[G:.*]] = kiln.broadcast_to %{{.*}} : tensor<1x1x1xf32> -> tensor<4x3x5xf32>
// CHECK-DAG: %[[GA:.*]] = kiln.mul %[[G]], %[[B]] : tensor<4x3x5xf32>, tensor<3x1xf32>
// CHECK-DAG: %[[GB:.*]] = kiln.mul %[[G]], %[[A]] : tensor<4x3x5xf32>, tensor<4x1x5xf32>
// CHECK-DAG: %[[SA:.*]] = kiln.reduce_sum %[[GA]] dims = [1] keepdim : tensor<4x3x5xf32>
// CHECK-DAG: %[[SB1:.*]] = kiln.reduce_sum %[[GB]] dims = [2] keepdim : tensor<4x3x5xf32>
// CHECK: %[[SB:.*]] = kiln.reduce_sum %[[SB1]] dims = [0] : tensor<4x3x1xf32>
// CHECK: return %{{.*}}, %[[SA]], %[[SB]] : tensor<f32>, tensor<4x1x5xf32>, tensor<3x1xf32>
func.func @loss(%a: tensor<4x1x5xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "a"},
                %b: tensor<3x1xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "b"}) -> tensor<f32> {
  %0 = kiln.mul %a, %b : tensor<4x1x5xf32>, tensor<3x1xf32>
  %1 = kiln.reduce_sum %0 dims = [0, 1, 2] : tensor<4x3x5xf32>
  return %1 : tensor<f32>
}
