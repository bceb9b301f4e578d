// LSTM layer, 1 head x 768 (hidden 768), B16 T1024, bf16: one kiln.rnn
// in FlashRNN's layouts (wx [B,T,Gw,NH,D], r [Gr,NH,D,D], b [Gb,NH,D],
// states [S,B,NH,D]), the input projection wx computed outside the layer.
// Compiled with `kilnc --train=sgd` (function loss), the artifact has the
// two entries bench/run.py times:
//  - rnn: the forward pass, every state after every step and the last
//    states (inputs wx, r, b, s0);
//  - forward_backward: the loss, the sum of every state after every step,
//    and its gradients with respect to wx, r and b (inputs s0; wx, r and b
//    are the parameters, loaded with kiln-run --params), so that the
//    backward pass gets the gradient of all states and returns the input
//    projection's gradient as FlashRNN's and cuDNN's backward passes do.
// run.py draws the tensors (wx and b normal, r normal / sqrt(D), s0 zeros).
func.func @rnn(%wx: tensor<16x1024x4x1x768xbf16> {kiln.name = "wx"},
               %r: tensor<4x1x768x768xbf16> {kiln.name = "r"},
               %b: tensor<4x1x768xbf16> {kiln.name = "b"},
               %s0: tensor<2x16x1x768xbf16> {kiln.name = "s0"})
    -> (tensor<2x16x1024x1x768xbf16> {kiln.name = "states"}, tensor<2x16x1x768xbf16> {kiln.name = "last"}) {
  %all, %last = kiln.rnn %wx, %r, %b, %s0 function = lstm
      : tensor<16x1024x4x1x768xbf16>, tensor<4x1x768x768xbf16>, tensor<4x1x768xbf16>, tensor<2x16x1x768xbf16>
  return %all, %last : tensor<2x16x1024x1x768xbf16>, tensor<2x16x1x768xbf16>
}

func.func @loss(%wx: tensor<16x1024x4x1x768xbf16> {kiln.param = #kiln.init<normal, std = 1.0>, kiln.name = "wx"},
                %r: tensor<4x1x768x768xbf16> {kiln.param = #kiln.init<normal, std = 0.036084>, kiln.name = "r"},
                %b: tensor<4x1x768xbf16> {kiln.param = #kiln.init<normal, std = 1.0>, kiln.name = "b"},
                %s0: tensor<2x16x1x768xbf16> {kiln.name = "s0"}) -> tensor<bf16> {
  %all, %last = kiln.rnn %wx, %r, %b, %s0 function = lstm
      : tensor<16x1024x4x1x768xbf16>, tensor<4x1x768x768xbf16>, tensor<4x1x768xbf16>, tensor<2x16x1x768xbf16>
  %l = kiln.reduce_sum %all dims = [0, 1, 2, 3, 4] : tensor<2x16x1024x1x768xbf16>
  return %l : tensor<bf16>
}
