// kiln.max_pool2d, NHWC, 2x3 stride [2, 3], no padding.
func.func @loss(
    %x: tensor<2x9x11x3xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "x"},
    %t: tensor<2x4x3x3xf32> {kiln.name = "t"}) -> tensor<f32> {
  %y = kiln.max_pool2d %x layout = nhwc kernel = [2, 3] stride = [2, 3] : tensor<2x9x11x3xf32>
  %loss = kiln.mse_loss %y, %t reduction = mean : tensor<2x4x3x3xf32>
  return %loss : tensor<f32>
}
