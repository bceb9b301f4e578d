// Two functions that call each other (call_cycles.mlir).
func.func @f(%x: tensor<2xf32> {kiln.name = "x"})
    -> (tensor<2xf32> {kiln.name = "y"}) {
  %y = func.call @g(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %y : tensor<2xf32>
}
func.func @g(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = func.call @h(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %y : tensor<2xf32>
}
func.func @h(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = func.call @g(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %y : tensor<2xf32>
}
