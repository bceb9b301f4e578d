// kiln.cast to bf16 and back on a parameter's path.
// The GPU rounds the value and its gradient to bf16 (as PyTorch does);
// kiln-ref in f64 does not.
// gpu-tolerance: 1e-2 1e-4
func.func @loss(
    %p: tensor<6x33xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "p"},
    %t: tensor<6x33xf32> {kiln.name = "t"}) -> tensor<f32> {
  %h = kiln.cast %p : tensor<6x33xf32> to tensor<6x33xbf16>
  %y = kiln.cast %h : tensor<6x33xbf16> to tensor<6x33xf32>
  %loss = kiln.mse_loss %y, %t reduction = mean : tensor<6x33xf32>
  return %loss : tensor<f32>
}
