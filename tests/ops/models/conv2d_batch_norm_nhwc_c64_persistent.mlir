// kiln.conv2d (NHWC, 64 channels in) into a training kiln.batch_norm with
// running statistics, large enough (18432 output pixels) that the
// persistent blocks of the TMA kernel (kernels/conv_tma.cuh) walk several
// tiles each: their producer copies the next tile while the consumers take
// the batch statistics of the last one.
func.func @loss(
    %x: tensor<8x48x48x64xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "x"},
    %w: tensor<128x3x3x64xf32> {kiln.param = #kiln.init<normal, std = 0.2>, kiln.name = "w"},
    %g: tensor<128xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "g"},
    %b: tensor<128xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "b"},
    %rm: tensor<128xf32> {kiln.state = #kiln.init<zeros>, kiln.name = "running_mean"},
    %rv: tensor<128xf32> {kiln.state = #kiln.init<ones>, kiln.name = "running_var"},
    %t: tensor<8x48x48x128xf32> {kiln.name = "t"}) -> tensor<f32> {
  %c = kiln.conv2d %x, %w layout = nhwc padding = [1, 1, 1, 1] : tensor<8x48x48x64xf32>, tensor<128x3x3x64xf32>
  %y, %m, %v, %rm1, %rv1 = kiln.batch_norm %c, %g, %b running %rm, %rv momentum = 0.1 dim = 3 : tensor<8x48x48x128xf32>, tensor<128xf32>, tensor<128xf32>, tensor<128xf32>, tensor<128xf32>
  %r = kiln.relu %y : tensor<8x48x48x128xf32>
  %loss = kiln.mse_loss %r, %t reduction = mean : tensor<8x48x48x128xf32>
  return %loss : tensor<f32>
}
