// kiln.rms_norm with a weight parameter.
func.func @loss(
    %x: tensor<4x7x24xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "x"},
    %w: tensor<24xf32> {kiln.param = #kiln.init<ones>, kiln.name = "w"},
    %t: tensor<4x7x24xf32> {kiln.name = "t"}) -> tensor<f32> {
  %y = kiln.rms_norm %x, %w eps = 1.0e-06 : tensor<4x7x24xf32>, tensor<24xf32>
  %loss = kiln.mse_loss %y, %t reduction = mean : tensor<4x7x24xf32>
  return %loss : tensor<f32>
}
