// kiln.avg_pool2d, NCHW, 3x3 stride 2 padding 1 counting the padding.
func.func @loss(
    %x: tensor<2x3x9x11xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "x"},
    %t: tensor<2x3x5x6xf32> {kiln.name = "t"}) -> tensor<f32> {
  %y = kiln.avg_pool2d %x layout = nchw kernel = [3, 3] stride = [2, 2] padding = [1, 1, 1, 1] count_include_pad : tensor<2x3x9x11xf32>
  %loss = kiln.mse_loss %y, %t reduction = mean : tensor<2x3x5x6xf32>
  return %loss : tensor<f32>
}
