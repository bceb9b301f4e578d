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
// -----
func.func @conv_wgmma_shape(%x: tensor<4x16x16x64xbf16>, %w: tensor<64x3x3x64xbf16>) -> tensor<4x16x16x64xbf16> {
  %0 = kiln.fusion "conv" (%x, %w) {kiln_cuda.kernel = #kiln_cuda.conv<wgmma, tile = 96x64x64, stages = 4, blocks_per_sm = 1>} : (tensor<4x16x16x64xbf16>, tensor<64x3x3x64xbf16>) -> tensor<4x16x16x64xbf16> {
  ^bb0(%a: tensor<4x16x16x64xbf16>, %b: tensor<64x3x3x64xbf16>):
    %1 = kiln.conv2d %a, %b layout = nhwc padding = [1, 1, 1, 1] : tensor<4x16x16x64xbf16>, tensor<64x3x3x64xbf16>
    kiln.yield %1 : tensor<4x16x16x64xbf16>
  }
  return %0 : tensor<4x16x16x64xbf16>
}
// -----
func.func @conv_warps(%x: tensor<4x16x16x64xbf16>, %w: tensor<64x3x3x64xbf16>) -> tensor<4x16x16x64xbf16> {
  %0 = kiln.fusion "conv" (%x, %w) {kiln_cuda.kernel = #kiln_cuda.conv<mma, tile = 64x64x32, warps = 3x2, stages = 4, blocks_per_sm = 1>} : (tensor<4x16x16x64xbf16>, tensor<64x3x3x64xbf16>) -> tensor<4x16x16x64xbf16> {
  ^bb0(%a: tensor<4x16x16x64xbf16>, %b: tensor<64x3x3x64xbf16>):
    %1 = kiln.conv2d %a, %b layout = nhwc padding = [1, 1, 1, 1] : tensor<4x16x16x64xbf16>, tensor<64x3x3x64xbf16>
    kiln.yield %1 : tensor<4x16x16x64xbf16>
  }
  return %0 : tensor<4x16x16x64xbf16>
}
// -----
func.func @conv_tf32(%x: tensor<4x16x16x64xbf16>, %w: tensor<64x3x3x64xbf16>) -> tensor<4x16x16x64xbf16> {
  %0 = kiln.fusion "conv" (%x, %w) {kiln_cuda.kernel = #kiln_cuda.conv<tf32, tile = 64x64x32, warps = 2x2, stages = 3, blocks_per_sm = 1>} : (tensor<4x16x16x64xbf16>, tensor<64x3x3x64xbf16>) -> tensor<4x16x16x64xbf16> {
  ^bb0(%a: tensor<4x16x16x64xbf16>, %b: tensor<64x3x3x64xbf16>):
    %1 = kiln.conv2d %a, %b layout = nhwc padding = [1, 1, 1, 1] : tensor<4x16x16x64xbf16>, tensor<64x3x3x64xbf16>
    kiln.yield %1 : tensor<4x16x16x64xbf16>
  }
  return %0 : tensor<4x16x16x64xbf16>
}
// -----
func.func @conv_tma_stages(%x: tensor<4x16x16x64xbf16>, %w: tensor<64x3x3x64xbf16>) -> tensor<4x16x16x64xbf16> {
  %0 = kiln.fusion "conv" (%x, %w) {kiln_cuda.kernel = #kiln_cuda.conv<tma, tile = 128x64x64, stages = 9, blocks_per_sm = 1>} : (tensor<4x16x16x64xbf16>, tensor<64x3x3x64xbf16>) -> tensor<4x16x16x64xbf16> {
  ^bb0(%a: tensor<4x16x16x64xbf16>, %b: tensor<64x3x3x64xbf16>):
    %1 = kiln.conv2d %a, %b layout = nhwc padding = [1, 1, 1, 1] : tensor<4x16x16x64xbf16>, tensor<64x3x3x64xbf16>
    kiln.yield %1 : tensor<4x16x16x64xbf16>
  }
  return %0 : tensor<4x16x16x64xbf16>
}
// -----
func.func @conv_shared(%x: tensor<4x16x16x64xbf16>, %w: tensor<64x3x3x64xbf16>) -> tensor<4x16x16x64xbf16> {
  %0 = kiln.fusion "conv" (%x, %w) {kiln_cuda.kernel = #kiln_cuda.conv<mma, tile = 256x256x64, warps = 4x4, stages = 8, blocks_per_sm = 1>} : (tensor<4x16x16x64xbf16>, tensor<64x3x3x64xbf16>) -> tensor<4x16x16x64xbf16> {
  ^bb0(%a: tensor<4x16x16x64xbf16>, %b: tensor<64x3x3x64xbf16>):
    %1 = kiln.conv2d %a, %b layout = nhwc padding = [1, 1, 1, 1] : tensor<4x16x16x64xbf16>, tensor<64x3x3x64xbf16>
    kiln.yield %1 : tensor<4x16x16x64xbf16>
  }
  return %0 : tensor<4x16x16x64xbf16>
}
// -----
func.func @conv_split(%x: tensor<4x16x16x64xbf16>, %w: tensor<64x3x3x64xbf16>) -> tensor<4x16x16x64xbf16> {
  %0 = kiln.fusion "conv" (%x, %w) {kiln_cuda.kernel = #kiln_cuda.conv<mma, tile = 64x64x32, warps = 2x2, stages = 4, blocks_per_sm = 1, split = 17>} : (tensor<4x16x16x64xbf16>, tensor<64x3x3x64xbf16>) -> tensor<4x16x16x64xbf16> {
  ^bb0(%a: tensor<4x16x16x64xbf16>, %b: tensor<64x3x3x64xbf16>):
    %1 = kiln.conv2d %a, %b layout = nhwc padding = [1, 1, 1, 1] : tensor<4x16x16x64xbf16>, tensor<64x3x3x64xbf16>
    kiln.yield %1 : tensor<4x16x16x64xbf16>
  }
  return %0 : tensor<4x16x16x64xbf16>
}
// -----
func.func @conv_gemm_attr(%x: tensor<4x16x16x64xbf16>, %w: tensor<64x3x3x64xbf16>) -> tensor<4x16x16x64xbf16> {
  %0 = kiln.fusion "conv" (%x, %w) {kiln_cuda.kernel = #kiln_cuda.gemm<mma, tile = 64x64x32, stages = 4>} : (tensor<4x16x16x64xbf16>, tensor<64x3x3x64xbf16>) -> tensor<4x16x16x64xbf16> {
  ^bb0(%a: tensor<4x16x16x64xbf16>, %b: tensor<64x3x3x64xbf16>):
    %1 = kiln.conv2d %a, %b layout = nhwc padding = [1, 1, 1, 1] : tensor<4x16x16x64xbf16>, tensor<64x3x3x64xbf16>
    kiln.yield %1 : tensor<4x16x16x64xbf16>
  }
  return %0 : tensor<4x16x16x64xbf16>
}
// -----
func.func @depthwise(%x: tensor<2x8x8x16xbf16>, %w: tensor<16x3x3x1xbf16>) -> tensor<2x8x8x16xbf16> {
  %0 = kiln.fusion "conv" (%x, %w) {kiln_cuda.kernel = #kiln_cuda.conv<mma, tile = 64x64x32, warps = 2x2, stages = 4, blocks_per_sm = 1>} : (tensor<2x8x8x16xbf16>, tensor<16x3x3x1xbf16>) -> tensor<2x8x8x16xbf16> {
  ^bb0(%a: tensor<2x8x8x16xbf16>, %b: tensor<16x3x3x1xbf16>):
    %1 = kiln.conv2d %a, %b layout = nhwc padding = [1, 1, 1, 1] groups = 16 : tensor<2x8x8x16xbf16>, tensor<16x3x3x1xbf16>
    kiln.yield %1 : tensor<2x8x8x16xbf16>
  }
  return %0 : tensor<2x8x8x16xbf16>
}
