// The constant table of an embedding is copied into the gather's kernel; no
// kernel family took that group ("no GPU kernel for 'kiln.embedding' yet: it
// needs an element-wise kernel") until the loop kernel took it (see
// constant_operand_of_remap.mlir). Found by the graph fuzzer
// (tests/fuzz/graph).
// RUN: kilnc %s --inference --emit=cuda -o %t.cu
func.func @loss(
    %i: tensor<4xi32> {kiln.name = "i"},
    %t: tensor<4x2xf32> {kiln.name = "t"}) -> (tensor<f32> {kiln.name = "loss"}) {
  %table = kiln.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %y = kiln.embedding %table, %i : tensor<2x2xf32>, tensor<4xi32>
  %loss = kiln.mse_loss %y, %t : tensor<4x2xf32>
  return %loss : tensor<f32>
}
