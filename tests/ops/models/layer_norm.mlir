// kiln.layer_norm with weight and bias parameters.
func.func @loss(
    %x: tensor<4x7x24xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "x"},
    %w: tensor<24xf32> {kiln.param = #kiln.init<ones>, kiln.name = "w"},
    %b: tensor<24xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "b"},
    %t: tensor<4x7x24xf32> {kiln.name = "t"}) -> tensor<f32> {
  %y = kiln.layer_norm %x, %w, %b dims = 1 eps = 1.0e-05 : tensor<4x7x24xf32>, tensor<24xf32>, tensor<24xf32>
  %loss = kiln.mse_loss %y, %t reduction = mean : tensor<4x7x24xf32>
  return %loss : tensor<f32>
}
