// kiln.avg_pool2d, NHWC, 3x3 stride 2 padding 1 not counting the padding.
func.func @loss(
    %x: tensor<2x9x11x3xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "x"},
    %t: tensor<2x5x6x3xf32> {kiln.name = "t"}) -> tensor<f32> {
  %y = kiln.avg_pool2d %x layout = nhwc kernel = [3, 3] stride = [2, 2] padding = [1, 1, 1, 1] : tensor<2x9x11x3xf32>
  %loss = kiln.mse_loss %y, %t reduction = mean : tensor<2x5x6x3xf32>
  return %loss : tensor<f32>
}
