// kiln.cross_entropy over a vocabulary of 32768: the loss and gradient
// kernel keeps each thread's 32 elements of a row in registers.
func.func @loss(
    %logits: tensor<4x32768xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "logits"},
    %labels: tensor<4xi32> {kiln.name = "labels"}) -> tensor<f32> {
  %loss = kiln.cross_entropy %logits, %labels label_smoothing = 0.1 : tensor<4x32768xf32>, tensor<4xi32>
  return %loss : tensor<f32>
}
