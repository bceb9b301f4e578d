// A constant is copied into the element-wise kernel that resizes it, and the
// kernel's resize read its input as a buffer, which a copied constant is
// not: kilnc crashed (an assertion in the scalar emitter). The taps now read
// the constant at their positions. Found by the graph fuzzer
// (tests/fuzz/graph, graph 7:11 of --only kiln.resize,kiln.resize_backward,
// reduced).
// RUN: kilnc %s --inference --emit=cuda -o - | FileCheck %s
// RUN: kilnc %s --train=sgd --emit=cuda -o %t.cu
// RUN: kilnc %s --train=adamw --precision=bf16 --emit=cuda -o %t.bf16.cu

// CHECK: kiln fusion "pointwise": constant x2, resize x2
// CHECK: kiln::resize::nearest_index(
// CHECK-NEXT: const float [[NEAREST:resize_[0-9]+]] = 0.625f;
// CHECK: kiln::resize::linear_taps(
// CHECK: = [[TABLE:at[0-9]+_const_0]][[[TAP:resize_[0-9]+_1]].i0];
// CHECK-NEXT: = [[TABLE]][[[TAP]].i1];
// CHECK-NOT: kiln_load
// CHECK: kiln_store(r0 + idx,
func.func @loss(
    %p: tensor<f32> {kiln.param = #kiln.init<constant, value = 0.25>, kiln.name = "p"}) -> (tensor<f32> {kiln.name = "loss"}) {
  %c = kiln.constant dense<[[0.5, 1.0, 2.0]]> : tensor<1x3xf32>
  %a = kiln.resize %c mode = linear coordinates = half_pixel scales = [2.0, 2.0] : tensor<1x3xf32> -> tensor<2x6xf32>
  %s = kiln.constant dense<0.625> : tensor<1x1xf32>
  %b = kiln.resize %s mode = nearest coordinates = align_corners scales = [1.0, 3.0] : tensor<1x1xf32> -> tensor<1x1xf32>
  %ra = kiln.reduce_mean %a dims = [0, 1] : tensor<2x6xf32>
  %rb = kiln.reduce_mean %b dims = [0, 1] : tensor<1x1xf32>
  %r = kiln.add %ra, %rb : tensor<f32>, tensor<f32>
  %l = kiln.mul %p, %r : tensor<f32>, tensor<f32>
  return %l : tensor<f32>
}
