// kiln.slice, strided, of a parameter.
func.func @loss(
    %p: tensor<4x9x7xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "p"},
    %t: tensor<4x4x2xf32> {kiln.name = "t"}) -> tensor<f32> {
  %y = kiln.slice %p start = [0, 2, 1] limit = [4, 9, 7] step = [1, 2, 4] : tensor<4x9x7xf32>
  %loss = kiln.mse_loss %y, %t reduction = mean : tensor<4x4x2xf32>
  return %loss : tensor<f32>
}
