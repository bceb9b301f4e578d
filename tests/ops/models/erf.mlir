// kiln.erf on a parameter, MSE against a target.
func.func @loss(
    %p: tensor<6x33xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "p"},
    %t: tensor<6x33xf32> {kiln.name = "t"}) -> tensor<f32> {
  %y = kiln.erf %p : tensor<6x33xf32>
  %loss = kiln.mse_loss %y, %t reduction = mean : tensor<6x33xf32>
  return %loss : tensor<f32>
}
