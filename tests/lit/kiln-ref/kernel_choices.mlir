// kilnc records the kernel it chose on each fusion (#kiln_cuda.gemm<...>);
// kiln-ref runs the module kilnc printed before code generation as it
// stands, as the graph fuzzer does.
// RUN: kilnc %s --inference --emit=cuda -o %t.cu --mlir-print-ir-before=kiln-emit-cuda 2> %t.mlir
// RUN: FileCheck %s --check-prefix=CHOICE < %t.mlir
// RUN: kiln-ref %t.mlir --function forward --random-seed 1 --init-params --precision f64 --print \
// RUN:   | FileCheck %s

// CHOICE: kiln.fusion "gemm" {{.*}}kiln_cuda.kernel = #kiln_cuda.gemm<
// CHECK: loss: tensor<f32> = [
func.func @loss(
    %x: tensor<2x3xf32> {kiln.name = "x"},
    %w: tensor<3x2xf32> {kiln.param = #kiln.init<constant, value = 0.5>, kiln.name = "w"}) -> (tensor<f32> {kiln.name = "loss"}) {
  %y = kiln.matmul %x, %w : tensor<2x3xf32>, tensor<3x2xf32>
  %l = kiln.reduce_sum %y dims = [0, 1] : tensor<2x2xf32>
  return %l : tensor<f32>
}
