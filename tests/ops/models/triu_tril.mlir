// kiln.triu and kiln.tril of a parameter.
func.func @loss(
    %p: tensor<3x6x7xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "p"},
    %t: tensor<3x6x7xf32> {kiln.name = "t"}) -> tensor<f32> {
  %u = kiln.triu %p diagonal = 1 : tensor<3x6x7xf32>
  %l = kiln.tril %p diagonal = -1 : tensor<3x6x7xf32>
  %y = kiln.sub %u, %l : tensor<3x6x7xf32>, tensor<3x6x7xf32>
  %loss = kiln.mse_loss %y, %t reduction = mean : tensor<3x6x7xf32>
  return %loss : tensor<f32>
}
