// Cross entropy of bf16 logits [8192, 32768] (a language model's output
// layer: 8192 tokens, a 32768-entry vocabulary) with the logits as the
// parameter, so that the training step's forward_backward entry is exactly
// the loss and d(loss)/d(logits): what a framework's fused cross entropy
// computes forward and backward. The logits are drawn on the GPU by the
// runtime's initialiser.
func.func @loss(%logits: tensor<8192x32768xbf16> {kiln.param = #kiln.init<normal, std = 2.0>, kiln.name = "logits"},
                %labels: tensor<8192xi32> {kiln.name = "labels"}) -> tensor<bf16> {
  %loss = kiln.cross_entropy %logits, %labels : tensor<8192x32768xbf16>, tensor<8192xi32>
  return %loss : tensor<bf16>
}
