// A regression MLP whose hidden activation is a kernel of the user's
// (scaled_sq_relu.cu beside this file): 8 features -> 32 hidden, the
// scaled squared ReLU with a learned scale per hidden unit -> 1 output, MSE.
// Batches of 64 samples of make_dataset's regression task (that of
// samples/mlp.mlir). Trains with kilnc's usual entries; the gradients of %s
// and of everything before the custom op come from the user's backward.
func.func @loss(
    %w1: tensor<8x32xf32> {kiln.param = #kiln.init<xavier>, kiln.name = "w1"},
    %b1: tensor<32xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "b1"},
    %s: tensor<32xf32> {kiln.param = #kiln.init<ones>, kiln.name = "s"},
    %w2: tensor<32x1xf32> {kiln.param = #kiln.init<xavier>, kiln.name = "w2"},
    %b2: tensor<1xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "b2"},
    %x: tensor<64x8xf32> {kiln.name = "x"},
    %y: tensor<64x1xf32> {kiln.name = "y"}) -> tensor<f32> {
  %0 = kiln.matmul %x, %w1 : tensor<64x8xf32>, tensor<8x32xf32>
  %1 = kiln.add %0, %b1 : tensor<64x32xf32>, tensor<32xf32>
  %2 = kiln.custom "scaled_sq_relu" from "scaled_sq_relu.cu" (%1, %s)
      backward "scaled_sq_relu_grad" params {slope = 1.000000e-01 : f32}
      block_size = 128 : (tensor<64x32xf32>, tensor<32xf32>) -> tensor<64x32xf32>
  %3 = kiln.matmul %2, %w2 : tensor<64x32xf32>, tensor<32x1xf32>
  %4 = kiln.add %3, %b2 : tensor<64x1xf32>, tensor<1xf32>
  %5 = kiln.mse_loss %4, %y reduction = mean : tensor<64x1xf32>
  return %5 : tensor<f32>
}
