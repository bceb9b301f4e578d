// Matmul with a fused bias + GELU epilogue, batched with transposes, bf16;
// two bf16 projections of one input in one grouped launch; the sum of two
// bf16 products with K tails (one product over the concatenated K).
func.func @f(%x: tensor<4x32x64xf32> {kiln.name = "x"}, %w: tensor<64x256xf32> {kiln.name = "w"},
             %bias: tensor<256xf32> {kiln.name = "bias"},
             %a: tensor<3x96x130xbf16> {kiln.name = "a"}, %b: tensor<70x96xbf16> {kiln.name = "b"},
             %h: tensor<200x96xbf16> {kiln.name = "h"}, %w1: tensor<96x72xbf16> {kiln.name = "w1"},
             %w2: tensor<96x72xbf16> {kiln.name = "w2"},
             %e1: tensor<100x70xbf16> {kiln.name = "e1"}, %v1: tensor<72x70xbf16> {kiln.name = "v1"},
             %e2: tensor<100x70xbf16> {kiln.name = "e2"}, %v2: tensor<72x70xbf16> {kiln.name = "v2"})
    -> (tensor<4x32x256xf32> {kiln.name = "mlp"}, tensor<3x130x70xbf16> {kiln.name = "bt"},
        tensor<200x72xbf16> {kiln.name = "p1"}, tensor<200x72xbf16> {kiln.name = "p2"},
        tensor<100x72xbf16> {kiln.name = "sum"}) {
  %0 = kiln.matmul %x, %w : tensor<4x32x64xf32>, tensor<64x256xf32>
  %1 = kiln.add %0, %bias : tensor<4x32x256xf32>, tensor<256xf32>
  %2 = kiln.gelu %1 approximate = tanh : tensor<4x32x256xf32>
  %3 = kiln.matmul %a, %b transpose_lhs transpose_rhs : tensor<3x96x130xbf16>, tensor<70x96xbf16>
  %4 = kiln.matmul %h, %w1 : tensor<200x96xbf16>, tensor<96x72xbf16>
  %5 = kiln.matmul %h, %w2 : tensor<200x96xbf16>, tensor<96x72xbf16>
  %6 = kiln.matmul %e1, %v1 transpose_rhs : tensor<100x70xbf16>, tensor<72x70xbf16>
  %7 = kiln.matmul %e2, %v2 transpose_rhs : tensor<100x70xbf16>, tensor<72x70xbf16>
  %8 = kiln.add %6, %7 : tensor<100x72xbf16>, tensor<100x72xbf16>
  return %2, %3, %4, %5, %8
      : tensor<4x32x256xf32>, tensor<3x130x70xbf16>, tensor<200x72xbf16>, tensor<200x72xbf16>,
        tensor<100x72xbf16>
}
