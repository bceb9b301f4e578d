func.func @not_in_table(%x: tensor<1024x1024xbf16>, %w: tensor<1024x1024xbf16>,
             %b: tensor<1024xbf16>) -> tensor<1024x1024xbf16> {
  %0 = kiln.fusion "gemm" (%x, %w, %b) {kiln_cuda.kernel = #kiln_cuda.gemm<mma, tile = 96x64x32, stages = 4>} : (tensor<1024x1024xbf16>, tensor<1024x1024xbf16>, tensor<1024xbf16>) -> tensor<1024x1024xbf16> {
  ^bb0(%a: tensor<1024x1024xbf16>, %c: tensor<1024x1024xbf16>, %d: tensor<1024xbf16>):
    %1 = kiln.matmul %a, %c : tensor<1024x1024xbf16>, tensor<1024x1024xbf16>
    %2 = kiln.add %1, %d : tensor<1024x1024xbf16>, tensor<1024xbf16>
    kiln.yield %2 : tensor<1024x1024xbf16>
  }
  return %0 : tensor<1024x1024xbf16>
}
// -----
func.func @stages(%x: tensor<1024x1024xbf16>, %w: tensor<1024x1024xbf16>,
             %b: tensor<1024xbf16>) -> tensor<1024x1024xbf16> {
  %0 = kiln.fusion "gemm" (%x, %w, %b) {kiln_cuda.kernel = #kiln_cuda.gemm<mma, tile = 64x64x32, stages = 3>} : (tensor<1024x1024xbf16>, tensor<1024x1024xbf16>, tensor<1024xbf16>) -> tensor<1024x1024xbf16> {
  ^bb0(%a: tensor<1024x1024xbf16>, %c: tensor<1024x1024xbf16>, %d: tensor<1024xbf16>):
    %1 = kiln.matmul %a, %c : tensor<1024x1024xbf16>, tensor<1024x1024xbf16>
    %2 = kiln.add %1, %d : tensor<1024x1024xbf16>, tensor<1024xbf16>
    kiln.yield %2 : tensor<1024x1024xbf16>
  }
  return %0 : tensor<1024x1024xbf16>
}
// -----
func.func @f32_kernel(%x: tensor<1024x1024xbf16>, %w: tensor<1024x1024xbf16>,
             %b: tensor<1024xbf16>) -> tensor<1024x1024xbf16> {
  %0 = kiln.fusion "gemm" (%x, %w, %b) {kiln_cuda.kernel = #kiln_cuda.gemm<simt, tile = 128x128x8>} : (tensor<1024x1024xbf16>, tensor<1024x1024xbf16>, tensor<1024xbf16>) -> tensor<1024x1024xbf16> {
  ^bb0(%a: tensor<1024x1024xbf16>, %c: tensor<1024x1024xbf16>, %d: tensor<1024xbf16>):
    %1 = kiln.matmul %a, %c : tensor<1024x1024xbf16>, tensor<1024x1024xbf16>
    %2 = kiln.add %1, %d : tensor<1024x1024xbf16>, tensor<1024xbf16>
    kiln.yield %2 : tensor<1024x1024xbf16>
  }
  return %0 : tensor<1024x1024xbf16>
}
// -----
func.func @empty_split(%x: tensor<1024x1024xbf16>, %w: tensor<1024x1024xbf16>,
             %b: tensor<1024xbf16>) -> tensor<1024x1024xbf16> {
  %0 = kiln.fusion "gemm" (%x, %w, %b) {kiln_cuda.kernel = #kiln_cuda.gemm<mma, tile = 64x64x32, stages = 4, split = 24>} : (tensor<1024x1024xbf16>, tensor<1024x1024xbf16>, tensor<1024xbf16>) -> tensor<1024x1024xbf16> {
  ^bb0(%a: tensor<1024x1024xbf16>, %c: tensor<1024x1024xbf16>, %d: tensor<1024xbf16>):
    %1 = kiln.matmul %a, %c : tensor<1024x1024xbf16>, tensor<1024x1024xbf16>
    %2 = kiln.add %1, %d : tensor<1024x1024xbf16>, tensor<1024xbf16>
    kiln.yield %2 : tensor<1024x1024xbf16>
  }
  return %0 : tensor<1024x1024xbf16>
}
// -----
func.func @pingpong_split(%x: tensor<1024x1024xbf16>, %w: tensor<1024x1024xbf16>,
             %b: tensor<1024xbf16>) -> tensor<1024x1024xbf16> {
  %0 = kiln.fusion "gemm" (%x, %w, %b) {kiln_cuda.kernel = #kiln_cuda.gemm<tma, tile = 128x128x64, stages = 6, pingpong, split = 2, tma_store>} : (tensor<1024x1024xbf16>, tensor<1024x1024xbf16>, tensor<1024xbf16>) -> tensor<1024x1024xbf16> {
  ^bb0(%a: tensor<1024x1024xbf16>, %c: tensor<1024x1024xbf16>, %d: tensor<1024xbf16>):
    %1 = kiln.matmul %a, %c : tensor<1024x1024xbf16>, tensor<1024x1024xbf16>
    %2 = kiln.add %1, %d : tensor<1024x1024xbf16>, tensor<1024xbf16>
    kiln.yield %2 : tensor<1024x1024xbf16>
  }
  return %0 : tensor<1024x1024xbf16>
}
// -----
func.func @not_gemm(%x: tensor<1024x1024xbf16>, %w: tensor<1024x1024xbf16>,
             %b: tensor<1024xbf16>) -> tensor<1024x1024xbf16> {
  %0 = kiln.fusion "gemm" (%x, %w, %b) {kiln_cuda.kernel = "mma"} : (tensor<1024x1024xbf16>, tensor<1024x1024xbf16>, tensor<1024xbf16>) -> tensor<1024x1024xbf16> {
  ^bb0(%a: tensor<1024x1024xbf16>, %c: tensor<1024x1024xbf16>, %d: tensor<1024xbf16>):
    %1 = kiln.matmul %a, %c : tensor<1024x1024xbf16>, tensor<1024x1024xbf16>
    %2 = kiln.add %1, %d : tensor<1024x1024xbf16>, tensor<1024xbf16>
    kiln.yield %2 : tensor<1024x1024xbf16>
  }
  return %0 : tensor<1024x1024xbf16>
}
// -----
func.func @pointwise(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.fusion "pointwise" (%x) {kiln_cuda.kernel = #kiln_cuda.gemm<simt, tile = 32x32x8>} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %1 = kiln.tanh %a : tensor<4xf32>
    kiln.yield %1 : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}
