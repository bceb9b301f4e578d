// Products with one result column or row (N = 1 or M = 1, K > 1), which
// kilnc computes as reductions instead of GEMM tiles: every orientation of
// the matrix and the vector, batched with broadcasting, a dot product, bf16
// storage (f32 products and sums, one rounding) and f32.
func.func @f(%a: tensor<4x50x300xbf16> {kiln.name = "a"}, %v: tensor<300x1xbf16> {kiln.name = "v"},
             %b: tensor<300x50xf32> {kiln.name = "b"}, %r: tensor<1x300xf32> {kiln.name = "r"},
             %m: tensor<300x70xf32> {kiln.name = "m"},
             %c: tensor<2x300x1xbf16> {kiln.name = "c"}, %n: tensor<70x300xbf16> {kiln.name = "n"},
             %d: tensor<300x1xf32> {kiln.name = "d"})
    -> (tensor<4x50x1xbf16> {kiln.name = "column"}, tensor<50x1xf32> {kiln.name = "column_t"},
        tensor<1x70xf32> {kiln.name = "row"}, tensor<2x1x70xbf16> {kiln.name = "row_t"},
        tensor<1x1xf32> {kiln.name = "dot"}) {
  %0 = kiln.matmul %a, %v : tensor<4x50x300xbf16>, tensor<300x1xbf16>
  %1 = kiln.matmul %b, %r transpose_lhs transpose_rhs : tensor<300x50xf32>, tensor<1x300xf32>
  %2 = kiln.matmul %r, %m : tensor<1x300xf32>, tensor<300x70xf32>
  %3 = kiln.matmul %c, %n transpose_lhs transpose_rhs : tensor<2x300x1xbf16>, tensor<70x300xbf16>
  %4 = kiln.matmul %r, %d : tensor<1x300xf32>, tensor<300x1xf32>
  return %0, %1, %2, %3, %4
      : tensor<4x50x1xbf16>, tensor<50x1xf32>, tensor<1x70xf32>, tensor<2x1x70xbf16>, tensor<1x1xf32>
}
