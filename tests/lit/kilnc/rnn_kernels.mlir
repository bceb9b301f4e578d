// kiln.rnn and its backward each run as one persistent recurrent kernel;
// the zero initial states and the zero gradient of the unused states stay
// values inside the rnn fusions (no fill kernels, no buffers), and dR and db
// follow the backward kernel as sums of partials.
// RUN: kilnc %s --train=sgd --stats -o %t.kiln 2>&1 | FileCheck %s
// RUN: kilnc %s --train=sgd --emit=mlir -o - | FileCheck %s --check-prefix=IR
// CHECK: rnn_forward [bt=16 u={{[0-9]+}} k=1 ks={{[0-9]+}} sync=block
// CHECK: rnn_backward [bt=16 u={{[0-9]+}} k=1 ks={{[0-9]+}} sync=block
// CHECK: rnn_weight_gradient [
// CHECK: rnn_bias_partials [
// CHECK-NOT: cooperative
// CHECK: entry forward_backward:
// CHECK-NEXT: kiln_mse_loss 1, kiln_pointwise 1, kiln_rnn_backward 1, kiln_rnn_bias 1, kiln_rnn_forward 1, kiln_rnn_sum 2, kiln_rnn_weights 1{{$}}
// IR: kiln.fusion "rnn"
// IR-NEXT: ^bb0
// IR-NEXT: kiln.constant dense<0.000000e+00> : tensor<2x3x2x16xf32>
// IR-NEXT: kiln.rnn
// IR: kiln.fusion "rnn"
// IR: kiln.constant dense<0.000000e+00> : tensor<2x3x5x2x16xf32>
// IR: kiln.rnn_backward
func.func @loss(
    %wx: tensor<3x5x4x2x16xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "wx"},
    %r: tensor<4x2x16x16xf32> {kiln.param = #kiln.init<normal, std = 0.1>, kiln.name = "r"},
    %b: tensor<4x2x16xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "b"},
    %y: tensor<2x3x2x16xf32> {kiln.name = "y"}) -> tensor<f32> {
  %s0 = kiln.constant dense<0.0> : tensor<2x3x2x16xf32>
  %all, %last = kiln.rnn %wx, %r, %b, %s0 function = lstm : tensor<3x5x4x2x16xf32>, tensor<4x2x16x16xf32>, tensor<4x2x16xf32>, tensor<2x3x2x16xf32>
  %loss = kiln.mse_loss %last, %y reduction = mean : tensor<2x3x2x16xf32>
  return %loss : tensor<f32>
}
