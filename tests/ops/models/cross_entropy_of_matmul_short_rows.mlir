// kiln.cross_entropy of computed logits with rows of 100 classes (several
// rows per warp): the gradient is written over the logits.
func.func @loss(
    %w: tensor<32x100xf32> {kiln.param = #kiln.init<normal, std = 0.2>, kiln.name = "w"},
    %x: tensor<24x32xf32> {kiln.name = "x"},
    %labels: tensor<24xi32> {kiln.name = "labels"}) -> tensor<f32> {
  %logits = kiln.matmul %x, %w : tensor<24x32xf32>, tensor<32x100xf32>
  %loss = kiln.cross_entropy %logits, %labels : tensor<24x100xf32>, tensor<24xi32>
  return %loss : tensor<f32>
}
