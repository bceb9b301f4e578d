module attributes {user.flags = array<i1: true, 1, 0>} {
// An array of i1 written with integers (model_text.mlir).
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}
}
