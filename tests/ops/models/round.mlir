// kiln.round on a parameter's path: p's gradient is zero, q's is not.
func.func @loss(
    %p: tensor<6x33xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "p"},
    %q: tensor<6x33xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "q"},
    %t: tensor<6x33xf32> {kiln.name = "t"}) -> tensor<f32> {
  %s = kiln.mul %p, %t : tensor<6x33xf32>, tensor<6x33xf32>
  %y = kiln.round %s : tensor<6x33xf32>
  %z = kiln.add %y, %q : tensor<6x33xf32>, tensor<6x33xf32>
  %loss = kiln.mse_loss %z, %t reduction = mean : tensor<6x33xf32>
  return %loss : tensor<f32>
}
