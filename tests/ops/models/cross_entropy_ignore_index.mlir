// kiln.cross_entropy with ignore_index and label smoothing: the mean divides
// by the rows whose label is not 2 (a drawn label: about a quarter of them).
func.func @loss(
    %logits: tensor<12x10xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "logits"},
    %labels: tensor<12xi32> {kiln.name = "labels"}) -> tensor<f32> {
  %loss = kiln.cross_entropy %logits, %labels label_smoothing = 0.1 ignore_index = 2 : tensor<12x10xf32>, tensor<12xi32>
  return %loss : tensor<f32>
}
