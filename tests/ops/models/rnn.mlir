// kiln.rnn (LSTM) with recurrent and bias parameters.
// gpu-tolerance: 1e-3 1e-4
func.func @loss(
    %wx: tensor<2x5x4x1x8xf32> {kiln.name = "wx"},
    %r: tensor<4x1x8x8xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "r"},
    %b: tensor<4x1x8xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "b"},
    %s0: tensor<2x2x1x8xf32> {kiln.name = "s0"},
    %t: tensor<2x2x5x1x8xf32> {kiln.name = "t"}) -> tensor<f32> {
  %all, %last = kiln.rnn %wx, %r, %b, %s0 function = lstm : tensor<2x5x4x1x8xf32>, tensor<4x1x8x8xf32>, tensor<4x1x8xf32>, tensor<2x2x1x8xf32>
  %loss = kiln.mse_loss %all, %t reduction = mean : tensor<2x2x5x1x8xf32>
  return %loss : tensor<f32>
}
