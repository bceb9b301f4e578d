// kiln.matmul, batched, with both operands transposed.
func.func @loss(
    %a: tensor<3x16x8xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "a"},
    %b: tensor<12x16xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "b"},
    %t: tensor<3x8x12xf32> {kiln.name = "t"}) -> tensor<f32> {
  %y = kiln.matmul %a, %b transpose_lhs transpose_rhs : tensor<3x16x8xf32>, tensor<12x16xf32>
  %loss = kiln.mse_loss %y, %t reduction = mean : tensor<3x8x12xf32>
  return %loss : tensor<f32>
}
