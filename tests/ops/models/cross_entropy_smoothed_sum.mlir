// kiln.cross_entropy with label smoothing and sum reduction.
func.func @loss(
    %logits: tensor<12x10xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "logits"},
    %labels: tensor<12xi32> {kiln.name = "labels"}) -> tensor<f32> {
  %loss = kiln.cross_entropy %logits, %labels reduction = sum label_smoothing = 0.1 : tensor<12x10xf32>, tensor<12xi32>
  return %loss : tensor<f32>
}
