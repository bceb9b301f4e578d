// kiln.conv2d, NCHW, with input, filter and bias parameters.
func.func @loss(
    %x: tensor<2x3x9x9xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "x"},
    %f: tensor<4x3x3x3xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "f"},
    %b: tensor<4xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "b"},
    %t: tensor<2x4x5x5xf32> {kiln.name = "t"}) -> tensor<f32> {
  %y = kiln.conv2d %x, %f, %b layout = nchw stride = [2, 2] padding = [1, 1, 1, 1] : tensor<2x3x9x9xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>
  %loss = kiln.mse_loss %y, %t reduction = mean : tensor<2x4x5x5xf32>
  return %loss : tensor<f32>
}
