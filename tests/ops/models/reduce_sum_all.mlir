// A loss that is kiln.reduce_sum over all elements.
func.func @loss(
    %p: tensor<3x5x7xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "p"}) -> tensor<f32> {
  %e = kiln.exp %p : tensor<3x5x7xf32>
  %loss = kiln.reduce_sum %e dims = [0, 1, 2] : tensor<3x5x7xf32>
  return %loss : tensor<f32>
}
