// Flash attention: the sine block's causal shape and a non-causal Tq != Tk.
func.func @f(%q: tensor<4x4x32x16xf32> {kiln.name = "q"}, %k: tensor<4x4x32x16xf32> {kiln.name = "k"},
             %v: tensor<4x4x32x16xf32> {kiln.name = "v"},
             %q2: tensor<2x3x45x64xbf16> {kiln.name = "q2"}, %k2: tensor<2x3x70x64xbf16> {kiln.name = "k2"},
             %v2: tensor<2x3x70x64xbf16> {kiln.name = "v2"})
    -> (tensor<4x4x32x16xf32> {kiln.name = "causal"}, tensor<2x3x45x64xbf16> {kiln.name = "cross"}) {
  %0 = kiln.attention %q, %k, %v causal : tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>
  %1 = kiln.attention %q2, %k2, %v2 : tensor<2x3x45x64xbf16>, tensor<2x3x70x64xbf16>, tensor<2x3x70x64xbf16>
  return %0, %1 : tensor<4x4x32x16xf32>, tensor<2x3x45x64xbf16>
}
