// Exact f32 GEMMs of the shapes a training step produces.
// - dw, dw_out: weight gradients over all 128 rows of a [4, 32] batch
//   (transposed lhs), small and deep: K slices within one block.
func.func @f(%x: tensor<128x64xf32> {kiln.name = "x"}, %dy: tensor<128x64xf32> {kiln.name = "dy"},
             %dp: tensor<128x1xf32> {kiln.name = "dp"})
    -> (tensor<64x64xf32> {kiln.name = "dw"}, tensor<64x1xf32> {kiln.name = "dw_out"}) {
  %0 = kiln.matmul %x, %dy transpose_lhs : tensor<128x64xf32>, tensor<128x64xf32>
  %1 = kiln.matmul %x, %dp transpose_lhs : tensor<128x64xf32>, tensor<128x1xf32>
  return %0, %1 : tensor<64x64xf32>, tensor<64x1xf32>
}
