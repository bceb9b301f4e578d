// Products large enough for the sm_90a warpgroup-MMA kernel: every operand
// layout, bf16 and f16, M/N/K tails (multiples of 8), split K, broadcast and
// folded batches, fused bias, GELU, residual and casts.
func.func @f(%x1: tensor<200x136xbf16> {kiln.name = "x1"}, %w1: tensor<136x264xbf16> {kiln.name = "w1"},
             %b1: tensor<264xbf16> {kiln.name = "b1"},
             %a2: tensor<136x200xf16> {kiln.name = "a2"}, %w2: tensor<264x136xf16> {kiln.name = "w2"},
             %x3: tensor<256x1024xbf16> {kiln.name = "x3"}, %w3: tensor<384x1024xbf16> {kiln.name = "w3"},
             %r3: tensor<256x384xbf16> {kiln.name = "r3"},
             %x4: tensor<128x4096xbf16> {kiln.name = "x4"}, %w4: tensor<4096x128xbf16> {kiln.name = "w4"},
             %x5: tensor<2x3x136x128xbf16> {kiln.name = "x5"}, %w5: tensor<3x128x256xbf16> {kiln.name = "w5"},
             %x6: tensor<4x64x256xf16> {kiln.name = "x6"}, %w6: tensor<256x128xf16> {kiln.name = "w6"},
             %a7: tensor<256x1152xf16> {kiln.name = "a7"}, %w7: tensor<2040x256xf16> {kiln.name = "w7"},
             %x8: tensor<1032x264xbf16> {kiln.name = "x8"}, %w8: tensor<264x2048xbf16> {kiln.name = "w8"},
             %b8: tensor<2048xbf16> {kiln.name = "b8"})
    -> (tensor<200x264xbf16> {kiln.name = "y1"}, tensor<200x264xf16> {kiln.name = "y2"},
        tensor<256x384xbf16> {kiln.name = "y3"}, tensor<128x128xbf16> {kiln.name = "y4"},
        tensor<2x3x136x256xbf16> {kiln.name = "y5"}, tensor<4x64x128xf32> {kiln.name = "y6"},
        tensor<1152x2040xf16> {kiln.name = "y7"}, tensor<1032x2048xbf16> {kiln.name = "y8"}) {
  // A [M][K], B [K][N] (N-major, wgmma's transposed B); K = 136 ends inside
  // the third 64-deep tile; M and N end inside tiles.
  %0 = kiln.matmul %x1, %w1 : tensor<200x136xbf16>, tensor<136x264xbf16>
  %1 = kiln.add %0, %b1 : tensor<200x264xbf16>, tensor<264xbf16>
  %y1 = kiln.gelu %1 approximate = tanh : tensor<200x264xbf16>
  // A [K][M] (M-major), B [N][K] (K-major), f16.
  %y2 = kiln.matmul %a2, %w2 transpose_lhs transpose_rhs : tensor<136x200xf16>, tensor<264x136xf16>
  // A [M][K], B [N][K], plus a residual.
  %2 = kiln.matmul %x3, %w3 transpose_rhs : tensor<256x1024xbf16>, tensor<384x1024xbf16>
  %y3 = kiln.add %2, %r3 : tensor<256x384xbf16>, tensor<256x384xbf16>
  // One output tile, deep K: split K.
  %y4 = kiln.matmul %x4, %w4 : tensor<128x4096xbf16>, tensor<4096x128xbf16>
  // Batches [2, 3] against a rhs broadcast over the first.
  %y5 = kiln.matmul %x5, %w5 : tensor<2x3x136x128xbf16>, tensor<3x128x256xbf16>
  // A shared rhs: the batch folds into 256 rows; the result widened to f32.
  %3 = kiln.matmul %x6, %w6 : tensor<4x64x256xf16>, tensor<256x128xf16>
  %y6 = kiln.cast %3 : tensor<4x64x128xf16> to tensor<4x64x128xf32>
  // Enough tiles for the 128x256 tile: M-major A, K-major B, an N tail.
  %y7 = kiln.matmul %a7, %w7 transpose_lhs transpose_rhs : tensor<256x1152xf16>, tensor<2040x256xf16>
  // The same tile on the benchmark's layout, with M and K tails.
  %4 = kiln.matmul %x8, %w8 : tensor<1032x264xbf16>, tensor<264x2048xbf16>
  %5 = kiln.add %4, %b8 : tensor<1032x2048xbf16>, tensor<2048xbf16>
  %y8 = kiln.gelu %5 approximate = tanh : tensor<1032x2048xbf16>
  return %y1, %y2, %y3, %y4, %y5, %y6, %y7, %y8 : tensor<200x264xbf16>, tensor<200x264xf16>,
      tensor<256x384xbf16>, tensor<128x128xbf16>, tensor<2x3x136x256xbf16>, tensor<4x64x128xf32>,
      tensor<1152x2040xf16>, tensor<1032x2048xbf16>
}
