// conv2d, NCHW, 3x3, 512->512, 7² (ResNet-50), N32 bf16:
// x [32, 512, 7, 7], w [512, 512, 3, 3] -> y [32, 512, 7, 7];
// 3x3 filter, stride 1, padding 1, no bias.
// Written by bench/models/gen_conv.py (bench/bench_conv.py's CONV_LAYERS). Compiled
// with `kilnc --inference --function f`, the artifact has the entries that
// bench/run.py times:
//  - forward: y = conv2d(x, w);
//  - fwdbwd: y and, for the gradient g of y, dx and dw (kiln.conv2d's two
//    backward ops, what kiln's autodiff emits for it).
func.func @f(%x: tensor<32x512x7x7xbf16> {kiln.name = "x"},
             %w: tensor<512x512x3x3xbf16> {kiln.name = "w"})
    -> (tensor<32x512x7x7xbf16> {kiln.name = "y"}) {
  %y = kiln.conv2d %x, %w layout = nchw padding = [1, 1, 1, 1] : tensor<32x512x7x7xbf16>, tensor<512x512x3x3xbf16>
  return %y : tensor<32x512x7x7xbf16>
}

func.func @fwdbwd(%x: tensor<32x512x7x7xbf16> {kiln.name = "x"},
                 %w: tensor<512x512x3x3xbf16> {kiln.name = "w"},
                 %g: tensor<32x512x7x7xbf16> {kiln.name = "g"})
    -> (tensor<32x512x7x7xbf16> {kiln.name = "y"}, tensor<32x512x7x7xbf16> {kiln.name = "dx"}, tensor<512x512x3x3xbf16> {kiln.name = "dw"}) {
  %y = kiln.conv2d %x, %w layout = nchw padding = [1, 1, 1, 1] : tensor<32x512x7x7xbf16>, tensor<512x512x3x3xbf16>
  %dx = kiln.conv2d_backward_input %g, %w layout = nchw padding = [1, 1, 1, 1] : tensor<32x512x7x7xbf16>, tensor<512x512x3x3xbf16> -> tensor<32x512x7x7xbf16>
  %dw = kiln.conv2d_backward_filter %g, %x layout = nchw padding = [1, 1, 1, 1] : tensor<32x512x7x7xbf16>, tensor<32x512x7x7xbf16> -> tensor<512x512x3x3xbf16>
  return %y, %dx, %dw : tensor<32x512x7x7xbf16>, tensor<32x512x7x7xbf16>, tensor<512x512x3x3xbf16>
}
