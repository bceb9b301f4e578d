// A 1x1 stride-2 kiln.conv2d (NHWC) to 72 channels over 1152 output pixels,
// with a bias and a residual add in its epilogue, into a training
// kiln.batch_norm: the column tiles of the last channels are cut short, and
// the statistics are those of the epilogue's stored values.
func.func @loss(
    %x: tensor<8x23x23x24xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "x"},
    %w: tensor<72x1x1x24xf32> {kiln.param = #kiln.init<normal, std = 0.3>, kiln.name = "w"},
    %bias: tensor<72xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "bias"},
    %res: tensor<8x12x12x72xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "res"},
    %g: tensor<72xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "g"},
    %b: tensor<72xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "b"},
    %t: tensor<8x12x12x72xf32> {kiln.name = "t"}) -> tensor<f32> {
  %c = kiln.conv2d %x, %w, %bias layout = nhwc stride = [2, 2] : tensor<8x23x23x24xf32>, tensor<72x1x1x24xf32>, tensor<72xf32>
  %s = kiln.add %c, %res : tensor<8x12x12x72xf32>, tensor<8x12x12x72xf32>
  %y, %m, %v = kiln.batch_norm %s, %g, %b dim = 3 : tensor<8x12x12x72xf32>, tensor<72xf32>, tensor<72xf32>
  %loss = kiln.mse_loss %y, %t reduction = mean : tensor<8x12x12x72xf32>
  return %loss : tensor<f32>
}
