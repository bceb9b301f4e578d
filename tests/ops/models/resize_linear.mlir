// kiln.resize, linear: bilinear NCHW upsampling with half_pixel coordinates
// (nn.Upsample(mode='bilinear')) and channels-last downsampling with
// align_corners, both differentiated.
func.func @loss(
    %x: tensor<2x3x5x6xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "x"},
    %h: tensor<2x9x8x4xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "h"},
    %t: tensor<2x3x10x12xf32> {kiln.name = "t"},
    %u: tensor<2x4x3x4xf32> {kiln.name = "u"}) -> tensor<f32> {
  %y = kiln.resize %x mode = linear coordinates = half_pixel scales = [1.0, 1.0, 2.0, 2.0] : tensor<2x3x5x6xf32> -> tensor<2x3x10x12xf32>
  %z = kiln.resize %h mode = linear coordinates = align_corners scales = [1.0, 0.5, 0.5, 1.0] : tensor<2x9x8x4xf32> -> tensor<2x4x3x4xf32>
  %l1 = kiln.mse_loss %y, %t reduction = mean : tensor<2x3x10x12xf32>
  %l2 = kiln.mse_loss %z, %u reduction = mean : tensor<2x4x3x4xf32>
  %loss = kiln.add %l1, %l2 : tensor<f32>, tensor<f32>
  return %loss : tensor<f32>
}
