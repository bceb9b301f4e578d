// kiln.transpose of a parameter.
func.func @loss(
    %p: tensor<3x5x7xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "p"},
    %t: tensor<7x3x5xf32> {kiln.name = "t"}) -> tensor<f32> {
  %y = kiln.transpose %p perm = [2, 0, 1] : tensor<3x5x7xf32>
  %loss = kiln.mse_loss %y, %t reduction = mean : tensor<7x3x5xf32>
  return %loss : tensor<f32>
}
