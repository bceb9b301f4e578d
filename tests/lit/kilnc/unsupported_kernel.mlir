// An op without a GPU kernel is reported at the user's own op, with the kind
// of kernel it needs, and without compiler-internal IR.
// RUN: not kilnc %s --train=sgd -o %t.kiln 2>&1 | FileCheck %s
// RUN: not test -e %t.kiln
// CHECK: unsupported_kernel.mlir:[[@LINE+8]]:17: error: no GPU kernel for 'kiln.rnn' yet: it needs a recurrent kernel
// CHECK-NOT: UNKNOWN SSA VALUE
// CHECK-NOT: see current operation
// CHECK-NOT: kiln.fusion
func.func @loss(%wx: tensor<2x5x4x1x8xf32> {kiln.name = "wx"},
                %r: tensor<4x1x8x8xf32> {kiln.param = #kiln.init<normal, std = 0.1>, kiln.name = "r"},
                %b: tensor<4x1x8xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "b"},
                %s0: tensor<2x2x1x8xf32> {kiln.name = "s0"}) -> tensor<f32> {
  %all, %last = kiln.rnn %wx, %r, %b, %s0 function = lstm : tensor<2x5x4x1x8xf32>, tensor<4x1x8x8xf32>, tensor<4x1x8xf32>, tensor<2x2x1x8xf32>
  %loss = kiln.reduce_mean %last dims = [0, 1, 2, 3] : tensor<2x2x1x8xf32>
  return %loss : tensor<f32>
}
