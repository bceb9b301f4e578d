// kiln.resize, nearest: NCHW upsampling by 2 as nn.Upsample exports it, and
// by 1.5 with ties rounded up (nearest-exact), both differentiated.
func.func @loss(
    %x: tensor<2x3x5x6xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "x"},
    %t: tensor<2x3x10x12xf32> {kiln.name = "t"},
    %u: tensor<2x3x7x9xf32> {kiln.name = "u"}) -> tensor<f32> {
  %y = kiln.resize %x mode = nearest coordinates = asymmetric rounding = floor scales = [1.0, 1.0, 2.0, 2.0] : tensor<2x3x5x6xf32> -> tensor<2x3x10x12xf32>
  %z = kiln.resize %x mode = nearest coordinates = half_pixel rounding = round_prefer_ceil scales = [1.0, 1.0, 1.5, 1.5] : tensor<2x3x5x6xf32> -> tensor<2x3x7x9xf32>
  %l1 = kiln.mse_loss %y, %t reduction = mean : tensor<2x3x10x12xf32>
  %l2 = kiln.mse_loss %z, %u reduction = mean : tensor<2x3x7x9xf32>
  %loss = kiln.add %l1, %l2 : tensor<f32>, tensor<f32>
  return %loss : tensor<f32>
}
