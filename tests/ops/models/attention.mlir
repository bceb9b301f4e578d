// kiln.attention, causal, with q, k, v parameters.
func.func @loss(
    %q: tensor<2x3x9x16xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "q"},
    %k: tensor<2x3x9x16xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "k"},
    %v: tensor<2x3x9x16xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "v"},
    %t: tensor<2x3x9x16xf32> {kiln.name = "t"}) -> tensor<f32> {
  %y = kiln.attention %q, %k, %v causal scale = 0.25 : tensor<2x3x9x16xf32>, tensor<2x3x9x16xf32>, tensor<2x3x9x16xf32>
  %loss = kiln.mse_loss %y, %t reduction = mean : tensor<2x3x9x16xf32>
  return %loss : tensor<f32>
}
