// conv2d, NCHW, stem 7x7/2, 3->64, 224² (ResNet-50), N32 bf16:
// x [32, 3, 224, 224], w [64, 3, 7, 7] -> y [32, 64, 112, 112];
// 7x7 filter, stride 2, padding 3, no bias.
// Written by bench/models/gen_conv.py (bench/bench_conv.py's CONV_LAYERS). Compiled
// with `kilnc --inference --function f`, the artifact has the entries that
// bench/run.py times:
//  - forward: y = conv2d(x, w);
//  - fwdbwd: y and, for the gradient g of y, dx and dw (kiln.conv2d's two
//    backward ops, what kiln's autodiff emits for it);
//  - fwdbwd_nodx: y and dw only (the first layer of a network needs no
//    input gradient).
func.func @f(%x: tensor<32x3x224x224xbf16> {kiln.name = "x"},
             %w: tensor<64x3x7x7xbf16> {kiln.name = "w"})
    -> (tensor<32x64x112x112xbf16> {kiln.name = "y"}) {
  %y = kiln.conv2d %x, %w layout = nchw stride = [2, 2] padding = [3, 3, 3, 3] : tensor<32x3x224x224xbf16>, tensor<64x3x7x7xbf16>
  return %y : tensor<32x64x112x112xbf16>
}

func.func @fwdbwd(%x: tensor<32x3x224x224xbf16> {kiln.name = "x"},
                 %w: tensor<64x3x7x7xbf16> {kiln.name = "w"},
                 %g: tensor<32x64x112x112xbf16> {kiln.name = "g"})
    -> (tensor<32x64x112x112xbf16> {kiln.name = "y"}, tensor<32x3x224x224xbf16> {kiln.name = "dx"}, tensor<64x3x7x7xbf16> {kiln.name = "dw"}) {
  %y = kiln.conv2d %x, %w layout = nchw stride = [2, 2] padding = [3, 3, 3, 3] : tensor<32x3x224x224xbf16>, tensor<64x3x7x7xbf16>
  %dx = kiln.conv2d_backward_input %g, %w layout = nchw stride = [2, 2] padding = [3, 3, 3, 3] : tensor<32x64x112x112xbf16>, tensor<64x3x7x7xbf16> -> tensor<32x3x224x224xbf16>
  %dw = kiln.conv2d_backward_filter %g, %x layout = nchw stride = [2, 2] padding = [3, 3, 3, 3] : tensor<32x64x112x112xbf16>, tensor<32x3x224x224xbf16> -> tensor<64x3x7x7xbf16>
  return %y, %dx, %dw : tensor<32x64x112x112xbf16>, tensor<32x3x224x224xbf16>, tensor<64x3x7x7xbf16>
}

func.func @fwdbwd_nodx(%x: tensor<32x3x224x224xbf16> {kiln.name = "x"},
                      %w: tensor<64x3x7x7xbf16> {kiln.name = "w"},
                      %g: tensor<32x64x112x112xbf16> {kiln.name = "g"})
    -> (tensor<32x64x112x112xbf16> {kiln.name = "y"}, tensor<64x3x7x7xbf16> {kiln.name = "dw"}) {
  %y = kiln.conv2d %x, %w layout = nchw stride = [2, 2] padding = [3, 3, 3, 3] : tensor<32x3x224x224xbf16>, tensor<64x3x7x7xbf16>
  %dw = kiln.conv2d_backward_filter %g, %x layout = nchw stride = [2, 2] padding = [3, 3, 3, 3] : tensor<32x64x112x112xbf16>, tensor<32x3x224x224xbf16> -> tensor<64x3x7x7xbf16>
  return %y, %dw : tensor<32x64x112x112xbf16>, tensor<64x3x7x7xbf16>
}
