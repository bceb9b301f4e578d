// kiln.embedding of a parameter table; repeated tokens accumulate gradients.
func.func @loss(
    %table: tensor<4x24xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "table"},
    %tokens: tensor<5x7xi32> {kiln.name = "tokens"},
    %t: tensor<5x7x24xf32> {kiln.name = "t"}) -> tensor<f32> {
  %y = kiln.embedding %table, %tokens : tensor<4x24xf32>, tensor<5x7xi32>
  %loss = kiln.mse_loss %y, %t reduction = mean : tensor<5x7x24xf32>
  return %loss : tensor<f32>
}
