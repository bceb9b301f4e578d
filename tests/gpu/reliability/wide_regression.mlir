// Linear regression on wide records (make_dataset --task wide --features
// 4096): 4096 features -> 1 output, MSE, batches of 256 (4 MiB of data a
// step). The model of the out-of-core streaming check.
func.func @loss(
    %w: tensor<4096x1xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "w"},
    %b: tensor<1xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "b"},
    %x: tensor<256x4096xf32> {kiln.name = "x"},
    %y: tensor<256x1xf32> {kiln.name = "y"}) -> tensor<f32> {
  %0 = kiln.matmul %x, %w : tensor<256x4096xf32>, tensor<4096x1xf32>
  %1 = kiln.add %0, %b : tensor<256x1xf32>, tensor<1xf32>
  %2 = kiln.mse_loss %1, %y reduction = mean : tensor<256x1xf32>
  return %2 : tensor<f32>
}
