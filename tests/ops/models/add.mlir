// kiln.add of a parameter and a broadcast parameter.
func.func @loss(
    %p: tensor<6x33xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "p"},
    %q: tensor<33xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "q"},
    %t: tensor<6x33xf32> {kiln.name = "t"}) -> tensor<f32> {
  %y = kiln.add %p, %q : tensor<6x33xf32>, tensor<33xf32>
  %loss = kiln.mse_loss %y, %t reduction = mean : tensor<6x33xf32>
  return %loss : tensor<f32>
}
