// kiln.cross_entropy of parameter logits is the loss.
func.func @loss(
    %logits: tensor<12x10xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "logits"},
    %labels: tensor<12xi32> {kiln.name = "labels"}) -> tensor<f32> {
  %loss = kiln.cross_entropy %logits, %labels label_smoothing = 0.0 : tensor<12x10xf32>, tensor<12xi32>
  return %loss : tensor<f32>
}
