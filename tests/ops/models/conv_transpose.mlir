// kiln.conv2d_backward_input in the forward pass: a transposed convolution
// (ONNX ConvTranspose) of an input parameter with a filter parameter, NCHW,
// stride 2, uneven padding, groups 2 and a last output row no window of
// the adjoint conv reaches (output_padding 1); its gradients are a conv2d
// and a conv2d_backward_filter.
func.func @loss(
    %x: tensor<2x6x4x5xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "x"},
    %f: tensor<6x2x3x3xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "f"},
    %t: tensor<2x4x10x10xf32> {kiln.name = "t"}) -> tensor<f32> {
  %y = kiln.conv2d_backward_input %x, %f layout = nchw stride = [2, 2] padding = [0, 0, 1, 0] groups = 2
      : tensor<2x6x4x5xf32>, tensor<6x2x3x3xf32> -> tensor<2x4x10x10xf32>
  %loss = kiln.mse_loss %y, %t reduction = mean : tensor<2x4x10x10xf32>
  return %loss : tensor<f32>
}
