// kiln.concat of two parameters.
func.func @loss(
    %a: tensor<2x3x5xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "a"},
    %b: tensor<2x4x5xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "b"},
    %t: tensor<2x7x5xf32> {kiln.name = "t"}) -> tensor<f32> {
  %y = kiln.concat %a, %b dim = 1 : tensor<2x3x5xf32>, tensor<2x4x5xf32>
  %loss = kiln.mse_loss %y, %t reduction = mean : tensor<2x7x5xf32>
  return %loss : tensor<f32>
}
