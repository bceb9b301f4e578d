// kiln.resize is gathered in the element-wise kernels; its gradient is one
// kernel of kernels/resize.cuh per resize (--stats names its view), which
// gathers too: no atomics in the PTX.
// RUN: kilnc %s --train=sgd --no-merge-launches -o %t.kiln --stats 2>&1 | FileCheck %s
// RUN: kilnc %s --train=sgd --no-merge-launches --emit=ptx | FileCheck %s --check-prefix=PTX --implicit-check-not=atom.
// RUN: kilnc %s --train=sgd --emit=cuda | FileCheck %s --check-prefix=CUDA

// CHECK-DAG: resize_backward [nearest asymmetric floor view=6x[4->8]x1x[5->10]x1x[1->1]x1
// CHECK-DAG: resize_backward [linear align_corners view=2x[6->11]x1x[7->13]x1x[1->1]x3
// PTX-DAG: ===== kiln_resize_backward_{{[0-9a-f]+}} =====
// CUDA-DAG: kiln::resize::nearest_index(3, 2, (long long)(
// CUDA-DAG: kiln::resize::linear_taps(2, (long long)(
func.func @loss(
    %x: tensor<2x3x4x5xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "x"},
    %h: tensor<2x6x7x3xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "h"},
    %t: tensor<2x3x8x10xf32> {kiln.name = "t"},
    %u: tensor<2x11x13x3xf32> {kiln.name = "u"}) -> (tensor<f32> {kiln.name = "loss"}) {
  %y = kiln.resize %x mode = nearest coordinates = asymmetric rounding = floor scales = [1.0, 1.0, 2.0, 2.0] : tensor<2x3x4x5xf32> -> tensor<2x3x8x10xf32>
  %z = kiln.resize %h mode = linear coordinates = align_corners scales = [1.0, 2.0, 2.0, 1.0] : tensor<2x6x7x3xf32> -> tensor<2x11x13x3xf32>
  %l1 = kiln.mse_loss %y, %t reduction = mean : tensor<2x3x8x10xf32>
  %l2 = kiln.mse_loss %z, %u reduction = mean : tensor<2x11x13x3xf32>
  %loss = kiln.add %l1, %l2 : tensor<f32>, tensor<f32>
  return %loss : tensor<f32>
}
