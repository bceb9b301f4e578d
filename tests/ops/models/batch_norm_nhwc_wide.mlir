// kiln.batch_norm over 64 channels of NHWC (dim 3): whole 16-byte vectors of
// channels per access, the reduction split over many rows.
func.func @loss(
    %x: tensor<16x9x9x64xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "x"},
    %g: tensor<64xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "g"},
    %b: tensor<64xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "b"},
    %t: tensor<16x9x9x64xf32> {kiln.name = "t"}) -> tensor<f32> {
  %y, %m, %v = kiln.batch_norm %x, %g, %b dim = 3 eps = 1.0e-05 : tensor<16x9x9x64xf32>, tensor<64xf32>, tensor<64xf32>
  %loss = kiln.mse_loss %y, %t reduction = mean : tensor<16x9x9x64xf32>
  return %loss : tensor<f32>
}
