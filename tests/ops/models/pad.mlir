// kiln.pad of a parameter.
func.func @loss(
    %p: tensor<4x5x2xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "p"},
    %t: tensor<6x6x6xf32> {kiln.name = "t"}) -> tensor<f32> {
  %y = kiln.pad %p low = [0, 1, 3] high = [2, 0, 1] value = 0.5 : tensor<4x5x2xf32>
  %loss = kiln.mse_loss %y, %t reduction = mean : tensor<6x6x6xf32>
  return %loss : tensor<f32>
}
