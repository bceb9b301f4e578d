// kiln.cross_entropy plus kiln.mse_loss of the same logits.
func.func @loss(
    %logits: tensor<12x10xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "logits"},
    %labels: tensor<12xi32> {kiln.name = "labels"},
    %t: tensor<12x10xf32> {kiln.name = "t"}) -> tensor<f32> {
  %ce = kiln.cross_entropy %logits, %labels label_smoothing = 0.05 : tensor<12x10xf32>, tensor<12xi32>
  %m = kiln.mse_loss %logits, %t reduction = mean : tensor<12x10xf32>
  %loss = kiln.add %ce, %m : tensor<f32>, tensor<f32>
  return %loss : tensor<f32>
}
