// kiln.log of exp(p) (a positive argument), MSE against a target.
func.func @loss(
    %p: tensor<6x33xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "p"},
    %t: tensor<6x33xf32> {kiln.name = "t"}) -> tensor<f32> {
  %e = kiln.exp %p : tensor<6x33xf32>
  %y = kiln.log %e : tensor<6x33xf32>
  %loss = kiln.mse_loss %y, %t reduction = mean : tensor<6x33xf32>
  return %loss : tensor<f32>
}
