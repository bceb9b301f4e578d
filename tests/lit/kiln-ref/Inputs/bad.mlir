func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.exp %x : tensor<4xf32>
  %1 = kiln.frobnicate %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}
