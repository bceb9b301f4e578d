// Two-layer MLP regression: 8 features -> 64 hidden (tanh) -> 1 output, MSE.
// Batches of 64 samples.
func.func @loss(
    %w1: tensor<8x64xf32> {kiln.param = #kiln.init<xavier>, kiln.name = "w1"},
    %b1: tensor<64xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "b1"},
    %w2: tensor<64x1xf32> {kiln.param = #kiln.init<xavier>, kiln.name = "w2"},
    %b2: tensor<1xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "b2"},
    %x: tensor<64x8xf32> {kiln.name = "x"},
    %y: tensor<64x1xf32> {kiln.name = "y"}) -> tensor<f32> {
  %0 = kiln.matmul %x, %w1 : tensor<64x8xf32>, tensor<8x64xf32>
  %1 = kiln.add %0, %b1 : tensor<64x64xf32>, tensor<64xf32>
  %2 = kiln.tanh %1 : tensor<64x64xf32>
  %3 = kiln.matmul %2, %w2 : tensor<64x64xf32>, tensor<64x1xf32>
  %4 = kiln.add %3, %b2 : tensor<64x1xf32>, tensor<1xf32>
  %5 = kiln.mse_loss %4, %y reduction = mean : tensor<64x1xf32>
  return %5 : tensor<f32>
}
