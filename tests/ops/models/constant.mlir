// kiln.constant scaling a parameter.
func.func @loss(
    %p: tensor<6x33xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "p"},
    %t: tensor<6x33xf32> {kiln.name = "t"}) -> tensor<f32> {
  %c = kiln.constant dense<[1.5, -0.5, 2.0]> : tensor<3xf32>
  %r = kiln.reshape %p : tensor<6x33xf32> -> tensor<66x3xf32>
  %y = kiln.mul %r, %c : tensor<66x3xf32>, tensor<3xf32>
  %tr = kiln.reshape %t : tensor<6x33xf32> -> tensor<66x3xf32>
  %loss = kiln.mse_loss %y, %tr reduction = mean : tensor<66x3xf32>
  return %loss : tensor<f32>
}
