// @f calls @g twice and @h once; @g calls @h.
func.func @f(%x: tensor<2xf32> {kiln.name = "x"})
    -> (tensor<2xf32> {kiln.name = "y"}) {
  %a = func.call @g(%x) : (tensor<2xf32>) -> tensor<2xf32>
  %b = func.call @g(%a) : (tensor<2xf32>) -> tensor<2xf32>
  %c = func.call @h(%b) : (tensor<2xf32>) -> tensor<2xf32>
  return %c : tensor<2xf32>
}
func.func @g(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = func.call @h(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %y : tensor<2xf32>
}
func.func @h(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = kiln.relu %x : tensor<2xf32>
  return %y : tensor<2xf32>
}
