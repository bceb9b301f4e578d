// conv2d, NCHW, 3x3/2, 128->128, 56² (ResNet-50), N32 bf16:
// x [32, 128, 56, 56], w [128, 128, 3, 3] -> y [32, 128, 28, 28];
// 3x3 filter, stride 2, padding 1, no bias.
// Written by bench/models/gen_conv.py (bench/bench_conv.py's CONV_LAYERS). Compiled
// with `kilnc --inference --function f`, the artifact has the entries that
// bench/run.py times:
//  - forward: y = conv2d(x, w);
//  - fwdbwd: y and, for the gradient g of y, dx and dw (kiln.conv2d's two
//    backward ops, what kiln's autodiff emits for it).
func.func @f(%x: tensor<32x128x56x56xbf16> {kiln.name = "x"},
             %w: tensor<128x128x3x3xbf16> {kiln.name = "w"})
    -> (tensor<32x128x28x28xbf16> {kiln.name = "y"}) {
  %y = kiln.conv2d %x, %w layout = nchw stride = [2, 2] padding = [1, 1, 1, 1] : tensor<32x128x56x56xbf16>, tensor<128x128x3x3xbf16>
  return %y : tensor<32x128x28x28xbf16>
}

func.func @fwdbwd(%x: tensor<32x128x56x56xbf16> {kiln.name = "x"},
                 %w: tensor<128x128x3x3xbf16> {kiln.name = "w"},
                 %g: tensor<32x128x28x28xbf16> {kiln.name = "g"})
    -> (tensor<32x128x28x28xbf16> {kiln.name = "y"}, tensor<32x128x56x56xbf16> {kiln.name = "dx"}, tensor<128x128x3x3xbf16> {kiln.name = "dw"}) {
  %y = kiln.conv2d %x, %w layout = nchw stride = [2, 2] padding = [1, 1, 1, 1] : tensor<32x128x56x56xbf16>, tensor<128x128x3x3xbf16>
  %dx = kiln.conv2d_backward_input %g, %w layout = nchw stride = [2, 2] padding = [1, 1, 1, 1] : tensor<32x128x28x28xbf16>, tensor<128x128x3x3xbf16> -> tensor<32x128x56x56xbf16>
  %dw = kiln.conv2d_backward_filter %g, %x layout = nchw stride = [2, 2] padding = [1, 1, 1, 1] : tensor<32x128x28x28xbf16>, tensor<32x128x56x56xbf16> -> tensor<128x128x3x3xbf16>
  return %y, %dx, %dw : tensor<32x128x28x28xbf16>, tensor<32x128x56x56xbf16>, tensor<128x128x3x3xbf16>
}
