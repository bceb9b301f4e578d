// RUN: kiln-opt %s --kiln-autodiff | FileCheck %s

// The gradient function returns the loss and the parameter gradients, named.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: -> (tensor<f32> {kiln.name = "loss"}, tensor<2x3xf32> {kiln.name = "grad.w"}, tensor<3xf32> {kiln.name = "grad.b"})
// The seed of the reverse sweep is d(loss)/d(loss) = 1.
// CHECK: %[[ONE:.*]] = kiln.constant dense<1.000000e+00> : tensor<f32>
// reduce_sum's rule reshapes the seed back and broadcasts it.
// CHECK: %[[G:.*]] = kiln.reshape %[[ONE]] : tensor<f32> -> tensor<1x1xf32>
// CHECK: %[[GB:.*]] = kiln.broadcast_to %[[G]] : tensor<1x1xf32> -> tensor<2x3xf32>
// exp's rule multiplies by its own result.
// CHECK: %[[GE:.*]] = kiln.mul %[[GB]], %[[E:.*]] : tensor<2x3xf32>, tensor<2x3xf32>
// add's rule undoes the broadcast of the bias by summing over dim 0.
// CHECK: %[[GBIAS:.*]] = kiln.reduce_sum %[[GE]] dims = [0] : tensor<2x3xf32>
// CHECK: return %{{.*}}, %[[GE]], %[[GBIAS]]
func.func @loss(%w: tensor<2x3xf32> {kiln.param = #kiln.init<normal, std = 0.1>, kiln.name = "w"},
                %b: tensor<3xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "b"}) -> tensor<f32> {
  %0 = kiln.add %w, %b : tensor<2x3xf32>, tensor<3xf32>
  %1 = kiln.exp %0 : tensor<2x3xf32>
  %2 = kiln.reduce_sum %1 dims = [0, 1] : tensor<2x3xf32>
  return %2 : tensor<f32>
}
