// kiln.reduce_sum over two dims of a parameter.
func.func @loss(
    %p: tensor<3x5x7xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "p"},
    %t: tensor<5xf32> {kiln.name = "t"}) -> tensor<f32> {
  %y = kiln.reduce_sum %p dims = [2, 0] : tensor<3x5x7xf32>
  %loss = kiln.mse_loss %y, %t reduction = mean : tensor<5xf32>
  return %loss : tensor<f32>
}
