// kiln.log_softmax over the last dim.
func.func @loss(
    %p: tensor<4x7x24xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "p"},
    %t: tensor<4x7x24xf32> {kiln.name = "t"}) -> tensor<f32> {
  %y = kiln.log_softmax %p dim = 2 : tensor<4x7x24xf32>
  %loss = kiln.mse_loss %y, %t reduction = mean : tensor<4x7x24xf32>
  return %loss : tensor<f32>
}
