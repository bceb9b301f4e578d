// kiln.flip of a parameter.
func.func @loss(
    %p: tensor<2x3x5xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "p"},
    %t: tensor<2x3x5xf32> {kiln.name = "t"}) -> tensor<f32> {
  %y = kiln.flip %p dims = [0, 2] : tensor<2x3x5xf32>
  %loss = kiln.mse_loss %y, %t reduction = mean : tensor<2x3x5xf32>
  return %loss : tensor<f32>
}
