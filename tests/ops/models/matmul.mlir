// kiln.matmul of a parameter and an input.
func.func @loss(
    %w: tensor<16x12xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "w"},
    %x: tensor<8x16xf32> {kiln.name = "x"},
    %t: tensor<8x12xf32> {kiln.name = "t"}) -> tensor<f32> {
  %y = kiln.matmul %x, %w : tensor<8x16xf32>, tensor<16x12xf32>
  %loss = kiln.mse_loss %y, %t reduction = mean : tensor<8x12xf32>
  return %loss : tensor<f32>
}
