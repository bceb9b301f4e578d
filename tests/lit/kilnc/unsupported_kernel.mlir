// An op without a GPU kernel is reported at the user's own op, with the kind
// of kernel it needs, and without compiler-internal IR.
// RUN: not kilnc %s --train=sgd -o %t.kiln 2>&1 | FileCheck %s
// RUN: not test -e %t.kiln
// CHECK: unsupported_kernel.mlir:[[@LINE+7]]:8: error: no GPU kernel for 'kiln.conv2d' yet: it needs a convolution kernel
// CHECK-NOT: UNKNOWN SSA VALUE
// CHECK-NOT: see current operation
// CHECK-NOT: kiln.fusion
func.func @loss(%x: tensor<2x3x9x9xf32> {kiln.name = "x"},
                %f: tensor<4x3x3x3xf32> {kiln.param = #kiln.init<normal, std = 0.1>, kiln.name = "f"},
                %b: tensor<4xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "b"}) -> tensor<f32> {
  %y = kiln.conv2d %x, %f, %b layout = nchw stride = [2, 2] padding = [1, 1, 1, 1] : tensor<2x3x9x9xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>
  %loss = kiln.reduce_mean %y dims = [0, 1, 2, 3] : tensor<2x4x5x5xf32>
  return %loss : tensor<f32>
}
