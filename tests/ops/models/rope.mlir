// kiln.rope on a parameter.
func.func @loss(
    %p: tensor<2x5x3x8xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "p"},
    %t: tensor<2x5x3x8xf32> {kiln.name = "t"}) -> tensor<f32> {
  %y = kiln.rope %p theta = 10000.0 position_offset = 2 : tensor<2x5x3x8xf32>
  %loss = kiln.mse_loss %y, %t reduction = mean : tensor<2x5x3x8xf32>
  return %loss : tensor<f32>
}
