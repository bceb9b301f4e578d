// kiln.cross_entropy over a vocabulary of 50257 (odd, too long to keep in
// registers): the loss and gradient kernel re-reads the row.
func.func @loss(
    %logits: tensor<3x50257xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "logits"},
    %labels: tensor<3xi32> {kiln.name = "labels"}) -> tensor<f32> {
  %loss = kiln.cross_entropy %logits, %labels reduction = sum : tensor<3x50257xf32>, tensor<3xi32>
  return %loss : tensor<f32>
}
