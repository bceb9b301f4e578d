// A batched matmul of a parameter by a rank-5 constant (batch dimensions
// broadcast from 1x2x2 to 2x2x1x2x2) compiles for inference but not for
// training: "no GPU kernel for 'kiln.matmul' yet: it needs a
// matrix-multiply kernel" (graph 1796630925:2465, reduced from 18 ops to
// 4). Open: the training step must compile as inference does.
// XFAIL: *
// RUN: kilnc %s --inference -o %t.infer.kiln
// RUN: kilnc %s --train=sgd -o %t.sgd.kiln
func.func @loss(
    %p1: tensor<1x2x2xf32> {kiln.param = #kiln.init<kaiming>, kiln.name = "p1"},
    %v15: tensor<f32> {kiln.name = "v15"}) -> (tensor<f32> {kiln.name = "loss"}) {
  %v5 = kiln.constant dense<2.0> : tensor<2x2x1x2x2xf32>
  %v6 = kiln.matmul %p1, %v5 : tensor<1x2x2xf32>, tensor<2x2x1x2x2xf32>
  %v13 = kiln.mse_loss %v6, %v5 : tensor<2x2x1x2x2xf32>
  %v16 = kiln.add %v15, %v13 : tensor<f32>, tensor<f32>
  return %v16 : tensor<f32>
}
