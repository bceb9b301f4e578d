// Products with one result column or row (N = 1 or M = 1, K > 1) over a
// matrix of a million elements or more, which kilnc computes as reductions
// instead of GEMM tiles: every orientation of the matrix and the vector,
// batched with broadcasting, bf16 storage (f32 products and sums, one
// rounding) and f32; and a dot product small enough to stay a GEMM.
func.func @f(%a: tensor<4x256x1024xbf16> {kiln.name = "a"}, %v: tensor<1024x1xbf16> {kiln.name = "v"},
             %b: tensor<1024x1024xf32> {kiln.name = "b"}, %r: tensor<1x1024xf32> {kiln.name = "r"},
             %m: tensor<1024x1024xf32> {kiln.name = "m"},
             %c: tensor<2x1024x1xbf16> {kiln.name = "c"}, %n: tensor<1024x1024xbf16> {kiln.name = "n"},
             %d: tensor<1024x1xf32> {kiln.name = "d"})
    -> (tensor<4x256x1xbf16> {kiln.name = "column"}, tensor<1024x1xf32> {kiln.name = "column_t"},
        tensor<1x1024xf32> {kiln.name = "row"}, tensor<2x1x1024xbf16> {kiln.name = "row_t"},
        tensor<1x1xf32> {kiln.name = "dot"}) {
  %0 = kiln.matmul %a, %v : tensor<4x256x1024xbf16>, tensor<1024x1xbf16>
  %1 = kiln.matmul %b, %r transpose_lhs transpose_rhs : tensor<1024x1024xf32>, tensor<1x1024xf32>
  %2 = kiln.matmul %r, %m : tensor<1x1024xf32>, tensor<1024x1024xf32>
  %3 = kiln.matmul %c, %n transpose_lhs transpose_rhs : tensor<2x1024x1xbf16>, tensor<1024x1024xbf16>
  %4 = kiln.matmul %r, %d : tensor<1x1024xf32>, tensor<1024x1xf32>
  return %0, %1, %2, %3, %4
      : tensor<4x256x1xbf16>, tensor<1024x1xf32>, tensor<1x1024xf32>, tensor<2x1x1024xbf16>, tensor<1x1xf32>
}
