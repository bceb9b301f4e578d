func.func @f(%x: tensor<8xf32> {kiln.name = "x"}) -> tensor<8xf32> {
  %y = kiln.custom "twice" from "axpb_elsewhere.cu" (%x)
      : (tensor<8xf32>) -> tensor<8xf32>
  return %y : tensor<8xf32>
}
