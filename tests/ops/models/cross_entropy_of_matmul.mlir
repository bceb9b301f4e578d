// kiln.cross_entropy of logits a matmul computes: the training step writes
// the logits' gradient over the logits (they die in the loss kernel).
func.func @loss(
    %w: tensor<64x512xf32> {kiln.param = #kiln.init<normal, std = 0.2>, kiln.name = "w"},
    %x: tensor<16x64xf32> {kiln.name = "x"},
    %labels: tensor<16xi32> {kiln.name = "labels"}) -> tensor<f32> {
  %logits = kiln.matmul %x, %w : tensor<16x64xf32>, tensor<64x512xf32>
  %loss = kiln.cross_entropy %logits, %labels label_smoothing = 0.1 : tensor<16x512xf32>, tensor<16xi32>
  return %loss : tensor<f32>
}
