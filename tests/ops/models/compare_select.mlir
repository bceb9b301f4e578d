// kiln.compare and kiln.select: the larger of p and t, elementwise.
func.func @loss(
    %p: tensor<6x33xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "p"},
    %t: tensor<6x33xf32> {kiln.name = "t"},
    %u: tensor<6x33xf32> {kiln.name = "u"}) -> tensor<f32> {
  %c = kiln.compare gt, %p, %t : tensor<6x33xf32>, tensor<6x33xf32>
  %y = kiln.select %c, %p, %t : tensor<6x33xi1>, tensor<6x33xf32>, tensor<6x33xf32>
  %loss = kiln.mse_loss %y, %u reduction = mean : tensor<6x33xf32>
  return %loss : tensor<f32>
}
