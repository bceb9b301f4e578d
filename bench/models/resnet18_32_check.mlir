// ResNet-18, CIFAR-style (32x32 inputs, 10 classes), NHWC, batch 16, widths 8/16/32/64:
// 20 convolutions, each with a batch norm; 176402 parameters.
// Written by bench/models/gen_resnet18.py (see there for the network);
// bench/run.py checks its PyTorch model against kiln-ref's f64 loss
// of this one at kiln-ref's parameters (bench/make_bundle.sh).
// Filters are [O, KH, KW, C] (kaiming normal, gain sqrt(2)); fc is
// [in, out] (x @ W).
func.func @loss(
    %conv1_w: tensor<8x3x3x3xf32> {kiln.param = #kiln.init<kaiming, gain = 1.4142135>, kiln.name = "conv1_w"},
    %conv1_bn_g: tensor<8xf32> {kiln.param = #kiln.init<ones>, kiln.name = "conv1_bn_g"},
    %conv1_bn_b: tensor<8xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "conv1_bn_b"},
    %conv1_bn_rm: tensor<8xf32> {kiln.state = #kiln.init<zeros>, kiln.name = "conv1_bn_rm"},
    %conv1_bn_rv: tensor<8xf32> {kiln.state = #kiln.init<ones>, kiln.name = "conv1_bn_rv"},
    %layer1_0_conv1_w: tensor<8x3x3x8xf32> {kiln.param = #kiln.init<kaiming, gain = 1.4142135>, kiln.name = "layer1_0_conv1_w"},
    %layer1_0_conv1_bn_g: tensor<8xf32> {kiln.param = #kiln.init<ones>, kiln.name = "layer1_0_conv1_bn_g"},
    %layer1_0_conv1_bn_b: tensor<8xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "layer1_0_conv1_bn_b"},
    %layer1_0_conv1_bn_rm: tensor<8xf32> {kiln.state = #kiln.init<zeros>, kiln.name = "layer1_0_conv1_bn_rm"},
    %layer1_0_conv1_bn_rv: tensor<8xf32> {kiln.state = #kiln.init<ones>, kiln.name = "layer1_0_conv1_bn_rv"},
    %layer1_0_conv2_w: tensor<8x3x3x8xf32> {kiln.param = #kiln.init<kaiming, gain = 1.4142135>, kiln.name = "layer1_0_conv2_w"},
    %layer1_0_conv2_bn_g: tensor<8xf32> {kiln.param = #kiln.init<ones>, kiln.name = "layer1_0_conv2_bn_g"},
    %layer1_0_conv2_bn_b: tensor<8xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "layer1_0_conv2_bn_b"},
    %layer1_0_conv2_bn_rm: tensor<8xf32> {kiln.state = #kiln.init<zeros>, kiln.name = "layer1_0_conv2_bn_rm"},
    %layer1_0_conv2_bn_rv: tensor<8xf32> {kiln.state = #kiln.init<ones>, kiln.name = "layer1_0_conv2_bn_rv"},
    %layer1_1_conv1_w: tensor<8x3x3x8xf32> {kiln.param = #kiln.init<kaiming, gain = 1.4142135>, kiln.name = "layer1_1_conv1_w"},
    %layer1_1_conv1_bn_g: tensor<8xf32> {kiln.param = #kiln.init<ones>, kiln.name = "layer1_1_conv1_bn_g"},
    %layer1_1_conv1_bn_b: tensor<8xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "layer1_1_conv1_bn_b"},
    %layer1_1_conv1_bn_rm: tensor<8xf32> {kiln.state = #kiln.init<zeros>, kiln.name = "layer1_1_conv1_bn_rm"},
    %layer1_1_conv1_bn_rv: tensor<8xf32> {kiln.state = #kiln.init<ones>, kiln.name = "layer1_1_conv1_bn_rv"},
    %layer1_1_conv2_w: tensor<8x3x3x8xf32> {kiln.param = #kiln.init<kaiming, gain = 1.4142135>, kiln.name = "layer1_1_conv2_w"},
    %layer1_1_conv2_bn_g: tensor<8xf32> {kiln.param = #kiln.init<ones>, kiln.name = "layer1_1_conv2_bn_g"},
    %layer1_1_conv2_bn_b: tensor<8xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "layer1_1_conv2_bn_b"},
    %layer1_1_conv2_bn_rm: tensor<8xf32> {kiln.state = #kiln.init<zeros>, kiln.name = "layer1_1_conv2_bn_rm"},
    %layer1_1_conv2_bn_rv: tensor<8xf32> {kiln.state = #kiln.init<ones>, kiln.name = "layer1_1_conv2_bn_rv"},
    %layer2_0_conv1_w: tensor<16x3x3x8xf32> {kiln.param = #kiln.init<kaiming, gain = 1.4142135>, kiln.name = "layer2_0_conv1_w"},
    %layer2_0_conv1_bn_g: tensor<16xf32> {kiln.param = #kiln.init<ones>, kiln.name = "layer2_0_conv1_bn_g"},
    %layer2_0_conv1_bn_b: tensor<16xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "layer2_0_conv1_bn_b"},
    %layer2_0_conv1_bn_rm: tensor<16xf32> {kiln.state = #kiln.init<zeros>, kiln.name = "layer2_0_conv1_bn_rm"},
    %layer2_0_conv1_bn_rv: tensor<16xf32> {kiln.state = #kiln.init<ones>, kiln.name = "layer2_0_conv1_bn_rv"},
    %layer2_0_conv2_w: tensor<16x3x3x16xf32> {kiln.param = #kiln.init<kaiming, gain = 1.4142135>, kiln.name = "layer2_0_conv2_w"},
    %layer2_0_conv2_bn_g: tensor<16xf32> {kiln.param = #kiln.init<ones>, kiln.name = "layer2_0_conv2_bn_g"},
    %layer2_0_conv2_bn_b: tensor<16xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "layer2_0_conv2_bn_b"},
    %layer2_0_conv2_bn_rm: tensor<16xf32> {kiln.state = #kiln.init<zeros>, kiln.name = "layer2_0_conv2_bn_rm"},
    %layer2_0_conv2_bn_rv: tensor<16xf32> {kiln.state = #kiln.init<ones>, kiln.name = "layer2_0_conv2_bn_rv"},
    %layer2_0_down_w: tensor<16x1x1x8xf32> {kiln.param = #kiln.init<kaiming, gain = 1.4142135>, kiln.name = "layer2_0_down_w"},
    %layer2_0_down_bn_g: tensor<16xf32> {kiln.param = #kiln.init<ones>, kiln.name = "layer2_0_down_bn_g"},
    %layer2_0_down_bn_b: tensor<16xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "layer2_0_down_bn_b"},
    %layer2_0_down_bn_rm: tensor<16xf32> {kiln.state = #kiln.init<zeros>, kiln.name = "layer2_0_down_bn_rm"},
    %layer2_0_down_bn_rv: tensor<16xf32> {kiln.state = #kiln.init<ones>, kiln.name = "layer2_0_down_bn_rv"},
    %layer2_1_conv1_w: tensor<16x3x3x16xf32> {kiln.param = #kiln.init<kaiming, gain = 1.4142135>, kiln.name = "layer2_1_conv1_w"},
    %layer2_1_conv1_bn_g: tensor<16xf32> {kiln.param = #kiln.init<ones>, kiln.name = "layer2_1_conv1_bn_g"},
    %layer2_1_conv1_bn_b: tensor<16xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "layer2_1_conv1_bn_b"},
    %layer2_1_conv1_bn_rm: tensor<16xf32> {kiln.state = #kiln.init<zeros>, kiln.name = "layer2_1_conv1_bn_rm"},
    %layer2_1_conv1_bn_rv: tensor<16xf32> {kiln.state = #kiln.init<ones>, kiln.name = "layer2_1_conv1_bn_rv"},
    %layer2_1_conv2_w: tensor<16x3x3x16xf32> {kiln.param = #kiln.init<kaiming, gain = 1.4142135>, kiln.name = "layer2_1_conv2_w"},
    %layer2_1_conv2_bn_g: tensor<16xf32> {kiln.param = #kiln.init<ones>, kiln.name = "layer2_1_conv2_bn_g"},
    %layer2_1_conv2_bn_b: tensor<16xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "layer2_1_conv2_bn_b"},
    %layer2_1_conv2_bn_rm: tensor<16xf32> {kiln.state = #kiln.init<zeros>, kiln.name = "layer2_1_conv2_bn_rm"},
    %layer2_1_conv2_bn_rv: tensor<16xf32> {kiln.state = #kiln.init<ones>, kiln.name = "layer2_1_conv2_bn_rv"},
    %layer3_0_conv1_w: tensor<32x3x3x16xf32> {kiln.param = #kiln.init<kaiming, gain = 1.4142135>, kiln.name = "layer3_0_conv1_w"},
    %layer3_0_conv1_bn_g: tensor<32xf32> {kiln.param = #kiln.init<ones>, kiln.name = "layer3_0_conv1_bn_g"},
    %layer3_0_conv1_bn_b: tensor<32xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "layer3_0_conv1_bn_b"},
    %layer3_0_conv1_bn_rm: tensor<32xf32> {kiln.state = #kiln.init<zeros>, kiln.name = "layer3_0_conv1_bn_rm"},
    %layer3_0_conv1_bn_rv: tensor<32xf32> {kiln.state = #kiln.init<ones>, kiln.name = "layer3_0_conv1_bn_rv"},
    %layer3_0_conv2_w: tensor<32x3x3x32xf32> {kiln.param = #kiln.init<kaiming, gain = 1.4142135>, kiln.name = "layer3_0_conv2_w"},
    %layer3_0_conv2_bn_g: tensor<32xf32> {kiln.param = #kiln.init<ones>, kiln.name = "layer3_0_conv2_bn_g"},
    %layer3_0_conv2_bn_b: tensor<32xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "layer3_0_conv2_bn_b"},
    %layer3_0_conv2_bn_rm: tensor<32xf32> {kiln.state = #kiln.init<zeros>, kiln.name = "layer3_0_conv2_bn_rm"},
    %layer3_0_conv2_bn_rv: tensor<32xf32> {kiln.state = #kiln.init<ones>, kiln.name = "layer3_0_conv2_bn_rv"},
    %layer3_0_down_w: tensor<32x1x1x16xf32> {kiln.param = #kiln.init<kaiming, gain = 1.4142135>, kiln.name = "layer3_0_down_w"},
    %layer3_0_down_bn_g: tensor<32xf32> {kiln.param = #kiln.init<ones>, kiln.name = "layer3_0_down_bn_g"},
    %layer3_0_down_bn_b: tensor<32xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "layer3_0_down_bn_b"},
    %layer3_0_down_bn_rm: tensor<32xf32> {kiln.state = #kiln.init<zeros>, kiln.name = "layer3_0_down_bn_rm"},
    %layer3_0_down_bn_rv: tensor<32xf32> {kiln.state = #kiln.init<ones>, kiln.name = "layer3_0_down_bn_rv"},
    %layer3_1_conv1_w: tensor<32x3x3x32xf32> {kiln.param = #kiln.init<kaiming, gain = 1.4142135>, kiln.name = "layer3_1_conv1_w"},
    %layer3_1_conv1_bn_g: tensor<32xf32> {kiln.param = #kiln.init<ones>, kiln.name = "layer3_1_conv1_bn_g"},
    %layer3_1_conv1_bn_b: tensor<32xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "layer3_1_conv1_bn_b"},
    %layer3_1_conv1_bn_rm: tensor<32xf32> {kiln.state = #kiln.init<zeros>, kiln.name = "layer3_1_conv1_bn_rm"},
    %layer3_1_conv1_bn_rv: tensor<32xf32> {kiln.state = #kiln.init<ones>, kiln.name = "layer3_1_conv1_bn_rv"},
    %layer3_1_conv2_w: tensor<32x3x3x32xf32> {kiln.param = #kiln.init<kaiming, gain = 1.4142135>, kiln.name = "layer3_1_conv2_w"},
    %layer3_1_conv2_bn_g: tensor<32xf32> {kiln.param = #kiln.init<ones>, kiln.name = "layer3_1_conv2_bn_g"},
    %layer3_1_conv2_bn_b: tensor<32xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "layer3_1_conv2_bn_b"},
    %layer3_1_conv2_bn_rm: tensor<32xf32> {kiln.state = #kiln.init<zeros>, kiln.name = "layer3_1_conv2_bn_rm"},
    %layer3_1_conv2_bn_rv: tensor<32xf32> {kiln.state = #kiln.init<ones>, kiln.name = "layer3_1_conv2_bn_rv"},
    %layer4_0_conv1_w: tensor<64x3x3x32xf32> {kiln.param = #kiln.init<kaiming, gain = 1.4142135>, kiln.name = "layer4_0_conv1_w"},
    %layer4_0_conv1_bn_g: tensor<64xf32> {kiln.param = #kiln.init<ones>, kiln.name = "layer4_0_conv1_bn_g"},
    %layer4_0_conv1_bn_b: tensor<64xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "layer4_0_conv1_bn_b"},
    %layer4_0_conv1_bn_rm: tensor<64xf32> {kiln.state = #kiln.init<zeros>, kiln.name = "layer4_0_conv1_bn_rm"},
    %layer4_0_conv1_bn_rv: tensor<64xf32> {kiln.state = #kiln.init<ones>, kiln.name = "layer4_0_conv1_bn_rv"},
    %layer4_0_conv2_w: tensor<64x3x3x64xf32> {kiln.param = #kiln.init<kaiming, gain = 1.4142135>, kiln.name = "layer4_0_conv2_w"},
    %layer4_0_conv2_bn_g: tensor<64xf32> {kiln.param = #kiln.init<ones>, kiln.name = "layer4_0_conv2_bn_g"},
    %layer4_0_conv2_bn_b: tensor<64xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "layer4_0_conv2_bn_b"},
    %layer4_0_conv2_bn_rm: tensor<64xf32> {kiln.state = #kiln.init<zeros>, kiln.name = "layer4_0_conv2_bn_rm"},
    %layer4_0_conv2_bn_rv: tensor<64xf32> {kiln.state = #kiln.init<ones>, kiln.name = "layer4_0_conv2_bn_rv"},
    %layer4_0_down_w: tensor<64x1x1x32xf32> {kiln.param = #kiln.init<kaiming, gain = 1.4142135>, kiln.name = "layer4_0_down_w"},
    %layer4_0_down_bn_g: tensor<64xf32> {kiln.param = #kiln.init<ones>, kiln.name = "layer4_0_down_bn_g"},
    %layer4_0_down_bn_b: tensor<64xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "layer4_0_down_bn_b"},
    %layer4_0_down_bn_rm: tensor<64xf32> {kiln.state = #kiln.init<zeros>, kiln.name = "layer4_0_down_bn_rm"},
    %layer4_0_down_bn_rv: tensor<64xf32> {kiln.state = #kiln.init<ones>, kiln.name = "layer4_0_down_bn_rv"},
    %layer4_1_conv1_w: tensor<64x3x3x64xf32> {kiln.param = #kiln.init<kaiming, gain = 1.4142135>, kiln.name = "layer4_1_conv1_w"},
    %layer4_1_conv1_bn_g: tensor<64xf32> {kiln.param = #kiln.init<ones>, kiln.name = "layer4_1_conv1_bn_g"},
    %layer4_1_conv1_bn_b: tensor<64xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "layer4_1_conv1_bn_b"},
    %layer4_1_conv1_bn_rm: tensor<64xf32> {kiln.state = #kiln.init<zeros>, kiln.name = "layer4_1_conv1_bn_rm"},
    %layer4_1_conv1_bn_rv: tensor<64xf32> {kiln.state = #kiln.init<ones>, kiln.name = "layer4_1_conv1_bn_rv"},
    %layer4_1_conv2_w: tensor<64x3x3x64xf32> {kiln.param = #kiln.init<kaiming, gain = 1.4142135>, kiln.name = "layer4_1_conv2_w"},
    %layer4_1_conv2_bn_g: tensor<64xf32> {kiln.param = #kiln.init<ones>, kiln.name = "layer4_1_conv2_bn_g"},
    %layer4_1_conv2_bn_b: tensor<64xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "layer4_1_conv2_bn_b"},
    %layer4_1_conv2_bn_rm: tensor<64xf32> {kiln.state = #kiln.init<zeros>, kiln.name = "layer4_1_conv2_bn_rm"},
    %layer4_1_conv2_bn_rv: tensor<64xf32> {kiln.state = #kiln.init<ones>, kiln.name = "layer4_1_conv2_bn_rv"},
    %fc_w: tensor<64x10xf32> {kiln.param = #kiln.init<normal, std = 0.02>, kiln.name = "fc_w"},
    %fc_b: tensor<10xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "fc_b"},
    %x: tensor<16x32x32x3xf32> {kiln.name = "x"},
    %y: tensor<16xi32> {kiln.name = "y"}) -> tensor<f32> {
  // Stem: 3x3 conv, batch norm, ReLU.
  %conv1_c = kiln.conv2d %x, %conv1_w layout = nhwc padding = [1, 1, 1, 1] : tensor<16x32x32x3xf32>, tensor<8x3x3x3xf32>
  %conv1_n, %conv1_m, %conv1_v, %conv1_rm1, %conv1_rv1 = kiln.batch_norm %conv1_c, %conv1_bn_g, %conv1_bn_b running %conv1_bn_rm, %conv1_bn_rv momentum = 0.1 dim = 3 eps = 1.0e-05 : tensor<16x32x32x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
  %conv1_r = kiln.relu %conv1_n : tensor<16x32x32x8xf32>
  // Stage 1, block 0: 8 -> 8.
  %layer1_0_conv1_c = kiln.conv2d %conv1_r, %layer1_0_conv1_w layout = nhwc padding = [1, 1, 1, 1] : tensor<16x32x32x8xf32>, tensor<8x3x3x8xf32>
  %layer1_0_conv1_n, %layer1_0_conv1_m, %layer1_0_conv1_v, %layer1_0_conv1_rm1, %layer1_0_conv1_rv1 = kiln.batch_norm %layer1_0_conv1_c, %layer1_0_conv1_bn_g, %layer1_0_conv1_bn_b running %layer1_0_conv1_bn_rm, %layer1_0_conv1_bn_rv momentum = 0.1 dim = 3 eps = 1.0e-05 : tensor<16x32x32x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
  %layer1_0_conv1_r = kiln.relu %layer1_0_conv1_n : tensor<16x32x32x8xf32>
  %layer1_0_conv2_c = kiln.conv2d %layer1_0_conv1_r, %layer1_0_conv2_w layout = nhwc padding = [1, 1, 1, 1] : tensor<16x32x32x8xf32>, tensor<8x3x3x8xf32>
  %layer1_0_conv2_n, %layer1_0_conv2_m, %layer1_0_conv2_v, %layer1_0_conv2_rm1, %layer1_0_conv2_rv1 = kiln.batch_norm %layer1_0_conv2_c, %layer1_0_conv2_bn_g, %layer1_0_conv2_bn_b running %layer1_0_conv2_bn_rm, %layer1_0_conv2_bn_rv momentum = 0.1 dim = 3 eps = 1.0e-05 : tensor<16x32x32x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
  %layer1_0_sum = kiln.add %layer1_0_conv2_n, %conv1_r : tensor<16x32x32x8xf32>, tensor<16x32x32x8xf32>
  %layer1_0_out = kiln.relu %layer1_0_sum : tensor<16x32x32x8xf32>
  // Stage 1, block 1: 8 -> 8.
  %layer1_1_conv1_c = kiln.conv2d %layer1_0_out, %layer1_1_conv1_w layout = nhwc padding = [1, 1, 1, 1] : tensor<16x32x32x8xf32>, tensor<8x3x3x8xf32>
  %layer1_1_conv1_n, %layer1_1_conv1_m, %layer1_1_conv1_v, %layer1_1_conv1_rm1, %layer1_1_conv1_rv1 = kiln.batch_norm %layer1_1_conv1_c, %layer1_1_conv1_bn_g, %layer1_1_conv1_bn_b running %layer1_1_conv1_bn_rm, %layer1_1_conv1_bn_rv momentum = 0.1 dim = 3 eps = 1.0e-05 : tensor<16x32x32x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
  %layer1_1_conv1_r = kiln.relu %layer1_1_conv1_n : tensor<16x32x32x8xf32>
  %layer1_1_conv2_c = kiln.conv2d %layer1_1_conv1_r, %layer1_1_conv2_w layout = nhwc padding = [1, 1, 1, 1] : tensor<16x32x32x8xf32>, tensor<8x3x3x8xf32>
  %layer1_1_conv2_n, %layer1_1_conv2_m, %layer1_1_conv2_v, %layer1_1_conv2_rm1, %layer1_1_conv2_rv1 = kiln.batch_norm %layer1_1_conv2_c, %layer1_1_conv2_bn_g, %layer1_1_conv2_bn_b running %layer1_1_conv2_bn_rm, %layer1_1_conv2_bn_rv momentum = 0.1 dim = 3 eps = 1.0e-05 : tensor<16x32x32x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
  %layer1_1_sum = kiln.add %layer1_1_conv2_n, %layer1_0_out : tensor<16x32x32x8xf32>, tensor<16x32x32x8xf32>
  %layer1_1_out = kiln.relu %layer1_1_sum : tensor<16x32x32x8xf32>
  // Stage 2, block 0: 8 -> 16, stride 2, projection shortcut.
  %layer2_0_conv1_c = kiln.conv2d %layer1_1_out, %layer2_0_conv1_w layout = nhwc stride = [2, 2] padding = [1, 1, 1, 1] : tensor<16x32x32x8xf32>, tensor<16x3x3x8xf32>
  %layer2_0_conv1_n, %layer2_0_conv1_m, %layer2_0_conv1_v, %layer2_0_conv1_rm1, %layer2_0_conv1_rv1 = kiln.batch_norm %layer2_0_conv1_c, %layer2_0_conv1_bn_g, %layer2_0_conv1_bn_b running %layer2_0_conv1_bn_rm, %layer2_0_conv1_bn_rv momentum = 0.1 dim = 3 eps = 1.0e-05 : tensor<16x16x16x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
  %layer2_0_conv1_r = kiln.relu %layer2_0_conv1_n : tensor<16x16x16x16xf32>
  %layer2_0_conv2_c = kiln.conv2d %layer2_0_conv1_r, %layer2_0_conv2_w layout = nhwc padding = [1, 1, 1, 1] : tensor<16x16x16x16xf32>, tensor<16x3x3x16xf32>
  %layer2_0_conv2_n, %layer2_0_conv2_m, %layer2_0_conv2_v, %layer2_0_conv2_rm1, %layer2_0_conv2_rv1 = kiln.batch_norm %layer2_0_conv2_c, %layer2_0_conv2_bn_g, %layer2_0_conv2_bn_b running %layer2_0_conv2_bn_rm, %layer2_0_conv2_bn_rv momentum = 0.1 dim = 3 eps = 1.0e-05 : tensor<16x16x16x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
  %layer2_0_down_c = kiln.conv2d %layer1_1_out, %layer2_0_down_w layout = nhwc stride = [2, 2] : tensor<16x32x32x8xf32>, tensor<16x1x1x8xf32>
  %layer2_0_down_n, %layer2_0_down_m, %layer2_0_down_v, %layer2_0_down_rm1, %layer2_0_down_rv1 = kiln.batch_norm %layer2_0_down_c, %layer2_0_down_bn_g, %layer2_0_down_bn_b running %layer2_0_down_bn_rm, %layer2_0_down_bn_rv momentum = 0.1 dim = 3 eps = 1.0e-05 : tensor<16x16x16x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
  %layer2_0_sum = kiln.add %layer2_0_conv2_n, %layer2_0_down_n : tensor<16x16x16x16xf32>, tensor<16x16x16x16xf32>
  %layer2_0_out = kiln.relu %layer2_0_sum : tensor<16x16x16x16xf32>
  // Stage 2, block 1: 16 -> 16.
  %layer2_1_conv1_c = kiln.conv2d %layer2_0_out, %layer2_1_conv1_w layout = nhwc padding = [1, 1, 1, 1] : tensor<16x16x16x16xf32>, tensor<16x3x3x16xf32>
  %layer2_1_conv1_n, %layer2_1_conv1_m, %layer2_1_conv1_v, %layer2_1_conv1_rm1, %layer2_1_conv1_rv1 = kiln.batch_norm %layer2_1_conv1_c, %layer2_1_conv1_bn_g, %layer2_1_conv1_bn_b running %layer2_1_conv1_bn_rm, %layer2_1_conv1_bn_rv momentum = 0.1 dim = 3 eps = 1.0e-05 : tensor<16x16x16x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
  %layer2_1_conv1_r = kiln.relu %layer2_1_conv1_n : tensor<16x16x16x16xf32>
  %layer2_1_conv2_c = kiln.conv2d %layer2_1_conv1_r, %layer2_1_conv2_w layout = nhwc padding = [1, 1, 1, 1] : tensor<16x16x16x16xf32>, tensor<16x3x3x16xf32>
  %layer2_1_conv2_n, %layer2_1_conv2_m, %layer2_1_conv2_v, %layer2_1_conv2_rm1, %layer2_1_conv2_rv1 = kiln.batch_norm %layer2_1_conv2_c, %layer2_1_conv2_bn_g, %layer2_1_conv2_bn_b running %layer2_1_conv2_bn_rm, %layer2_1_conv2_bn_rv momentum = 0.1 dim = 3 eps = 1.0e-05 : tensor<16x16x16x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
  %layer2_1_sum = kiln.add %layer2_1_conv2_n, %layer2_0_out : tensor<16x16x16x16xf32>, tensor<16x16x16x16xf32>
  %layer2_1_out = kiln.relu %layer2_1_sum : tensor<16x16x16x16xf32>
  // Stage 3, block 0: 16 -> 32, stride 2, projection shortcut.
  %layer3_0_conv1_c = kiln.conv2d %layer2_1_out, %layer3_0_conv1_w layout = nhwc stride = [2, 2] padding = [1, 1, 1, 1] : tensor<16x16x16x16xf32>, tensor<32x3x3x16xf32>
  %layer3_0_conv1_n, %layer3_0_conv1_m, %layer3_0_conv1_v, %layer3_0_conv1_rm1, %layer3_0_conv1_rv1 = kiln.batch_norm %layer3_0_conv1_c, %layer3_0_conv1_bn_g, %layer3_0_conv1_bn_b running %layer3_0_conv1_bn_rm, %layer3_0_conv1_bn_rv momentum = 0.1 dim = 3 eps = 1.0e-05 : tensor<16x8x8x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>
  %layer3_0_conv1_r = kiln.relu %layer3_0_conv1_n : tensor<16x8x8x32xf32>
  %layer3_0_conv2_c = kiln.conv2d %layer3_0_conv1_r, %layer3_0_conv2_w layout = nhwc padding = [1, 1, 1, 1] : tensor<16x8x8x32xf32>, tensor<32x3x3x32xf32>
  %layer3_0_conv2_n, %layer3_0_conv2_m, %layer3_0_conv2_v, %layer3_0_conv2_rm1, %layer3_0_conv2_rv1 = kiln.batch_norm %layer3_0_conv2_c, %layer3_0_conv2_bn_g, %layer3_0_conv2_bn_b running %layer3_0_conv2_bn_rm, %layer3_0_conv2_bn_rv momentum = 0.1 dim = 3 eps = 1.0e-05 : tensor<16x8x8x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>
  %layer3_0_down_c = kiln.conv2d %layer2_1_out, %layer3_0_down_w layout = nhwc stride = [2, 2] : tensor<16x16x16x16xf32>, tensor<32x1x1x16xf32>
  %layer3_0_down_n, %layer3_0_down_m, %layer3_0_down_v, %layer3_0_down_rm1, %layer3_0_down_rv1 = kiln.batch_norm %layer3_0_down_c, %layer3_0_down_bn_g, %layer3_0_down_bn_b running %layer3_0_down_bn_rm, %layer3_0_down_bn_rv momentum = 0.1 dim = 3 eps = 1.0e-05 : tensor<16x8x8x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>
  %layer3_0_sum = kiln.add %layer3_0_conv2_n, %layer3_0_down_n : tensor<16x8x8x32xf32>, tensor<16x8x8x32xf32>
  %layer3_0_out = kiln.relu %layer3_0_sum : tensor<16x8x8x32xf32>
  // Stage 3, block 1: 32 -> 32.
  %layer3_1_conv1_c = kiln.conv2d %layer3_0_out, %layer3_1_conv1_w layout = nhwc padding = [1, 1, 1, 1] : tensor<16x8x8x32xf32>, tensor<32x3x3x32xf32>
  %layer3_1_conv1_n, %layer3_1_conv1_m, %layer3_1_conv1_v, %layer3_1_conv1_rm1, %layer3_1_conv1_rv1 = kiln.batch_norm %layer3_1_conv1_c, %layer3_1_conv1_bn_g, %layer3_1_conv1_bn_b running %layer3_1_conv1_bn_rm, %layer3_1_conv1_bn_rv momentum = 0.1 dim = 3 eps = 1.0e-05 : tensor<16x8x8x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>
  %layer3_1_conv1_r = kiln.relu %layer3_1_conv1_n : tensor<16x8x8x32xf32>
  %layer3_1_conv2_c = kiln.conv2d %layer3_1_conv1_r, %layer3_1_conv2_w layout = nhwc padding = [1, 1, 1, 1] : tensor<16x8x8x32xf32>, tensor<32x3x3x32xf32>
  %layer3_1_conv2_n, %layer3_1_conv2_m, %layer3_1_conv2_v, %layer3_1_conv2_rm1, %layer3_1_conv2_rv1 = kiln.batch_norm %layer3_1_conv2_c, %layer3_1_conv2_bn_g, %layer3_1_conv2_bn_b running %layer3_1_conv2_bn_rm, %layer3_1_conv2_bn_rv momentum = 0.1 dim = 3 eps = 1.0e-05 : tensor<16x8x8x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>
  %layer3_1_sum = kiln.add %layer3_1_conv2_n, %layer3_0_out : tensor<16x8x8x32xf32>, tensor<16x8x8x32xf32>
  %layer3_1_out = kiln.relu %layer3_1_sum : tensor<16x8x8x32xf32>
  // Stage 4, block 0: 32 -> 64, stride 2, projection shortcut.
  %layer4_0_conv1_c = kiln.conv2d %layer3_1_out, %layer4_0_conv1_w layout = nhwc stride = [2, 2] padding = [1, 1, 1, 1] : tensor<16x8x8x32xf32>, tensor<64x3x3x32xf32>
  %layer4_0_conv1_n, %layer4_0_conv1_m, %layer4_0_conv1_v, %layer4_0_conv1_rm1, %layer4_0_conv1_rv1 = kiln.batch_norm %layer4_0_conv1_c, %layer4_0_conv1_bn_g, %layer4_0_conv1_bn_b running %layer4_0_conv1_bn_rm, %layer4_0_conv1_bn_rv momentum = 0.1 dim = 3 eps = 1.0e-05 : tensor<16x4x4x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
  %layer4_0_conv1_r = kiln.relu %layer4_0_conv1_n : tensor<16x4x4x64xf32>
  %layer4_0_conv2_c = kiln.conv2d %layer4_0_conv1_r, %layer4_0_conv2_w layout = nhwc padding = [1, 1, 1, 1] : tensor<16x4x4x64xf32>, tensor<64x3x3x64xf32>
  %layer4_0_conv2_n, %layer4_0_conv2_m, %layer4_0_conv2_v, %layer4_0_conv2_rm1, %layer4_0_conv2_rv1 = kiln.batch_norm %layer4_0_conv2_c, %layer4_0_conv2_bn_g, %layer4_0_conv2_bn_b running %layer4_0_conv2_bn_rm, %layer4_0_conv2_bn_rv momentum = 0.1 dim = 3 eps = 1.0e-05 : tensor<16x4x4x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
  %layer4_0_down_c = kiln.conv2d %layer3_1_out, %layer4_0_down_w layout = nhwc stride = [2, 2] : tensor<16x8x8x32xf32>, tensor<64x1x1x32xf32>
  %layer4_0_down_n, %layer4_0_down_m, %layer4_0_down_v, %layer4_0_down_rm1, %layer4_0_down_rv1 = kiln.batch_norm %layer4_0_down_c, %layer4_0_down_bn_g, %layer4_0_down_bn_b running %layer4_0_down_bn_rm, %layer4_0_down_bn_rv momentum = 0.1 dim = 3 eps = 1.0e-05 : tensor<16x4x4x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
  %layer4_0_sum = kiln.add %layer4_0_conv2_n, %layer4_0_down_n : tensor<16x4x4x64xf32>, tensor<16x4x4x64xf32>
  %layer4_0_out = kiln.relu %layer4_0_sum : tensor<16x4x4x64xf32>
  // Stage 4, block 1: 64 -> 64.
  %layer4_1_conv1_c = kiln.conv2d %layer4_0_out, %layer4_1_conv1_w layout = nhwc padding = [1, 1, 1, 1] : tensor<16x4x4x64xf32>, tensor<64x3x3x64xf32>
  %layer4_1_conv1_n, %layer4_1_conv1_m, %layer4_1_conv1_v, %layer4_1_conv1_rm1, %layer4_1_conv1_rv1 = kiln.batch_norm %layer4_1_conv1_c, %layer4_1_conv1_bn_g, %layer4_1_conv1_bn_b running %layer4_1_conv1_bn_rm, %layer4_1_conv1_bn_rv momentum = 0.1 dim = 3 eps = 1.0e-05 : tensor<16x4x4x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
  %layer4_1_conv1_r = kiln.relu %layer4_1_conv1_n : tensor<16x4x4x64xf32>
  %layer4_1_conv2_c = kiln.conv2d %layer4_1_conv1_r, %layer4_1_conv2_w layout = nhwc padding = [1, 1, 1, 1] : tensor<16x4x4x64xf32>, tensor<64x3x3x64xf32>
  %layer4_1_conv2_n, %layer4_1_conv2_m, %layer4_1_conv2_v, %layer4_1_conv2_rm1, %layer4_1_conv2_rv1 = kiln.batch_norm %layer4_1_conv2_c, %layer4_1_conv2_bn_g, %layer4_1_conv2_bn_b running %layer4_1_conv2_bn_rm, %layer4_1_conv2_bn_rv momentum = 0.1 dim = 3 eps = 1.0e-05 : tensor<16x4x4x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
  %layer4_1_sum = kiln.add %layer4_1_conv2_n, %layer4_0_out : tensor<16x4x4x64xf32>, tensor<16x4x4x64xf32>
  %layer4_1_out = kiln.relu %layer4_1_sum : tensor<16x4x4x64xf32>
  // Global average pooling, Linear, mean cross entropy.
  %pool = kiln.reduce_mean %layer4_1_out dims = [1, 2] : tensor<16x4x4x64xf32>
  %z = kiln.matmul %pool, %fc_w : tensor<16x64xf32>, tensor<64x10xf32>
  %logits = kiln.add %z, %fc_b : tensor<16x10xf32>, tensor<10xf32>
  %loss = kiln.cross_entropy %logits, %y label_smoothing = 0.0 : tensor<16x10xf32>, tensor<16xi32>
  return %loss : tensor<f32>
}
