// kiln.cross_entropy with ignore_index and sum reduction: the rows labelled
// 1 (drawn labels are 0-3) add nothing.
func.func @loss(
    %logits: tensor<12x10xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "logits"},
    %labels: tensor<12xi32> {kiln.name = "labels"}) -> tensor<f32> {
  %loss = kiln.cross_entropy %logits, %labels reduction = sum ignore_index = 1 : tensor<12x10xf32>, tensor<12xi32>
  return %loss : tensor<f32>
}
