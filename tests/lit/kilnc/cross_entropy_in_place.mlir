// Logits that die in the loss kernel are overwritten by their gradient: the
// training step's cross entropy fusion writes d(logits) to the logits' bytes.
// RUN: kilnc %s --train=sgd --emit=mlir -o - | FileCheck %s
// CHECK-LABEL: func.func @forward_backward
// CHECK: kiln.fusion "gemm" (%arg1, %arg0) {kiln.buffers = [{buffer = "arena", offset = [[OFF:[0-9]+]] : i64, size = 32768 : i64}]}
// CHECK: kiln.fusion "reduction" ({{.*}}) {kiln.buffers = [{{.*}}, {buffer = "arena", offset = [[OFF]] : i64, size = 32768 : i64}]}
func.func @loss(
    %w: tensor<64x512xf32> {kiln.param = #kiln.init<normal, std = 0.2>, kiln.name = "w"},
    %x: tensor<16x64xf32> {kiln.name = "x"},
    %labels: tensor<16xi32> {kiln.name = "labels"}) -> tensor<f32> {
  %logits = kiln.matmul %x, %w : tensor<16x64xf32>, tensor<64x512xf32>
  %loss = kiln.cross_entropy %logits, %labels label_smoothing = 0.1 : tensor<16x512xf32>, tensor<16xi32>
  return %loss : tensor<f32>
}
