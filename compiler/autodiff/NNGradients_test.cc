// Gradient checks of the neural-network ops and losses: every differentiable
// operand against central finite differences in f64. The loss of a non-loss
// op is sum((op(x) - w)^2) against a random target argument `w` (not
// differentiated), whose gradient 2 (y - w) is random, so that a wrong
// gradient cannot hide behind symmetry; mse_loss itself is checked alone.

#include "compiler/autodiff/GradientTestUtils.h"

namespace mlir::kiln {
namespace {

using NNGradientTest = GradientCheckTest;

InputSpec withIntBound(int64_t bound) {
  InputSpec spec;
  spec.intBound = bound;
  return spec;
}

TEST_F(NNGradientTest, SoftmaxMiddleDim) {
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<3x5x4xf32>, %w: tensor<3x5x4xf32>) -> tensor<f32> {
      %y = kiln.softmax %x dim = 1 : tensor<3x5x4xf32>
      %l = kiln.mse_loss %y, %w reduction = sum : tensor<3x5x4xf32>
      return %l : tensor<f32>
    })mlir",
                       {0});
}

TEST_F(NNGradientTest, SoftmaxLastDimWideRange) {
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<2x3x7xf32>, %w: tensor<2x3x7xf32>) -> tensor<f32> {
      %y = kiln.softmax %x dim = 2 : tensor<2x3x7xf32>
      %l = kiln.mse_loss %y, %w reduction = sum : tensor<2x3x7xf32>
      return %l : tensor<f32>
    })mlir",
                       {0}, InputSpec{-4.0, 4.0});
}

TEST_F(NNGradientTest, LogSoftmax) {
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<4x3x5xf32>, %w: tensor<4x3x5xf32>) -> tensor<f32> {
      %y = kiln.log_softmax %x dim = 0 : tensor<4x3x5xf32>
      %l = kiln.mse_loss %y, %w reduction = sum : tensor<4x3x5xf32>
      return %l : tensor<f32>
    })mlir",
                       {0});
}

TEST_F(NNGradientTest, LayerNormWeightBias) {
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<3x4x5xf32>, %g: tensor<4x5xf32>, %b: tensor<4x5xf32>,
                    %w: tensor<3x4x5xf32>) -> tensor<f32> {
      %y = kiln.layer_norm %x, %g, %b dims = 2 eps = 1.0e-03
          : tensor<3x4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>
      %l = kiln.mse_loss %y, %w reduction = sum : tensor<3x4x5xf32>
      return %l : tensor<f32>
    })mlir",
                       {0, 1, 2});
}

TEST_F(NNGradientTest, LayerNormWeightOnly) {
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<2x3x7xf32>, %g: tensor<7xf32>,
                    %w: tensor<2x3x7xf32>) -> tensor<f32> {
      %y = kiln.layer_norm %x, %g : tensor<2x3x7xf32>, tensor<7xf32>
      %l = kiln.mse_loss %y, %w reduction = sum : tensor<2x3x7xf32>
      return %l : tensor<f32>
    })mlir",
                       {0, 1});
}

TEST_F(NNGradientTest, LayerNormPlain) {
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<5x6xf32>, %w: tensor<5x6xf32>) -> tensor<f32> {
      %y = kiln.layer_norm %x dims = 2 : tensor<5x6xf32>
      %l = kiln.mse_loss %y, %w reduction = sum : tensor<5x6xf32>
      return %l : tensor<f32>
    })mlir",
                       {0});
}

TEST_F(NNGradientTest, GroupNormWeightBias) {
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<2x6x3x4xf32>, %g: tensor<6xf32>, %b: tensor<6xf32>,
                    %w: tensor<2x6x3x4xf32>) -> tensor<f32> {
      %y = kiln.group_norm %x, %g, %b groups = 3 eps = 1.0e-03
          : tensor<2x6x3x4xf32>, tensor<6xf32>, tensor<6xf32>
      %l = kiln.mse_loss %y, %w reduction = sum : tensor<2x6x3x4xf32>
      return %l : tensor<f32>
    })mlir",
                       {0, 1, 2});
}

TEST_F(NNGradientTest, GroupNormInstanceAndLayerForms) {
  // groups = C (instance norm, weight only) and groups = 1 without
  // parameters, on [N, C, L] and [N, C].
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<3x4x5xf32>, %g: tensor<4xf32>, %v: tensor<3x8xf32>,
                    %w: tensor<3x4x5xf32>, %u: tensor<3x8xf32>) -> tensor<f32> {
      %y = kiln.group_norm %x, %g groups = 4 : tensor<3x4x5xf32>, tensor<4xf32>
      %z = kiln.group_norm %v groups = 1 : tensor<3x8xf32>
      %l1 = kiln.mse_loss %y, %w reduction = sum : tensor<3x4x5xf32>
      %l2 = kiln.mse_loss %z, %u reduction = sum : tensor<3x8xf32>
      %l = kiln.add %l1, %l2 : tensor<f32>, tensor<f32>
      return %l : tensor<f32>
    })mlir",
                       {0, 1, 2});
}

TEST_F(NNGradientTest, GroupNormChannelsLast) {
  // Channels at the last dim: [N, H, W, C] and [N, L, C].
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<2x3x4x6xf32>, %g: tensor<6xf32>, %b: tensor<6xf32>,
                    %v: tensor<3x5x4xf32>, %w: tensor<2x3x4x6xf32>,
                    %u: tensor<3x5x4xf32>) -> tensor<f32> {
      %y = kiln.group_norm %x, %g, %b groups = 3 dim = 3 eps = 1.0e-03
          : tensor<2x3x4x6xf32>, tensor<6xf32>, tensor<6xf32>
      %z = kiln.group_norm %v groups = 2 dim = 2 : tensor<3x5x4xf32>
      %l1 = kiln.mse_loss %y, %w reduction = sum : tensor<2x3x4x6xf32>
      %l2 = kiln.mse_loss %z, %u reduction = sum : tensor<3x5x4xf32>
      %l = kiln.add %l1, %l2 : tensor<f32>, tensor<f32>
      return %l : tensor<f32>
    })mlir",
                       {0, 1, 2, 3});
}

TEST_F(NNGradientTest, RmsNormWeight) {
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<2x3x6xf32>, %g: tensor<6xf32>,
                    %w: tensor<2x3x6xf32>) -> tensor<f32> {
      %y = kiln.rms_norm %x, %g eps = 1.0e-02 : tensor<2x3x6xf32>, tensor<6xf32>
      %l = kiln.mse_loss %y, %w reduction = sum : tensor<2x3x6xf32>
      return %l : tensor<f32>
    })mlir",
                       {0, 1});
}

TEST_F(NNGradientTest, RmsNormPlain) {
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<4x5xf32>, %w: tensor<4x5xf32>) -> tensor<f32> {
      %y = kiln.rms_norm %x : tensor<4x5xf32>
      %l = kiln.mse_loss %y, %w reduction = sum : tensor<4x5xf32>
      return %l : tensor<f32>
    })mlir",
                       {0});
}

TEST_F(NNGradientTest, BatchNormNchw) {
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<4x3x2x5xf32>, %g: tensor<3xf32>, %b: tensor<3xf32>,
                    %w: tensor<4x3x2x5xf32>) -> tensor<f32> {
      %y, %m, %v = kiln.batch_norm %x, %g, %b eps = 1.0e-03
          : tensor<4x3x2x5xf32>, tensor<3xf32>, tensor<3xf32>
      %l = kiln.mse_loss %y, %w reduction = sum : tensor<4x3x2x5xf32>
      return %l : tensor<f32>
    })mlir",
                       {0, 1, 2});
}

TEST_F(NNGradientTest, BatchNormChannelsLastWithStatistics) {
  // The batch mean and variance feed the loss too.
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<3x2x2x4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>,
                    %w: tensor<3x2x2x4xf32>, %wm: tensor<4xf32>, %wv: tensor<4xf32>)
        -> tensor<f32> {
      %y, %m, %v = kiln.batch_norm %x, %g, %b dim = 3
          : tensor<3x2x2x4xf32>, tensor<4xf32>, tensor<4xf32>
      %l = kiln.mse_loss %y, %w reduction = sum : tensor<3x2x2x4xf32>
      %lm = kiln.mse_loss %m, %wm reduction = sum : tensor<4xf32>
      %lv = kiln.mse_loss %v, %wv reduction = sum : tensor<4xf32>
      %s = kiln.add %lm, %lv : tensor<f32>, tensor<f32>
      %t = kiln.add %l, %s : tensor<f32>, tensor<f32>
      return %t : tensor<f32>
    })mlir",
                       {0, 1, 2});
}

TEST_F(NNGradientTest, BatchNormStatisticsOnly) {
  // Only the variance reaches the loss: no gradient through the result.
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<5x3xf32>, %g: tensor<3xf32>, %b: tensor<3xf32>,
                    %wv: tensor<3xf32>) -> tensor<f32> {
      %y, %m, %v = kiln.batch_norm %x, %g, %b : tensor<5x3xf32>, tensor<3xf32>, tensor<3xf32>
      %l = kiln.mse_loss %v, %wv reduction = sum : tensor<3xf32>
      return %l : tensor<f32>
    })mlir",
                       {0});
}

TEST_F(NNGradientTest, BatchNormRunningStatisticsUpdates) {
  // The updated running statistics feed the loss too: their gradients reach
  // the batch statistics (momentum, and n / (n - 1) for the variance) and
  // the running operands (1 - momentum).
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<4x3x2xf32>, %g: tensor<3xf32>, %b: tensor<3xf32>,
                    %rm: tensor<3xf32>, %rv: tensor<3xf32>, %w: tensor<4x3x2xf32>,
                    %wm: tensor<3xf32>, %wv: tensor<3xf32>) -> tensor<f32> {
      %y, %m, %v, %rm1, %rv1 = kiln.batch_norm %x, %g, %b running %rm, %rv momentum = 0.3
          : tensor<4x3x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
      %l = kiln.mse_loss %y, %w reduction = sum : tensor<4x3x2xf32>
      %lm = kiln.mse_loss %rm1, %wm reduction = sum : tensor<3xf32>
      %lv = kiln.mse_loss %rv1, %wv reduction = sum : tensor<3xf32>
      %s = kiln.add %lm, %lv : tensor<f32>, tensor<f32>
      %t = kiln.add %l, %s : tensor<f32>, tensor<f32>
      return %t : tensor<f32>
    })mlir",
                       {0, 1, 2, 3, 4}, InputSpec{-1.5, 1.5, 4, {{4, {0.5, 2.0}}}});
}

TEST_F(NNGradientTest, BatchNormEvalForm) {
  // Normalised with the running statistics (channels last), which are also
  // the mean and variance results.
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<3x2x4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>,
                    %rm: tensor<4xf32>, %rv: tensor<4xf32>, %w: tensor<3x2x4xf32>,
                    %wm: tensor<4xf32>, %wv: tensor<4xf32>) -> tensor<f32> {
      %y, %m, %v, %rm1, %rv1 = kiln.batch_norm %x, %g, %b running %rm, %rv eval dim = 2
          : tensor<3x2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
      %l = kiln.mse_loss %y, %w reduction = sum : tensor<3x2x4xf32>
      %lm = kiln.mse_loss %m, %wm reduction = sum : tensor<4xf32>
      %lv = kiln.mse_loss %rv1, %wv reduction = sum : tensor<4xf32>
      %s = kiln.add %lm, %lv : tensor<f32>, tensor<f32>
      %t = kiln.add %l, %s : tensor<f32>, tensor<f32>
      return %t : tensor<f32>
    })mlir",
                       {0, 1, 2, 3, 4}, InputSpec{-1.5, 1.5, 4, {{4, {0.5, 2.0}}}});
}

TEST_F(NNGradientTest, Conv2dNchwGroupsStrideDilationPadding) {
  // OH = (9 + 1 + 2 - 2*2 - 1) / 2 + 1 = 4, OW = (8 + 0 + 1 - 4 - 1) / 2 + 1
  // = 3.
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<2x4x9x8xf32>, %f: tensor<6x2x3x3xf32>, %b: tensor<6xf32>,
                    %w: tensor<2x6x4x3xf32>) -> tensor<f32> {
      %y = kiln.conv2d %x, %f, %b layout = nchw stride = [2, 2] padding = [1, 2, 0, 1]
          dilation = [2, 2] groups = 2 : tensor<2x4x9x8xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>
      %l = kiln.mse_loss %y, %w reduction = sum : tensor<2x6x4x3xf32>
      return %l : tensor<f32>
    })mlir",
                       {0, 1, 2});
}

TEST_F(NNGradientTest, Conv2dNhwcGroupsStrideDilationPadding) {
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<2x9x8x4xf32>, %f: tensor<6x3x3x2xf32>, %b: tensor<6xf32>,
                    %w: tensor<2x4x3x6xf32>) -> tensor<f32> {
      %y = kiln.conv2d %x, %f, %b layout = nhwc stride = [2, 2] padding = [1, 2, 0, 1]
          dilation = [2, 2] groups = 2 : tensor<2x9x8x4xf32>, tensor<6x3x3x2xf32>, tensor<6xf32>
      %l = kiln.mse_loss %y, %w reduction = sum : tensor<2x4x3x6xf32>
      return %l : tensor<f32>
    })mlir",
                       {0, 1, 2});
}

TEST_F(NNGradientTest, Conv2dDepthwiseMixedStrides) {
  // OH = (7 + 3 - 2*1 - 1) / 1 + 1 = 8, OW = (6 + 1 - 1*2 - 1) / 2 + 1 = 3.
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<1x4x7x6xf32>, %f: tensor<4x1x2x3xf32>,
                    %w: tensor<1x4x8x3xf32>) -> tensor<f32> {
      %y = kiln.conv2d %x, %f layout = nchw stride = [1, 2] padding = [2, 1, 1, 0]
          dilation = [2, 1] groups = 4 : tensor<1x4x7x6xf32>, tensor<4x1x2x3xf32>
      %l = kiln.mse_loss %y, %w reduction = sum : tensor<1x4x8x3xf32>
      return %l : tensor<f32>
    })mlir",
                       {0, 1});
}

TEST_F(NNGradientTest, Conv2dNhwcPlain) {
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<2x5x6x3xf32>, %f: tensor<4x3x2x3xf32>,
                    %w: tensor<2x3x5x4xf32>) -> tensor<f32> {
      %y = kiln.conv2d %x, %f layout = nhwc : tensor<2x5x6x3xf32>, tensor<4x3x2x3xf32>
      %l = kiln.mse_loss %y, %w reduction = sum : tensor<2x3x5x4xf32>
      return %l : tensor<f32>
    })mlir",
                       {0, 1});
}

TEST_F(NNGradientTest, Conv2dBackwardInputAsTransposedConv) {
  // A transposed convolution (ONNX ConvTranspose): the reverse of the conv
  // above, whose last input row no window reaches (as with output_padding).
  expectGradientsMatch(R"mlir(
    func.func @loss(%g: tensor<2x6x4x3xf32>, %f: tensor<6x2x3x3xf32>,
                    %w: tensor<2x4x9x8xf32>) -> tensor<f32> {
      %y = kiln.conv2d_backward_input %g, %f layout = nchw stride = [2, 2]
          padding = [1, 2, 0, 1] dilation = [2, 2] groups = 2
          : tensor<2x6x4x3xf32>, tensor<6x2x3x3xf32> -> tensor<2x4x9x8xf32>
      %l = kiln.mse_loss %y, %w reduction = sum : tensor<2x4x9x8xf32>
      return %l : tensor<f32>
    })mlir",
                       {0, 1});
}

TEST_F(NNGradientTest, Conv2dBackwardInputNhwc) {
  expectGradientsMatch(R"mlir(
    func.func @loss(%g: tensor<2x4x3x6xf32>, %f: tensor<6x3x3x2xf32>,
                    %w: tensor<2x9x8x4xf32>) -> tensor<f32> {
      %y = kiln.conv2d_backward_input %g, %f layout = nhwc stride = [2, 2]
          padding = [1, 2, 0, 1] dilation = [2, 2] groups = 2
          : tensor<2x4x3x6xf32>, tensor<6x3x3x2xf32> -> tensor<2x9x8x4xf32>
      %l = kiln.mse_loss %y, %w reduction = sum : tensor<2x9x8x4xf32>
      return %l : tensor<f32>
    })mlir",
                       {0, 1});
}

TEST_F(NNGradientTest, MaxPoolNchwPadded) {
  // OH = (7 + 2 - 3) / 2 + 1 = 4, OW = (6 + 1 - 2) / 2 + 1 = 3. Uniform
  // random inputs have no ties (almost surely).
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<2x3x7x6xf32>, %w: tensor<2x3x4x3xf32>) -> tensor<f32> {
      %y = kiln.max_pool2d %x layout = nchw kernel = [3, 2] stride = [2, 2]
          padding = [1, 1, 1, 0] : tensor<2x3x7x6xf32>
      %l = kiln.mse_loss %y, %w reduction = sum : tensor<2x3x4x3xf32>
      return %l : tensor<f32>
    })mlir",
                       {0});
}

TEST_F(NNGradientTest, MaxPoolNhwcOverlapping) {
  // Stride 1 < kernel: an input can win several windows.
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<2x5x4x3xf32>, %w: tensor<2x4x3x3xf32>) -> tensor<f32> {
      %y = kiln.max_pool2d %x layout = nhwc kernel = [2, 2] : tensor<2x5x4x3xf32>
      %l = kiln.mse_loss %y, %w reduction = sum : tensor<2x4x3x3xf32>
      return %l : tensor<f32>
    })mlir",
                       {0});
}

TEST_F(NNGradientTest, AvgPoolNchwPadded) {
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<2x3x7x6xf32>, %w: tensor<2x3x4x3xf32>) -> tensor<f32> {
      %y = kiln.avg_pool2d %x layout = nchw kernel = [3, 2] stride = [2, 2]
          padding = [1, 1, 1, 0] : tensor<2x3x7x6xf32>
      %l = kiln.mse_loss %y, %w reduction = sum : tensor<2x3x4x3xf32>
      return %l : tensor<f32>
    })mlir",
                       {0});
}

TEST_F(NNGradientTest, AvgPoolNhwcCountIncludePad) {
  // OH = (5 + 2 - 3) / 1 + 1 = 5, OW = (6 + 2 - 3) / 2 + 1 = 3.
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<2x5x6x3xf32>, %w: tensor<2x5x3x3xf32>) -> tensor<f32> {
      %y = kiln.avg_pool2d %x layout = nhwc kernel = [3, 3] stride = [1, 2]
          padding = [1, 1, 1, 1] count_include_pad : tensor<2x5x6x3xf32>
      %l = kiln.mse_loss %y, %w reduction = sum : tensor<2x5x3x3xf32>
      return %l : tensor<f32>
    })mlir",
                       {0});
}

TEST_F(NNGradientTest, ResizeNearestUpsample) {
  // nn.Upsample(scale_factor=2): each input feeds a 2x2 block.
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<2x3x4x5xf32>, %w: tensor<2x3x8x10xf32>) -> tensor<f32> {
      %y = kiln.resize %x mode = nearest coordinates = asymmetric rounding = floor
          scales = [1.0, 1.0, 2.0, 2.0] : tensor<2x3x4x5xf32> -> tensor<2x3x8x10xf32>
      %l = kiln.mse_loss %y, %w reduction = sum : tensor<2x3x8x10xf32>
      return %l : tensor<f32>
    })mlir",
                       {0});
}

TEST_F(NNGradientTest, ResizeNearestFractionalAndDown) {
  // Scale 1.5 up along one dim (uneven repeats, ties up) and 0.5 down along
  // another (some inputs feed nothing).
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<5x8x3xf32>, %w: tensor<7x4x3xf32>) -> tensor<f32> {
      %y = kiln.resize %x mode = nearest coordinates = half_pixel
          rounding = round_prefer_ceil scales = [1.5, 0.5, 1.0]
          : tensor<5x8x3xf32> -> tensor<7x4x3xf32>
      %l = kiln.mse_loss %y, %w reduction = sum : tensor<7x4x3xf32>
      return %l : tensor<f32>
    })mlir",
                       {0});
}

TEST_F(NNGradientTest, ResizeBilinearHalfPixel) {
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<2x2x3x4xf32>, %w: tensor<2x2x7x9xf32>) -> tensor<f32> {
      %y = kiln.resize %x mode = linear coordinates = half_pixel
          scales = [1.0, 1.0, 2.3333333333333335, 2.25]
          : tensor<2x2x3x4xf32> -> tensor<2x2x7x9xf32>
      %l = kiln.mse_loss %y, %w reduction = sum : tensor<2x2x7x9xf32>
      return %l : tensor<f32>
    })mlir",
                       {0});
}

TEST_F(NNGradientTest, ResizeBilinearAlignCornersDown) {
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<2x9x7x3xf32>, %w: tensor<2x4x5x3xf32>) -> tensor<f32> {
      %y = kiln.resize %x mode = linear coordinates = align_corners
          scales = [1.0, 0.5, 0.75, 1.0] : tensor<2x9x7x3xf32> -> tensor<2x4x5x3xf32>
      %l = kiln.mse_loss %y, %w reduction = sum : tensor<2x4x5x3xf32>
      return %l : tensor<f32>
    })mlir",
                       {0});
}

TEST_F(NNGradientTest, ResizeLinearOtherCoordinates) {
  // pytorch_half_pixel to a single output, asymmetric, and
  // half_pixel_symmetric (trilinear over three dims).
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<3x4x5x2xf32>, %w: tensor<1x6x7x2xf32>,
                    %v: tensor<3x8x5x2xf32>) -> tensor<f32> {
      %y = kiln.resize %x mode = linear coordinates = half_pixel_symmetric
          scales = [0.33, 1.5, 1.4, 1.0] : tensor<3x4x5x2xf32> -> tensor<1x6x7x2xf32>
      %z = kiln.resize %x mode = linear coordinates = asymmetric
          scales = [1.0, 2.0, 1.0, 1.0] : tensor<3x4x5x2xf32> -> tensor<3x8x5x2xf32>
      %l1 = kiln.mse_loss %y, %w reduction = sum : tensor<1x6x7x2xf32>
      %l2 = kiln.mse_loss %z, %v reduction = sum : tensor<3x8x5x2xf32>
      %l = kiln.add %l1, %l2 : tensor<f32>, tensor<f32>
      return %l : tensor<f32>
    })mlir",
                       {0});
}

TEST_F(NNGradientTest, ResizePytorchHalfPixelToOne) {
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<2x5x4xf32>, %w: tensor<2x1x4xf32>) -> tensor<f32> {
      %y = kiln.resize %x mode = linear coordinates = pytorch_half_pixel
          scales = [1.0, 0.2, 1.0] : tensor<2x5x4xf32> -> tensor<2x1x4xf32>
      %l = kiln.mse_loss %y, %w reduction = sum : tensor<2x1x4xf32>
      return %l : tensor<f32>
    })mlir",
                       {0});
}

TEST_F(NNGradientTest, EmbeddingRepeatedIndices) {
  // 12 indices into 7 rows: repeats are certain, so rows accumulate.
  expectGradientsMatch(R"mlir(
    func.func @loss(%t: tensor<7x5xf32>, %i: tensor<3x4xi32>, %w: tensor<3x4x5xf32>)
        -> tensor<f32> {
      %e = kiln.embedding %t, %i : tensor<7x5xf32>, tensor<3x4xi32>
      %l = kiln.mse_loss %e, %w reduction = sum : tensor<3x4x5xf32>
      return %l : tensor<f32>
    })mlir",
                       {0}, withIntBound(7));
}

TEST_F(NNGradientTest, Rope) {
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<2x3x2x6xf32>, %w: tensor<2x3x2x6xf32>) -> tensor<f32> {
      %y = kiln.rope %x theta = 100.0 position_offset = 3 : tensor<2x3x2x6xf32>
      %l = kiln.mse_loss %y, %w reduction = sum : tensor<2x3x2x6xf32>
      return %l : tensor<f32>
    })mlir",
                       {0});
}

TEST_F(NNGradientTest, InverseRope) {
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<2x3x2x6xf32>, %w: tensor<2x3x2x6xf32>) -> tensor<f32> {
      %y = kiln.rope %x theta = 100.0 position_offset = 3 inverse : tensor<2x3x2x6xf32>
      %l = kiln.mse_loss %y, %w reduction = sum : tensor<2x3x2x6xf32>
      return %l : tensor<f32>
    })mlir",
                       {0});
}

TEST_F(NNGradientTest, DropoutWithOffset) {
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<4x6xf32>, %step: tensor<i32>, %w: tensor<4x6xf32>)
        -> tensor<f32> {
      %y = kiln.dropout %x, %step rate = 0.3 seed = 5 stream = 1 : tensor<4x6xf32>
      %l = kiln.mse_loss %y, %w reduction = sum : tensor<4x6xf32>
      return %l : tensor<f32>
    })mlir",
                       {0}, withIntBound(1000));
}

TEST_F(NNGradientTest, DropoutWithoutOffset) {
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<3x5xf32>, %w: tensor<3x5xf32>) -> tensor<f32> {
      %y = kiln.dropout %x rate = 0.5 seed = 11 : tensor<3x5xf32>
      %l = kiln.mse_loss %y, %w reduction = sum : tensor<3x5xf32>
      return %l : tensor<f32>
    })mlir",
                       {0});
}

TEST_F(NNGradientTest, MseLossMean) {
  expectGradientsMatch(R"mlir(
    func.func @loss(%p: tensor<4x3xf32>, %t: tensor<4x3xf32>) -> tensor<f32> {
      %l = kiln.mse_loss %p, %t : tensor<4x3xf32>
      return %l : tensor<f32>
    })mlir",
                       {0, 1});
}

TEST_F(NNGradientTest, MseLossSum) {
  expectGradientsMatch(R"mlir(
    func.func @loss(%p: tensor<2x3x5xf32>, %t: tensor<2x3x5xf32>) -> tensor<f32> {
      %l = kiln.mse_loss %p, %t reduction = sum : tensor<2x3x5xf32>
      return %l : tensor<f32>
    })mlir",
                       {0, 1});
}

TEST_F(NNGradientTest, CrossEntropyMeanSmoothed) {
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<6x5xf32>, %y: tensor<6xi32>) -> tensor<f32> {
      %l = kiln.cross_entropy %x, %y label_smoothing = 0.1 : tensor<6x5xf32>, tensor<6xi32>
      return %l : tensor<f32>
    })mlir",
                       {0}, withIntBound(5));
}

TEST_F(NNGradientTest, CrossEntropySum) {
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<4x7xf32>, %y: tensor<4xi32>) -> tensor<f32> {
      %l = kiln.cross_entropy %x, %y reduction = sum : tensor<4x7xf32>, tensor<4xi32>
      return %l : tensor<f32>
    })mlir",
                       {0}, withIntBound(7));
}

TEST_F(NNGradientTest, CrossEntropyIgnoreIndex) {
  // Rows 1 and 4 are ignored: the mean divides by 4 and their gradient is 0.
  for (const char *reduction : {"mean", "sum"})
    expectGradientsMatch(std::string(R"mlir(
    func.func @loss(%x: tensor<6x5xf32>) -> tensor<f32> {
      %y = kiln.constant dense<[3, -100, 0, 4, -100, 1]> : tensor<6xi32>
      %l = kiln.cross_entropy %x, %y reduction = )mlir") +
                             reduction + R"mlir( label_smoothing = 0.1
          ignore_index = -100 : tensor<6x5xf32>, tensor<6xi32>
      return %l : tensor<f32>
    })mlir",
                         {0});
}

TEST_F(NNGradientTest, CrossEntropyAfterSoftmaxChain) {
  // Logits from a layer norm: the loss gradient flows on through another rule.
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<3x4xf32>, %y: tensor<3xi32>) -> tensor<f32> {
      %n = kiln.layer_norm %x : tensor<3x4xf32>
      %l = kiln.cross_entropy %n, %y reduction = sum label_smoothing = 0.3
          : tensor<3x4xf32>, tensor<3xi32>
      return %l : tensor<f32>
    })mlir",
                       {0}, withIntBound(4));
}

TEST_F(NNGradientTest, BinaryCrossEntropyMean) {
  InputSpec spec{-4.0, 4.0};
  spec.ranges[1] = {0.0, 1.0};
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<5x3xf32>, %t: tensor<5x3xf32>) -> tensor<f32> {
      %l = kiln.binary_cross_entropy %x, %t : tensor<5x3xf32>
      return %l : tensor<f32>
    })mlir",
                       {0, 1}, spec);
}

TEST_F(NNGradientTest, BinaryCrossEntropySum) {
  InputSpec spec{-3.0, 3.0};
  spec.ranges[1] = {0.0, 1.0};
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<2x7xf32>, %t: tensor<2x7xf32>) -> tensor<f32> {
      %l = kiln.binary_cross_entropy %x, %t reduction = sum : tensor<2x7xf32>
      return %l : tensor<f32>
    })mlir",
                       {0, 1}, spec);
}

} // namespace
} // namespace mlir::kiln
