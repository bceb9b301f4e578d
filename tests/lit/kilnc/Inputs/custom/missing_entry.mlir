func.func @f(%x: tensor<8xf32> {kiln.name = "x"}) -> tensor<8xf32> {
  %y = kiln.custom "lit::axpy" from "axpb.cu" (%x)
      params {a = 2.0 : f32, b = 1 : i64} : (tensor<8xf32>) -> tensor<8xf32>
  return %y : tensor<8xf32>
}
