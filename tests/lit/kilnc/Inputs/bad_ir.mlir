// Not a test: an input with a shape error for errors.mlir.
func.func @loss(%a: tensor<4x8xf32>, %b: tensor<3xf32>) -> tensor<f32> {
  %0 = kiln.add %a, %b : tensor<4x8xf32>, tensor<3xf32>
  %1 = kiln.reduce_sum %0 dims = [0, 1] : tensor<4x8xf32>
  return %1 : tensor<f32>
}
