// A loss that is kiln.reduce_mean over all elements of a product.
func.func @loss(
    %p: tensor<3x5x7xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "p"},
    %t: tensor<3x5x7xf32> {kiln.name = "t"}) -> tensor<f32> {
  %e = kiln.mul %p, %t : tensor<3x5x7xf32>, tensor<3x5x7xf32>
  %loss = kiln.reduce_mean %e dims = [0, 1, 2] : tensor<3x5x7xf32>
  return %loss : tensor<f32>
}
