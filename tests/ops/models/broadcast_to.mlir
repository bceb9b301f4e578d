// kiln.broadcast_to of a parameter.
func.func @loss(
    %p: tensor<6x1x33xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "p"},
    %t: tensor<6x4x33xf32> {kiln.name = "t"}) -> tensor<f32> {
  %y = kiln.broadcast_to %p : tensor<6x1x33xf32> -> tensor<6x4x33xf32>
  %loss = kiln.mse_loss %y, %t reduction = mean : tensor<6x4x33xf32>
  return %loss : tensor<f32>
}
