// A forced choice is an edit of the IR: kilnc --emit=mlir plans the model,
// kiln-opt --kiln-select-kernels records the planner's kernels, an edit
// replaces them, and kilnc --planned checks and generates the edited
// module's kernels as they are recorded.
// RUN: kilnc %s --inference --function f --emit=mlir -o %t.planned.mlir
// RUN: kiln-opt %t.planned.mlir --kiln-select-kernels -o %t.auto.mlir
// RUN: kilnc %t.auto.mlir --planned --emit=cuda -o %t.auto.cu
// RUN: kilnc %s --inference --function f --emit=cuda -o %t.direct.cu
// RUN: diff %t.auto.cu %t.direct.cu
// RUN: sed -e 's/#kiln_cuda.gemm<[^>]*>/#kiln_cuda.gemm<mma, tile = 64x64x32, stages = 4, split = 2>/' -e 's/#kiln_cuda.conv<[^>]*>/#kiln_cuda.conv<mma, tile = 64x128x32, warps = 2x2, stages = 3, blocks_per_sm = 2, split = 3>/' %t.auto.mlir > %t.forced.mlir
// RUN: kilnc %t.forced.mlir --planned --emit=cuda -o %t.forced.cu
// RUN: FileCheck %s < %t.forced.cu
// RUN: sed -e 's/#kiln_cuda.gemm<[^>]*>/#kiln_cuda.gemm<mma, tile = 64x64x32, stages = 4, split = 5>/' %t.auto.mlir > %t.bad.mlir
// RUN: not kilnc %t.bad.mlir --planned -o %t.bad.kiln 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not kilnc %t.auto.mlir --planned --inference -o %t.kiln 2>&1 | FileCheck %s --check-prefix=FLAGS

// CHECK: ===== kiln_gemm
// CHECK: static constexpr int BM = 64, BN = 64, BK = 32;
// CHECK: static constexpr int SPLIT = 2,
// CHECK: ===== kiln_gemm_splitk
// CHECK: ===== kiln_conv
// CHECK: static constexpr int BM = 64, BN = 128, BK = 32;
// CHECK: static constexpr int WARPS_M = 2, WARPS_N = 2, STAGES = 3;
// CHECK: static constexpr int SPLIT = 3,
// CHECK: ===== kiln_conv_split_sum

// BAD: bad.mlir:{{[0-9]+}}:{{[0-9]+}}: error: 'kiln.fusion' op kiln_cuda.kernel: split = 5 leaves a split of the 4 K tiles empty
// FLAGS: kilnc: error: --inference sets the pipeline, which --planned skips: the module is already planned
func.func @f(%x: tensor<256x128xbf16> {kiln.name = "x"},
             %w: tensor<128x256xbf16> {kiln.name = "w"},
             %i: tensor<4x16x16x64xbf16> {kiln.name = "i"},
             %k: tensor<64x3x3x64xbf16> {kiln.name = "k"})
    -> (tensor<256x256xbf16> {kiln.name = "y"}, tensor<4x16x16x64xbf16> {kiln.name = "c"}) {
  %y = kiln.matmul %x, %w : tensor<256x128xbf16>, tensor<128x256xbf16>
  %c = kiln.conv2d %i, %k layout = nhwc padding = [1, 1, 1, 1] : tensor<4x16x16x64xbf16>, tensor<64x3x3x64xbf16>
  return %y, %c : tensor<256x256xbf16>, tensor<4x16x16x64xbf16>
}
