// RUN: kiln-opt %s --kiln-autodiff | FileCheck %s

// select's rule masks the gradient for each value operand with the same
// condition (zeros where the other operand was chosen); the condition gets
// none. The false value was broadcast from [3], so its gradient is summed
// over dim 0.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[C:[a-z0-9]+]]: tensor<2x3xi1>, %{{[a-z0-9]+}}: tensor<2x3xf32> {{[^%]*}}%{{[a-z0-9]+}}: tensor<3xf32>
// CHECK-SAME: -> (tensor<f32> {kiln.name = "loss"}, tensor<2x3xf32> {kiln.name = "grad.t"}, tensor<3xf32> {kiln.name = "grad.f"})
// CHECK: %[[G:.*]] = kiln.broadcast_to %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK: %[[Z:.*]] = kiln.constant dense<0.000000e+00> : tensor<f32>
// CHECK: %[[GT:.*]] = kiln.select %[[C]], %[[G]], %[[Z]] : tensor<2x3xi1>, tensor<2x3xf32>, tensor<f32>
// CHECK: %[[GF:.*]] = kiln.select %[[C]], %[[Z]], %[[G]] : tensor<2x3xi1>, tensor<f32>, tensor<2x3xf32>
// CHECK: %[[SF:.*]] = kiln.reduce_sum %[[GF]] dims = [0] : tensor<2x3xf32>
// CHECK: return %{{.*}}, %[[GT]], %[[SF]] : tensor<f32>, tensor<2x3xf32>, tensor<3xf32>
func.func @loss(%c: tensor<2x3xi1>,
                %t: tensor<2x3xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "t"},
                %f: tensor<3xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "f"}) -> tensor<f32> {
  %0 = kiln.select %c, %t, %f : tensor<2x3xi1>, tensor<2x3xf32>, tensor<3xf32>
  %1 = kiln.reduce_sum %0 dims = [0, 1] : tensor<2x3xf32>
  return %1 : tensor<f32>
}
