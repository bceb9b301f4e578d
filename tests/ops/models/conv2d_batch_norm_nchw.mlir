// kiln.conv2d (NCHW) into a training kiln.batch_norm (dim 1): one fusion,
// whose batch norm takes its statistics from the stored result.
func.func @loss(
    %x: tensor<2x8x9x9xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "x"},
    %w: tensor<16x8x3x3xf32> {kiln.param = #kiln.init<normal, std = 0.3>, kiln.name = "w"},
    %g: tensor<16xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "g"},
    %b: tensor<16xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "b"},
    %t: tensor<2x16x9x9xf32> {kiln.name = "t"}) -> tensor<f32> {
  %c = kiln.conv2d %x, %w layout = nchw padding = [1, 1, 1, 1] : tensor<2x8x9x9xf32>, tensor<16x8x3x3xf32>
  %y, %m, %v = kiln.batch_norm %c, %g, %b : tensor<2x16x9x9xf32>, tensor<16xf32>, tensor<16xf32>
  %loss = kiln.mse_loss %y, %t reduction = mean : tensor<2x16x9x9xf32>
  return %loss : tensor<f32>
}
