func.func @f(%x: tensor<8xf32> {kiln.name = "x"}) -> tensor<8xf32> {
  %y = kiln.custom "axpb" from "no_such_kernel.cu" (%x)
      : (tensor<8xf32>) -> tensor<8xf32>
  return %y : tensor<8xf32>
}
