// RUN: kiln-opt %s --kiln-autodiff | FileCheck %s

// Attention differentiates into one attention_backward that takes the
// forward operands, the forward result and its gradient, and keeps the
// forward op's causal flag and scale. Three queries after six keys.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: -> (tensor<f32> {kiln.name = "loss"}, tensor<2x3x4x8xf32> {kiln.name = "grad.q"}, tensor<2x3x6x8xf32> {kiln.name = "grad.k"}, tensor<2x3x6x5xf32> {kiln.name = "grad.v"})
// CHECK: %[[O:.*]] = kiln.attention %[[Q:.*]], %[[K:.*]], %[[V:[^ ]*]] causal scale = 2.500000e-01
// CHECK: %[[E:.*]] = kiln.exp %[[O]] : tensor<2x3x4x5xf32>
// exp's rule gives the gradient reaching the attention result.
// CHECK: %[[DO:.*]] = kiln.mul %{{.*}}, %[[E]] : tensor<2x3x4x5xf32>, tensor<2x3x4x5xf32>
// CHECK: %[[DQ:.*]], %[[DK:.*]], %[[DV:.*]] = kiln.attention_backward %[[Q]], %[[K]], %[[V]], %[[O]], %[[DO]] causal scale = 2.500000e-01 : tensor<2x3x4x8xf32>, tensor<2x3x6x8xf32>, tensor<2x3x6x5xf32>, tensor<2x3x4x5xf32>
// CHECK: return %{{.*}}, %[[DQ]], %[[DK]], %[[DV]]
func.func @loss(%q: tensor<2x3x4x8xf32> {kiln.param = #kiln.init<normal, std = 0.1>, kiln.name = "q"},
                %k: tensor<2x3x6x8xf32> {kiln.param = #kiln.init<normal, std = 0.1>, kiln.name = "k"},
                %v: tensor<2x3x6x5xf32> {kiln.param = #kiln.init<normal, std = 0.1>, kiln.name = "v"}) -> tensor<f32> {
  %o = kiln.attention %q, %k, %v causal scale = 0.25 : tensor<2x3x4x8xf32>, tensor<2x3x6x8xf32>, tensor<2x3x6x5xf32>
  %e = kiln.exp %o : tensor<2x3x4x5xf32>
  %l = kiln.reduce_sum %e dims = [0, 1, 2, 3] : tensor<2x3x4x5xf32>
  return %l : tensor<f32>
}
