// kiln.batch_norm over the channels of NCHW (dim 1) with 8x8 images: the
// element-wise kernels move whole 16-byte vectors.
func.func @loss(
    %x: tensor<8x16x8x8xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "x"},
    %g: tensor<16xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "g"},
    %b: tensor<16xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "b"},
    %t: tensor<8x16x8x8xf32> {kiln.name = "t"}) -> tensor<f32> {
  %y, %m, %v = kiln.batch_norm %x, %g, %b dim = 1 eps = 1.0e-05 : tensor<8x16x8x8xf32>, tensor<16xf32>, tensor<16xf32>
  %loss = kiln.mse_loss %y, %t reduction = mean : tensor<8x16x8x8xf32>
  return %loss : tensor<f32>
}
