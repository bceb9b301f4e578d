// Matmul with a fused bias + GELU epilogue, batched with transposes, bf16.
func.func @f(%x: tensor<4x32x64xf32> {kiln.name = "x"}, %w: tensor<64x256xf32> {kiln.name = "w"},
             %bias: tensor<256xf32> {kiln.name = "bias"},
             %a: tensor<3x96x130xbf16> {kiln.name = "a"}, %b: tensor<70x96xbf16> {kiln.name = "b"})
    -> (tensor<4x32x256xf32> {kiln.name = "mlp"}, tensor<3x130x70xbf16> {kiln.name = "bt"}) {
  %0 = kiln.matmul %x, %w : tensor<4x32x64xf32>, tensor<64x256xf32>
  %1 = kiln.add %0, %bias : tensor<4x32x256xf32>, tensor<256xf32>
  %2 = kiln.gelu %1 approximate = tanh : tensor<4x32x256xf32>
  %3 = kiln.matmul %a, %b transpose_lhs transpose_rhs : tensor<3x96x130xbf16>, tensor<70x96xbf16>
  return %2, %3 : tensor<4x32x256xf32>, tensor<3x130x70xbf16>
}
