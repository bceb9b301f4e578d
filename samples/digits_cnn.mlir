// A small convolutional classifier of the 8x8 handwritten digits that
// scikit-learn ships (make_dataset --task digits: records of images [1, 8, 8]
// f32, pixel / 16, and labels [] i32 in [0, 10)).
//
// B=64, NHWC (kiln's convolution layout of choice): the images are NCHW with
// C = 1, so [B, 1, 8, 8] and [B, 8, 8, 1] are the same bytes and a reshape
// turns one into the other. About 14.5K parameters:
//   images [B, 1, 8, 8] -> [B, 8, 8, 1]
//   -> conv 3x3 1 -> 16, padding 1 -> batch norm -> ReLU        [B, 8, 8, 16]
//   -> conv 3x3 16 -> 32, padding 1 -> batch norm -> ReLU       [B, 8, 8, 32]
//   -> max pool 2x2, stride 2                                   [B, 4, 4, 32]
//   -> conv 3x3 32 -> 32, padding 1 -> batch norm -> ReLU       [B, 4, 4, 32]
//   -> global average pool                                      [B, 32]
//   -> Linear 32 -> 10 -> cross entropy with the labels.
// A second result is the fraction of the batch classified correctly.
//
// The convolutions have no bias (the batch norm that follows each one would
// cancel it). Filters are [O, KH, KW, C] (the NHWC filter layout), drawn
// Kaiming-normal (std sqrt(2 / (KH * KW * C))); the linear weight is [in,
// out] (x @ W), N(0, 1 / in); batch norm weights one, biases zero.
//
// Batch norm keeps running statistics (model state, momentum 0.1 as in
// PyTorch): training normalises with the batch's statistics and updates them,
// the forward entry normalises with them, so the held-out evaluation is
// PyTorch's model.eval() and every record's prediction depends on that record
// alone. The batch size appears only as the leading "64x" of the batch's
// tensors, so an evaluation copy of another batch size (the held-out split's
// 179 records in one batch, samples/make_gpu_bundle.sh) is
// sed 's/<64x/<179x/g'.
func.func @loss(
    %conv1_w: tensor<16x3x3x1xf32> {kiln.param = #kiln.init<kaiming, gain = 1.4142135>, kiln.name = "conv1_w"},
    %bn1_w: tensor<16xf32> {kiln.param = #kiln.init<ones>, kiln.name = "bn1_w"},
    %bn1_b: tensor<16xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "bn1_b"},
    %bn1_mean: tensor<16xf32> {kiln.state = #kiln.init<zeros>, kiln.name = "bn1_running_mean"},
    %bn1_var: tensor<16xf32> {kiln.state = #kiln.init<ones>, kiln.name = "bn1_running_var"},
    %conv2_w: tensor<32x3x3x16xf32> {kiln.param = #kiln.init<kaiming, gain = 1.4142135>, kiln.name = "conv2_w"},
    %bn2_w: tensor<32xf32> {kiln.param = #kiln.init<ones>, kiln.name = "bn2_w"},
    %bn2_b: tensor<32xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "bn2_b"},
    %bn2_mean: tensor<32xf32> {kiln.state = #kiln.init<zeros>, kiln.name = "bn2_running_mean"},
    %bn2_var: tensor<32xf32> {kiln.state = #kiln.init<ones>, kiln.name = "bn2_running_var"},
    %conv3_w: tensor<32x3x3x32xf32> {kiln.param = #kiln.init<kaiming, gain = 1.4142135>, kiln.name = "conv3_w"},
    %bn3_w: tensor<32xf32> {kiln.param = #kiln.init<ones>, kiln.name = "bn3_w"},
    %bn3_b: tensor<32xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "bn3_b"},
    %bn3_mean: tensor<32xf32> {kiln.state = #kiln.init<zeros>, kiln.name = "bn3_running_mean"},
    %bn3_var: tensor<32xf32> {kiln.state = #kiln.init<ones>, kiln.name = "bn3_running_var"},
    %fc_w: tensor<32x10xf32> {kiln.param = #kiln.init<kaiming, gain = 1.0>, kiln.name = "fc_w"},
    %fc_b: tensor<10xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "fc_b"},
    %images: tensor<64x1x8x8xf32> {kiln.name = "images"},
    %labels: tensor<64xi32> {kiln.name = "labels"}) -> (tensor<f32> {kiln.name = "loss"}, tensor<f32> {kiln.name = "accuracy"}) {
  // NCHW with one channel is NHWC.
  %x = kiln.reshape %images : tensor<64x1x8x8xf32> -> tensor<64x8x8x1xf32>

  %c1 = kiln.conv2d %x, %conv1_w layout = nhwc padding = [1, 1, 1, 1] : tensor<64x8x8x1xf32>, tensor<16x3x3x1xf32>
  %n1, %m1, %v1, %rm1, %rv1 = kiln.batch_norm %c1, %bn1_w, %bn1_b running %bn1_mean, %bn1_var momentum = 0.1 dim = 3 eps = 1.0e-05
      : tensor<64x8x8x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
  %h1 = kiln.relu %n1 : tensor<64x8x8x16xf32>

  %c2 = kiln.conv2d %h1, %conv2_w layout = nhwc padding = [1, 1, 1, 1] : tensor<64x8x8x16xf32>, tensor<32x3x3x16xf32>
  %n2, %m2, %v2, %rm2, %rv2 = kiln.batch_norm %c2, %bn2_w, %bn2_b running %bn2_mean, %bn2_var momentum = 0.1 dim = 3 eps = 1.0e-05
      : tensor<64x8x8x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>
  %h2 = kiln.relu %n2 : tensor<64x8x8x32xf32>
  %p2 = kiln.max_pool2d %h2 layout = nhwc kernel = [2, 2] stride = [2, 2] : tensor<64x8x8x32xf32>

  %c3 = kiln.conv2d %p2, %conv3_w layout = nhwc padding = [1, 1, 1, 1] : tensor<64x4x4x32xf32>, tensor<32x3x3x32xf32>
  %n3, %m3, %v3, %rm3, %rv3 = kiln.batch_norm %c3, %bn3_w, %bn3_b running %bn3_mean, %bn3_var momentum = 0.1 dim = 3 eps = 1.0e-05
      : tensor<64x4x4x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>
  %h3 = kiln.relu %n3 : tensor<64x4x4x32xf32>

  // Global average pool, then the linear head.
  %g = kiln.reduce_mean %h3 dims = [1, 2] : tensor<64x4x4x32xf32>
  %z = kiln.matmul %g, %fc_w : tensor<64x32xf32>, tensor<32x10xf32>
  %logits = kiln.add %z, %fc_b : tensor<64x10xf32>, tensor<10xf32>
  %loss = kiln.cross_entropy %logits, %labels : tensor<64x10xf32>, tensor<64xi32>
  // Fraction of the batch classified correctly (not differentiated).
  %pred = kiln.argmax %logits dim = 1 : tensor<64x10xf32>
  %hit = kiln.compare eq, %pred, %labels : tensor<64xi32>, tensor<64xi32>
  %hitf = kiln.cast %hit : tensor<64xi1> to tensor<64xf32>
  %accuracy = kiln.reduce_mean %hitf dims = [0] : tensor<64xf32>
  return %loss, %accuracy : tensor<f32>, tensor<f32>
}
