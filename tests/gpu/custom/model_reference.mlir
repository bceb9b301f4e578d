// samples/custom/model.mlir with its custom op written in kiln ops
// (y = s * (h > 0 ? h * h : 0.1 * h)): the CPU reference's f64 loss and
// gradients of the same parameters and batch, against which the GPU's
// forward_backward of the custom op (the user's kernels through autodiff)
// is checked. Argument names are the sample's.
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
  %zero = kiln.constant dense<0.0> : tensor<f32>
  %slope = kiln.constant dense<0.1> : tensor<f32>
  %positive = kiln.compare gt, %1, %zero : tensor<64x32xf32>, tensor<f32>
  %square = kiln.mul %1, %1 : tensor<64x32xf32>, tensor<64x32xf32>
  %leak = kiln.mul %1, %slope : tensor<64x32xf32>, tensor<f32>
  %f = kiln.select %positive, %square, %leak : tensor<64x32xi1>, tensor<64x32xf32>, tensor<64x32xf32>
  %2 = kiln.mul %f, %s : tensor<64x32xf32>, tensor<32xf32>
  %3 = kiln.matmul %2, %w2 : tensor<64x32xf32>, tensor<32x1xf32>
  %4 = kiln.add %3, %b2 : tensor<64x1xf32>, tensor<1xf32>
  %5 = kiln.mse_loss %4, %y reduction = mean : tensor<64x1xf32>
  return %5 : tensor<f32>
}
