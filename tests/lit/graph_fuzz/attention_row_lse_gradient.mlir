// A loss that depends on an attention's row log-sum-exp through a parameter
// is refused at the op: the gradient rule gives no gradient through it (it
// used to drop that part of the gradient silently).
// RUN: not kilnc %s --train=sgd --emit=cuda -o %t.cu 2>&1 | FileCheck %s

// CHECK: attention_row_lse_gradient.mlir:[[@LINE+5]]:14: error: 'kiln.attention' op has no gradient through its row log-sum-exp (with_row_lse): the loss depends on it through a differentiated argument
func.func @loss(
    %q: tensor<1x2x4x8xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "q"},
    %k: tensor<1x2x4x8xf32> {kiln.name = "k"},
    %v: tensor<1x2x4x8xf32> {kiln.name = "v"}) -> (tensor<f32> {kiln.name = "loss"}) {
  %o, %lse = kiln.attention %q, %k, %v with_row_lse : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>
  %loss = kiln.reduce_sum %lse dims = [0, 1, 2] : tensor<1x2x4xf32>
  return %loss : tensor<f32>
}
