// kiln.conv2d (NHWC) into a training kiln.batch_norm with running
// statistics: one kernel computes the convolution and, where it stages its
// tiles (wgmma, bf16), the batch statistics of every tile it stores; 900
// output pixels leave a last tile of 4 rows.
func.func @loss(
    %x: tensor<4x15x15x16xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "x"},
    %w: tensor<64x3x3x16xf32> {kiln.param = #kiln.init<normal, std = 0.2>, kiln.name = "w"},
    %g: tensor<64xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "g"},
    %b: tensor<64xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "b"},
    %rm: tensor<64xf32> {kiln.state = #kiln.init<zeros>, kiln.name = "running_mean"},
    %rv: tensor<64xf32> {kiln.state = #kiln.init<ones>, kiln.name = "running_var"},
    %t: tensor<4x15x15x64xf32> {kiln.name = "t"}) -> tensor<f32> {
  %c = kiln.conv2d %x, %w layout = nhwc padding = [1, 1, 1, 1] : tensor<4x15x15x16xf32>, tensor<64x3x3x16xf32>
  %y, %m, %v, %rm1, %rv1 = kiln.batch_norm %c, %g, %b running %rm, %rv momentum = 0.1 dim = 3 : tensor<4x15x15x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
  %r = kiln.relu %y : tensor<4x15x15x64xf32>
  %loss = kiln.mse_loss %r, %t reduction = mean : tensor<4x15x15x64xf32>
  return %loss : tensor<f32>
}
