// kiln.random_uniform and kiln.random_normal as noise on a parameter.
func.func @loss(
    %p: tensor<6x33xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "p"},
    %t: tensor<6x33xf32> {kiln.name = "t"}) -> tensor<f32> {
  %u = kiln.random_uniform seed = 3 stream = 1 low = 0.5 high = 1.5 : tensor<6x33xf32>
  %n = kiln.random_normal seed = 3 stream = 2 mean = 0.0 std = 0.1 : tensor<6x33xf32>
  %a = kiln.mul %p, %u : tensor<6x33xf32>, tensor<6x33xf32>
  %y = kiln.add %a, %n : tensor<6x33xf32>, tensor<6x33xf32>
  %loss = kiln.mse_loss %y, %t reduction = mean : tensor<6x33xf32>
  return %loss : tensor<f32>
}
