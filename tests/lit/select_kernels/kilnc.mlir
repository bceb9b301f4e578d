// kilnc selects the kernels before generating them:
// --mlir-print-ir-after=kiln-select-kernels shows each choice, and the
// generated kernel is the one chosen.
// RUN: kilnc %s --inference --function f --emit=cuda -o %t.cu --mlir-print-ir-after=kiln-select-kernels 2>&1 | FileCheck %s --check-prefix=IR
// RUN: FileCheck %s --check-prefix=CUDA < %t.cu

// IR: IR Dump After KilnSelectKernels
// IR: kiln.fusion "gemm"{{.*}}kiln_cuda.kernel = #kiln_cuda.gemm<tma, tile = 128x128x64, stages = 6, pingpong>
// CUDA: static constexpr int BM = 128, BN = 128, BK = 64;
// CUDA: static constexpr bool PINGPONG = true;
func.func @f(%x: tensor<2048x1024xbf16> {kiln.name = "x"},
             %w: tensor<1024x2048xbf16> {kiln.name = "w"},
             %b: tensor<2048xbf16> {kiln.name = "b"})
    -> (tensor<2048x2048xbf16> {kiln.name = "y"}) {
  %0 = kiln.matmul %x, %w : tensor<2048x1024xbf16>, tensor<1024x2048xbf16>
  %1 = kiln.add %0, %b : tensor<2048x2048xbf16>, tensor<2048xbf16>
  return %1 : tensor<2048x2048xbf16>
}
