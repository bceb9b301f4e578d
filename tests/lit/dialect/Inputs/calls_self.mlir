// A function that calls itself (call_cycles.mlir).
func.func @f(%x: tensor<2xf32> {kiln.name = "x"})
    -> (tensor<2xf32> {kiln.name = "y"}) {
  %r = kiln.relu %x : tensor<2xf32>
  %y = func.call @f(%r) : (tensor<2xf32>) -> tensor<2xf32>
  return %y : tensor<2xf32>
}
