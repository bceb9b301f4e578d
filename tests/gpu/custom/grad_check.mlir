// The sample's user kernels alone (samples/custom/scaled_sq_relu.cu, found
// through kilnc -I samples/custom): one forward entry that returns the
// forward's y and the backward's dx and ds for an output gradient dy, so
// that check_custom.py can compare the backward with central differences of
// the forward on the GPU. Shapes and parameters are those of the sample.
func.func @f(%x: tensor<64x32xf32> {kiln.name = "x"},
             %s: tensor<32xf32> {kiln.name = "s"},
             %dy: tensor<64x32xf32> {kiln.name = "dy"})
    -> (tensor<64x32xf32> {kiln.name = "y"}, tensor<64x32xf32> {kiln.name = "dx"},
        tensor<32xf32> {kiln.name = "ds"}) {
  %y = kiln.custom "scaled_sq_relu" from "scaled_sq_relu.cu" (%x, %s)
      backward "scaled_sq_relu_grad" params {slope = 1.000000e-01 : f32}
      block_size = 128 : (tensor<64x32xf32>, tensor<32xf32>) -> tensor<64x32xf32>
  %dx, %ds = kiln.custom_backward "scaled_sq_relu_grad" from "scaled_sq_relu.cu"
      inputs(%x, %s) outputs(%y) output_grads(%dy)
      params {slope = 1.000000e-01 : f32} block_size = 128
      : (tensor<64x32xf32>, tensor<32xf32>, tensor<64x32xf32>, tensor<64x32xf32>)
        -> (tensor<64x32xf32>, tensor<32xf32>)
  return %y, %dx, %ds : tensor<64x32xf32>, tensor<64x32xf32>, tensor<32xf32>
}
