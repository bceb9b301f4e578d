// kiln.binary_cross_entropy of parameter logits is the loss.
func.func @loss(
    %logits: tensor<12x3xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "logits"},
    %t: tensor<12x3xf32> {kiln.name = "t"}) -> tensor<f32> {
  %loss = kiln.binary_cross_entropy %logits, %t : tensor<12x3xf32>
  return %loss : tensor<f32>
}
