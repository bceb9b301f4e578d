// kiln.group_norm: NCHW in 4 groups with weight and bias (nn.GroupNorm),
// and a group per channel without parameters (instance norm) on [N, C, L].
func.func @loss(
    %x: tensor<2x8x5x6xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "x"},
    %g: tensor<8xf32> {kiln.param = #kiln.init<normal, mean = 1.0, std = 0.2>, kiln.name = "g"},
    %b: tensor<8xf32> {kiln.param = #kiln.init<normal, std = 0.2>, kiln.name = "b"},
    %h: tensor<3x4x7xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "h"},
    %t: tensor<2x8x5x6xf32> {kiln.name = "t"},
    %u: tensor<3x4x7xf32> {kiln.name = "u"}) -> tensor<f32> {
  %y = kiln.group_norm %x, %g, %b groups = 4 : tensor<2x8x5x6xf32>, tensor<8xf32>, tensor<8xf32>
  %z = kiln.group_norm %h groups = 4 eps = 1.0e-03 : tensor<3x4x7xf32>
  %l1 = kiln.mse_loss %y, %t reduction = mean : tensor<2x8x5x6xf32>
  %l2 = kiln.mse_loss %z, %u reduction = mean : tensor<3x4x7xf32>
  %loss = kiln.add %l1, %l2 : tensor<f32>, tensor<f32>
  return %loss : tensor<f32>
}
