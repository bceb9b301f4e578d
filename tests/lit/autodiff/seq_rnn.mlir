// RUN: kiln-opt %s --kiln-autodiff=function=lstm_last | FileCheck %s --check-prefix=LSTM
// RUN: kiln-opt %s --kiln-autodiff=function=gru_both | FileCheck %s --check-prefix=GRU

// Only the last states reach the loss: the gradient of all states is zeros.
// LSTM-LABEL: func.func @lstm_last_grad
// LSTM-SAME: -> (tensor<f32> {kiln.name = "loss"}, tensor<2x3x4x2x5xf32> {kiln.name = "grad.wx"}, tensor<4x2x5x5xf32> {kiln.name = "grad.r"}, tensor<4x2x5xf32> {kiln.name = "grad.b"}, tensor<2x2x2x5xf32> {kiln.name = "grad.s0"})
// LSTM: %[[ALL:.*]], %[[LAST:.*]] = kiln.rnn %[[X:.*]], %[[R:.*]], %[[B:.*]], %[[S0:[^ ]*]] function = lstm
// LSTM: %[[E:.*]] = kiln.exp %[[LAST]] : tensor<2x2x2x5xf32>
// LSTM: %[[DLAST:.*]] = kiln.mul %{{.*}}, %[[E]]
// LSTM: %[[ZERO:.*]] = kiln.constant dense<0.000000e+00> : tensor<2x2x3x2x5xf32>
// LSTM: %[[DX:.*]], %[[DR:.*]], %[[DB:.*]], %[[DS0:.*]] = kiln.rnn_backward %[[X]], %[[R]], %[[B]], %[[S0]], %[[ALL]], %[[ZERO]], %[[DLAST]] function = lstm : tensor<2x3x4x2x5xf32>, tensor<4x2x5x5xf32>, tensor<4x2x5xf32>, tensor<2x2x2x5xf32>, tensor<2x2x3x2x5xf32>
// LSTM: return %{{.*}}, %[[DX]], %[[DR]], %[[DB]], %[[DS0]]
func.func @lstm_last(%wx: tensor<2x3x4x2x5xf32> {kiln.param = #kiln.init<normal, std = 0.1>, kiln.name = "wx"},
                     %r: tensor<4x2x5x5xf32> {kiln.param = #kiln.init<normal, std = 0.1>, kiln.name = "r"},
                     %b: tensor<4x2x5xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "b"},
                     %s0: tensor<2x2x2x5xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "s0"}) -> tensor<f32> {
  %all, %last = kiln.rnn %wx, %r, %b, %s0 function = lstm
      : tensor<2x3x4x2x5xf32>, tensor<4x2x5x5xf32>, tensor<4x2x5xf32>, tensor<2x2x2x5xf32>
  %e = kiln.exp %last : tensor<2x2x2x5xf32>
  %l = kiln.reduce_sum %e dims = [0, 1, 2, 3] : tensor<2x2x2x5xf32>
  return %l : tensor<f32>
}

// Both results reach the loss; only the recurrent weights are parameters,
// and the input projection (an argument that is not differentiated) is still
// an operand of the backward op.
// GRU-LABEL: func.func @gru_both_grad
// GRU-SAME: -> (tensor<f32> {kiln.name = "loss"}, tensor<3x3x4x4xf32> {kiln.name = "grad.r"})
// GRU: %[[ALL:.*]], %[[LAST:.*]] = kiln.rnn %[[X:.*]], %[[R:.*]], %[[B:.*]], %[[S0:[^ ]*]] function = gru
// GRU-DAG: %[[DLAST:.*]] = kiln.mul %{{.*}}, %[[EL:[^ ]*]] : tensor<1x2x3x4xf32>
// GRU-DAG: %[[DALL:.*]] = kiln.mul %{{.*}}, %[[EA:[^ ]*]] : tensor<1x2x5x3x4xf32>
// GRU: %{{.*}}, %[[DR:.*]], %{{.*}}, %{{.*}} = kiln.rnn_backward %[[X]], %[[R]], %[[B]], %[[S0]], %[[ALL]], %[[DALL]], %[[DLAST]] function = gru
// GRU: return %{{.*}}, %[[DR]] : tensor<f32>, tensor<3x3x4x4xf32>
func.func @gru_both(%wx: tensor<2x5x3x3x4xf32>,
                    %r: tensor<3x3x4x4xf32> {kiln.param = #kiln.init<normal, std = 0.1>, kiln.name = "r"},
                    %b: tensor<4x3x4xf32>, %s0: tensor<1x2x3x4xf32>) -> tensor<f32> {
  %all, %last = kiln.rnn %wx, %r, %b, %s0 function = gru
      : tensor<2x5x3x3x4xf32>, tensor<3x3x4x4xf32>, tensor<4x3x4xf32>, tensor<1x2x3x4xf32>
  %ea = kiln.exp %all : tensor<1x2x5x3x4xf32>
  %la = kiln.reduce_sum %ea dims = [0, 1, 2, 3, 4] : tensor<1x2x5x3x4xf32>
  %el = kiln.exp %last : tensor<1x2x3x4xf32>
  %ll = kiln.reduce_sum %el dims = [0, 1, 2, 3] : tensor<1x2x3x4xf32>
  %l = kiln.add %la, %ll : tensor<f32>, tensor<f32>
  return %l : tensor<f32>
}
