// Channels-last layout assignment keeps what a model computes: the loss and
// every parameter's gradient of NCHW models, before and after the rewrite,
// in f64 on the CPU reference, on fresh random inputs.

#include "compiler/transforms/LayoutAssignment.h"

#include "compiler/autodiff/Autodiff.h"
#include "compiler/interpreter/Interpreter.h"
#include "compiler/testing/KilnTestContext.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace mlir::kiln {
namespace {

/// A residual block as PyTorch exports it (NCHW), with a per-channel bias,
/// a concat over channels and global average pooling.
constexpr const char *kResidual = R"mlir(
func.func @loss(%x: tensor<2x3x8x8xf32>, %w1: tensor<4x3x3x3xf32>,
                %g: tensor<4xf32>, %b: tensor<4xf32>, %w2: tensor<4x4x3x3xf32>,
                %cb: tensor<4x1x1xf32>, %fc: tensor<8x5xf32>,
                %t: tensor<2x5xf32>) -> tensor<f32> {
  %c1 = kiln.conv2d %x, %w1 layout = nchw stride = [1, 1] padding = [1, 1, 1, 1] : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>
  %n1, %m1, %v1 = kiln.batch_norm %c1, %g, %b : tensor<2x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>
  %h1 = kiln.relu %n1 : tensor<2x4x8x8xf32>
  %p = kiln.max_pool2d %h1 layout = nchw kernel = [2, 2] stride = [2, 2] : tensor<2x4x8x8xf32>
  %c2 = kiln.conv2d %p, %w2 layout = nchw padding = [1, 1, 1, 1] : tensor<2x4x4x4xf32>, tensor<4x4x3x3xf32>
  %c2b = kiln.add %c2, %cb : tensor<2x4x4x4xf32>, tensor<4x1x1xf32>
  %r = kiln.add %c2b, %p : tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32>
  %s = kiln.sigmoid %r : tensor<2x4x4x4xf32>
  %cat = kiln.concat %s, %r dim = 1 : tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32>
  %gap = kiln.reduce_mean %cat dims = [2, 3] : tensor<2x8x4x4xf32>
  %o = kiln.matmul %gap, %fc : tensor<2x8xf32>, tensor<8x5xf32>
  %l = kiln.mse_loss %o, %t reduction = mean : tensor<2x5xf32>
  return %l : tensor<f32>
})mlir";

/// A UNet-style path: strided and grouped convolutions, a group norm,
/// average pooling, padding, nearest upsampling, a skip concatenation, an
/// input that enters late (%z) and a flatten into a linear head.
constexpr const char *kUnet = R"mlir(
func.func @loss(%x: tensor<2x4x8x8xf32>, %w1: tensor<8x4x3x3xf32>,
                %w2: tensor<8x2x3x3xf32>, %gw: tensor<8xf32>, %gb: tensor<8xf32>,
                %w3: tensor<4x16x1x1xf32>, %b3: tensor<4xf32>,
                %z: tensor<2x4x4x4xf32>, %fc: tensor<256x3xf32>,
                %t: tensor<2x3xf32>) -> tensor<f32> {
  %c1 = kiln.conv2d %x, %w1 layout = nchw stride = [2, 2] padding = [1, 1, 1, 1] : tensor<2x4x8x8xf32>, tensor<8x4x3x3xf32>
  %a1 = kiln.silu %c1 : tensor<2x8x4x4xf32>
  %c2 = kiln.conv2d %a1, %w2 layout = nchw padding = [1, 1, 1, 1] groups = 4 : tensor<2x8x4x4xf32>, tensor<8x2x3x3xf32>
  %n = kiln.group_norm %c2, %gw, %gb groups = 2 : tensor<2x8x4x4xf32>, tensor<8xf32>, tensor<8xf32>
  %q = kiln.avg_pool2d %n layout = nchw kernel = [2, 2] stride = [2, 2] : tensor<2x8x4x4xf32>
  %pd = kiln.pad %q low = [0, 0, 1, 0] high = [0, 0, 0, 1] : tensor<2x8x2x2xf32>
  %up = kiln.resize %pd mode = nearest coordinates = asymmetric rounding = floor scales = [1.0, 1.0, 1.3333333333333333, 1.3333333333333333] : tensor<2x8x3x3xf32> -> tensor<2x8x4x4xf32>
  %cat = kiln.concat %up, %a1 dim = 1 : tensor<2x8x4x4xf32>, tensor<2x8x4x4xf32>
  %c3 = kiln.conv2d %cat, %w3, %b3 layout = nchw : tensor<2x16x4x4xf32>, tensor<4x16x1x1xf32>, tensor<4xf32>
  %m = kiln.max %c3, %z : tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32>
  %f = kiln.reshape %m : tensor<2x4x4x4xf32> -> tensor<2x64xf32>
  %f2 = kiln.concat %f, %f, %f, %f dim = 1 : tensor<2x64xf32>, tensor<2x64xf32>, tensor<2x64xf32>, tensor<2x64xf32>
  %o = kiln.matmul %f2, %fc : tensor<2x256xf32>, tensor<256x3xf32>
  %l = kiln.mse_loss %o, %t reduction = mean : tensor<2x3xf32>
  return %l : tensor<f32>
})mlir";

class LayoutAssignmentTest : public ::testing::Test,
                             protected KilnTestContext {
protected:
  OwningOpRef<ModuleOp> parse(llvm::StringRef source) {
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(source, &context);
    EXPECT_TRUE(module) << diagnostics;
    return module;
  }

  static func::FuncOp loss(ModuleOp module) {
    return module.lookupSymbol<func::FuncOp>("loss");
  }

  std::vector<ref::Tensor> randomInputs(func::FuncOp function) {
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    std::vector<ref::Tensor> inputs;
    for (Type type : function.getArgumentTypes()) {
      ref::Tensor t = ref::Tensor::ofType(cast<RankedTensorType>(type));
      for (double &x : t.data)
        x = uniform(rng);
      inputs.push_back(std::move(t));
    }
    return inputs;
  }

  /// The loss and the gradients of every argument, in f64.
  std::vector<ref::Tensor> lossAndGradients(func::FuncOp function,
                                            const std::vector<ref::Tensor> &in) {
    std::vector<unsigned> wrt;
    for (unsigned i = 0; i < function.getNumArguments(); ++i)
      wrt.push_back(i);
    FailureOr<func::FuncOp> gradient =
        buildGradientFunction(function, wrt, "loss_gradients");
    EXPECT_TRUE(succeeded(gradient)) << diagnostics;
    if (failed(gradient))
      return {};
    ref::Interpreter interpreter(ref::Precision::F64);
    FailureOr<std::vector<ref::Tensor>> out = interpreter.run(*gradient, in);
    gradient->erase();
    EXPECT_TRUE(succeeded(out)) << diagnostics;
    return succeeded(out) ? *out : std::vector<ref::Tensor>{};
  }

  /// Runs the model before and after the rewrite on the same inputs and
  /// expects the same loss and gradients up to the order of f64 sums.
  void expectSameResults(llvm::StringRef source, int64_t expectedMembers) {
    OwningOpRef<ModuleOp> before = parse(source), after = parse(source);
    ASSERT_TRUE(before && after);
    EXPECT_EQ(assignChannelsLast(loss(*after)), expectedMembers);
    ASSERT_TRUE(succeeded(verify(*after))) << diagnostics;
    std::vector<ref::Tensor> inputs = randomInputs(loss(*before));
    std::vector<ref::Tensor> want = lossAndGradients(loss(*before), inputs);
    std::vector<ref::Tensor> got = lossAndGradients(loss(*after), inputs);
    ASSERT_EQ(want.size(), got.size());
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_EQ(want[i].shape, got[i].shape) << "result " << i;
      double largest = 1e-30, error = 0;
      for (size_t e = 0; e < want[i].data.size(); ++e) {
        largest = std::max(largest, std::abs(want[i].data[e]));
        error = std::max(error, std::abs(want[i].data[e] - got[i].data[e]));
      }
      EXPECT_LT(error / largest, 1e-12)
          << "result " << i << " (0: the loss, then each argument's "
          << "gradient), inputs drawn with seed " << seed;
    }
  }

  uint64_t seed = std::random_device{}();
  std::mt19937_64 rng{seed};
};

TEST_F(LayoutAssignmentTest, ResidualBlockKeepsLossAndGradients) {
  // conv, batch_norm, relu, max_pool, conv, two adds, sigmoid, concat,
  // reduce_mean.
  expectSameResults(kResidual, 10);
}

TEST_F(LayoutAssignmentTest, UnetPathKeepsLossAndGradients) {
  // conv, silu, grouped conv, group_norm, avg_pool, pad, resize, concat,
  // conv, max.
  expectSameResults(kUnet, 10);
}

TEST_F(LayoutAssignmentTest, LeavesGraphsWithoutConvolutionAsWritten) {
  OwningOpRef<ModuleOp> module = parse(R"mlir(
func.func @loss(%x: tensor<2x3x4x4xf32>) -> tensor<f32> {
  %h = kiln.relu %x : tensor<2x3x4x4xf32>
  %p = kiln.max_pool2d %h layout = nchw kernel = [2, 2] stride = [2, 2] : tensor<2x3x4x4xf32>
  %l = kiln.reduce_sum %p dims = [0, 1, 2, 3] : tensor<2x3x2x2xf32>
  return %l : tensor<f32>
})mlir");
  ASSERT_TRUE(module);
  std::string text;
  llvm::raw_string_ostream(text) << *module;
  EXPECT_EQ(assignChannelsLast(loss(*module)), 0);
  std::string after;
  llvm::raw_string_ostream(after) << *module;
  EXPECT_EQ(text, after);
}

} // namespace
} // namespace mlir::kiln
