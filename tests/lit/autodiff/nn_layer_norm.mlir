// RUN: kiln-opt %s --kiln-autodiff | FileCheck %s

// The loss's gradient comes from cross_entropy_backward (softmax - smoothed
// one-hot, mean over 7 rows); layer_norm_backward recomputes the statistics
// from the input and gives the weight and bias gradients.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: -> (tensor<f32> {kiln.name = "loss"}, tensor<6xf32> {kiln.name = "grad.w"}, tensor<6xf32> {kiln.name = "grad.b"})
// CHECK: %[[Y:.*]] = kiln.layer_norm %arg0, %arg1, %arg2 eps = 9.9999999999999995E-7
// CHECK: %[[SEED:.*]] = kiln.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[G:.*]] = kiln.cross_entropy_backward %[[SEED]], %[[Y]], %arg3 label_smoothing = 1.000000e-01 : tensor<7x6xf32>, tensor<7xi32>
// CHECK: %{{.*}}, %[[DW:.*]], %[[DB:.*]] = kiln.layer_norm_backward %[[G]], %arg0, %arg1 eps = 9.9999999999999995E-7 : tensor<7x6xf32>, tensor<6xf32>
// CHECK: return %{{.*}}, %[[DW]], %[[DB]] : tensor<f32>, tensor<6xf32>, tensor<6xf32>

func.func @loss(%x: tensor<7x6xf32>,
                %w: tensor<6xf32> {kiln.param = #kiln.init<ones>, kiln.name = "w"},
                %b: tensor<6xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "b"},
                %labels: tensor<7xi32>) -> tensor<f32> {
  %y = kiln.layer_norm %x, %w, %b eps = 1.0e-06 : tensor<7x6xf32>, tensor<6xf32>, tensor<6xf32>
  %l = kiln.cross_entropy %y, %labels label_smoothing = 0.1 : tensor<7x6xf32>, tensor<7xi32>
  return %l : tensor<f32>
}
