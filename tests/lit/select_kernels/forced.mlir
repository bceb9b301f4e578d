// A kiln_cuda.kernel already on a fusion is a forced choice: checked against
// the fusion and the target, and kept.
// RUN: kiln-opt %s --kiln-select-kernels | FileCheck %s
// RUN: not kiln-opt %s --kiln-select-kernels=arch=sm_80 2>&1 | FileCheck %s --check-prefix=SM80
// RUN: not kiln-opt %S/Inputs/bad_kernels.mlir --split-input-file --kiln-select-kernels 2>&1 | FileCheck %s --check-prefix=BAD

// CHECK-LABEL: func.func @forced_mma
// CHECK: kiln_cuda.kernel = #kiln_cuda.gemm<mma, tile = 64x64x32, stages = 4, split = 2>
// CHECK-LABEL: func.func @forced_cluster
// CHECK: kiln_cuda.kernel = #kiln_cuda.gemm<tma, tile = 128x256x64, stages = 4, cluster = 2, tma_store>

func.func @forced_mma(%x: tensor<1024x1024xbf16>, %w: tensor<1024x1024xbf16>,
             %b: tensor<1024xbf16>) -> tensor<1024x1024xbf16> {
  %0 = kiln.fusion "gemm" (%x, %w, %b) {kiln_cuda.kernel = #kiln_cuda.gemm<mma, tile = 64x64x32, stages = 4, split = 2>} : (tensor<1024x1024xbf16>, tensor<1024x1024xbf16>, tensor<1024xbf16>) -> tensor<1024x1024xbf16> {
  ^bb0(%a: tensor<1024x1024xbf16>, %c: tensor<1024x1024xbf16>, %d: tensor<1024xbf16>):
    %1 = kiln.matmul %a, %c : tensor<1024x1024xbf16>, tensor<1024x1024xbf16>
    %2 = kiln.add %1, %d : tensor<1024x1024xbf16>, tensor<1024xbf16>
    kiln.yield %2 : tensor<1024x1024xbf16>
  }
  return %0 : tensor<1024x1024xbf16>
}

// On sm_80 the TMA kernel cannot run (the mma tile above still can).
// SM80-NOT: error
// SM80: forced.mlir:[[# @LINE + 4]]:8: error: 'kiln.fusion' op kiln_cuda.kernel: the wgmma kernels need sm_90 and bf16/f16 operands in 16-byte runs
// SM80-NOT: error
func.func @forced_cluster(%x: tensor<1024x1024xbf16>, %w: tensor<1024x1024xbf16>,
             %b: tensor<1024xbf16>) -> tensor<1024x1024xbf16> {
  %0 = kiln.fusion "gemm" (%x, %w, %b) {kiln_cuda.kernel = #kiln_cuda.gemm<tma, tile = 128x256x64, stages = 4, cluster = 2, tma_store>} : (tensor<1024x1024xbf16>, tensor<1024x1024xbf16>, tensor<1024xbf16>) -> tensor<1024x1024xbf16> {
  ^bb0(%a: tensor<1024x1024xbf16>, %c: tensor<1024x1024xbf16>, %d: tensor<1024xbf16>):
    %1 = kiln.matmul %a, %c : tensor<1024x1024xbf16>, tensor<1024x1024xbf16>
    %2 = kiln.add %1, %d : tensor<1024x1024xbf16>, tensor<1024xbf16>
    kiln.yield %2 : tensor<1024x1024xbf16>
  }
  return %0 : tensor<1024x1024xbf16>
}

// A conv tile outside the planner's tables (a sweep's) is kept.
// CHECK-LABEL: func.func @forced_conv
// CHECK: kiln_cuda.kernel = #kiln_cuda.conv<mma, tile = 256x64x32, warps = 4x2, stages = 3, blocks_per_sm = 1, split = 2>
func.func @forced_conv(%x: tensor<4x16x16x64xbf16>, %w: tensor<64x3x3x64xbf16>) -> tensor<4x16x16x64xbf16> {
  %0 = kiln.fusion "conv" (%x, %w) {kiln_cuda.kernel = #kiln_cuda.conv<mma, tile = 256x64x32, warps = 4x2, stages = 3, blocks_per_sm = 1, split = 2>} : (tensor<4x16x16x64xbf16>, tensor<64x3x3x64xbf16>) -> tensor<4x16x16x64xbf16> {
  ^bb0(%a: tensor<4x16x16x64xbf16>, %b: tensor<64x3x3x64xbf16>):
    %1 = kiln.conv2d %a, %b layout = nhwc padding = [1, 1, 1, 1] : tensor<4x16x16x64xbf16>, tensor<64x3x3x64xbf16>
    kiln.yield %1 : tensor<4x16x16x64xbf16>
  }
  return %0 : tensor<4x16x16x64xbf16>
}

// Each choice its fusion cannot run is an error at the fusion, as is
// another family's choice.
// BAD: bad_kernels.mlir:{{[0-9]+ offset :3:8}}: error: 'kiln.fusion' op kiln_cuda.kernel: no mma tile 96x64x32 of 4 stages; the kernel's are 128x256x32/4 128x128x32/4 64x64x32/4
// BAD: error: 'kiln.fusion' op kiln_cuda.kernel: no mma tile 64x64x32 of 3 stages
// BAD: error: 'kiln.fusion' op kiln_cuda.kernel: the tf32 and simt kernels multiply f32
// BAD: error: 'kiln.fusion' op kiln_cuda.kernel: split = 24 leaves a split of the 32 K tiles empty
// BAD: error: 'kiln.fusion' op kiln_cuda.kernel: tma_store needs the staged epilogue (one split, N a multiple of 8) of one problem whose first result has the operands' element type
// BAD: error: 'kiln.fusion' op kiln_cuda.kernel: a gemm fusion's kernel is a #kiln_cuda.gemm, got "mma"
// BAD: error: 'kiln.fusion' op kiln_cuda.kernel of 'kiln.tanh': a pointwise fusion's kernel is a #kiln_cuda.pointwise, got #kiln_cuda.gemm<simt, tile = 32x32x8>
// BAD: error: 'kiln.fusion' op kiln_cuda.kernel: a wgmma tile is 64 or 128 rows by 64, 128 or 256 (128 rows) columns by 64
// BAD: error: 'kiln.fusion' op kiln_cuda.kernel: an mma tile is whole 16x16 tiles per warp, BK a multiple of 16
// BAD: error: 'kiln.fusion' op kiln_cuda.kernel: the tf32 kernel multiplies f32
// BAD: error: 'kiln.fusion' op kiln_cuda.kernel: the TMA kernel takes two to eight stages
// BAD: error: 'kiln.fusion' op kiln_cuda.kernel: the tile's 589824 bytes of shared memory exceed the 232448 of sm_90
// BAD: error: 'kiln.fusion' op kiln_cuda.kernel: split = 17 leaves a split of the 18 K tiles empty
// BAD: error: 'kiln.fusion' op kiln_cuda.kernel: a conv fusion's kernel is a #kiln_cuda.conv, got #kiln_cuda.gemm<mma, tile = 64x64x32, stages = 4>
// BAD: error: 'kiln.fusion' op kiln_cuda.kernel: a depthwise convolution runs the direct kernels, #kiln_cuda.conv<depthwise>
