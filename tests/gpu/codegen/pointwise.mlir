// Element-wise ops with broadcasting, compare/select, casts and activations:
// one fused pointwise kernel, checked against the f64 reference.
func.func @f(%a: tensor<7x33xf32> {kiln.name = "a"}, %b: tensor<33xf32> {kiln.name = "b"},
             %c: tensor<7x1xbf16> {kiln.name = "c"})
    -> (tensor<7x33xf32> {kiln.name = "y"}, tensor<7x33xbf16> {kiln.name = "z"}) {
  %0 = kiln.add %a, %b : tensor<7x33xf32>, tensor<33xf32>
  %1 = kiln.gelu %0 approximate = tanh : tensor<7x33xf32>
  %2 = kiln.gelu %0 : tensor<7x33xf32>
  %3 = kiln.sub %1, %2 : tensor<7x33xf32>, tensor<7x33xf32>
  %4 = kiln.tanh %a : tensor<7x33xf32>
  %5 = kiln.sigmoid %4 : tensor<7x33xf32>
  %6 = kiln.compare gt, %a, %b : tensor<7x33xf32>, tensor<33xf32>
  %7 = kiln.select %6, %5, %3 : tensor<7x33xi1>, tensor<7x33xf32>, tensor<7x33xf32>
  %8 = kiln.exp %b : tensor<33xf32>
  %9 = kiln.div %7, %8 : tensor<7x33xf32>, tensor<33xf32>
  %10 = kiln.cast %c : tensor<7x1xbf16> to tensor<7x1xf32>
  %11 = kiln.mul %9, %10 : tensor<7x33xf32>, tensor<7x1xf32>
  %12 = kiln.abs %a : tensor<7x33xf32>
  %13 = kiln.sqrt %12 : tensor<7x33xf32>
  %14 = kiln.max %11, %13 : tensor<7x33xf32>, tensor<7x33xf32>
  %15 = kiln.silu %14 : tensor<7x33xf32>
  %16 = kiln.cast %15 : tensor<7x33xf32> to tensor<7x33xbf16>
  return %15, %16 : tensor<7x33xf32>, tensor<7x33xbf16>
}
