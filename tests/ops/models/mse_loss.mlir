// kiln.mse_loss of a parameter, summed.
func.func @loss(
    %p: tensor<6x33xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "p"},
    %t: tensor<6x33xf32> {kiln.name = "t"}) -> tensor<f32> {
  %loss = kiln.mse_loss %p, %t reduction = sum : tensor<6x33xf32>
  return %loss : tensor<f32>
}
