// kiln.argmax of an input picks which parameter row scales the output.
func.func @loss(
    %p: tensor<4x33xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "p"},
    %x: tensor<6x4xf32> {kiln.name = "x"},
    %t: tensor<6x33xf32> {kiln.name = "t"}) -> tensor<f32> {
  %i = kiln.argmax %x dim = 1 : tensor<6x4xf32>
  %y = kiln.embedding %p, %i : tensor<4x33xf32>, tensor<6xi32>
  %loss = kiln.mse_loss %y, %t reduction = mean : tensor<6x33xf32>
  return %loss : tensor<f32>
}
