func.func @f(%x: tensor<4xf32>, %y: tensor<5xf32>) -> tensor<4xf32> {
  %0 = kiln.add %x, %y : tensor<4xf32>, tensor<5xf32>
  return %0 : tensor<4xf32>
}
