// Gradient rules of the elementwise family against central finite
// differences, with broadcasting shapes and every differentiable operand.

#include "compiler/autodiff/Autodiff.h"
#include "compiler/autodiff/GradientTestUtils.h"
#include "compiler/interpreter/Interpreter.h"

#include <string>

namespace mlir::kiln {
namespace {

class ElementwiseGradientTest : public GradientCheckTest {
protected:
  /// sum(op(x) * w) for a unary op on `type` (e.g. "4x3x5xf32"). `attrs`
  /// follows the operand.
  static std::string unaryLoss(const std::string &op, const std::string &type,
                               const std::string &attrs = "") {
    std::string t = "tensor<" + type + ">";
    return "func.func @loss(%x: " + t + ", %w: " + t +
           ") -> tensor<f32> {\n"
           "  %y = kiln." +
           op + " %x " + attrs + " : " + t +
           "\n"
           "  %p = kiln.mul %y, %w : " +
           t + ", " + t +
           "\n"
           "  %l = kiln.reduce_sum %p dims = [0, 1, 2] : " +
           t +
           "\n"
           "  return %l : tensor<f32>\n}";
  }

  /// Like unaryLoss, but the input is x * [1, -1, -1, 1, -1] (broadcast over
  /// the last dim of 4x3x5), so that x drawn away from 0 gives inputs of both
  /// signs that stay clear of the kink at 0.
  static std::string unaryLossMixedSigns(const std::string &op,
                                         const std::string &attrs = "") {
    return R"mlir(
      func.func @loss(%x: tensor<4x3x5xf32>, %w: tensor<4x3x5xf32>) -> tensor<f32> {
        %s = kiln.constant dense<[1.0, -1.0, -1.0, 1.0, -1.0]> : tensor<5xf32>
        %m = kiln.mul %x, %s : tensor<4x3x5xf32>, tensor<5xf32>
        %y = kiln.)mlir" +
           op + " %m " + attrs + R"mlir( : tensor<4x3x5xf32>
        %p = kiln.mul %y, %w : tensor<4x3x5xf32>, tensor<4x3x5xf32>
        %l = kiln.reduce_sum %p dims = [0, 1, 2] : tensor<4x3x5xf32>
        return %l : tensor<f32>
      })mlir";
  }

  /// sum(op(a, b) * w) with a: 4x1x5, b: 3x1 broadcasting to 4x3x5 (or the
  /// given shapes).
  static std::string binaryLoss(const std::string &op,
                                const std::string &lhs = "4x1x5xf32",
                                const std::string &rhs = "3x1xf32",
                                const std::string &out = "4x3x5xf32") {
    std::string a = "tensor<" + lhs + ">", b = "tensor<" + rhs + ">",
                o = "tensor<" + out + ">";
    return "func.func @loss(%a: " + a + ", %b: " + b + ", %w: " + o +
           ") -> tensor<f32> {\n"
           "  %y = kiln." +
           op + " %a, %b : " + a + ", " + b +
           "\n"
           "  %p = kiln.mul %y, %w : " +
           o + ", " + o +
           "\n"
           "  %l = kiln.reduce_sum %p dims = [0, 1, 2] : " +
           o +
           "\n"
           "  return %l : tensor<f32>\n}";
  }

  /// Runs the gradient of `source` with respect to `wrt` on fixed `inputs`
  /// and returns the gradients (not the loss).
  std::vector<ref::Tensor> gradientsAt(llvm::StringRef source,
                                       std::vector<unsigned> wrt,
                                       std::vector<ref::Tensor> inputs) {
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(source, &context);
    EXPECT_TRUE(module) << diagnostics;
    if (!module)
      return {};
    func::FuncOp function = *module->getOps<func::FuncOp>().begin();
    FailureOr<func::FuncOp> gradient =
        buildGradientFunction(function, wrt, "loss_grad");
    EXPECT_TRUE(succeeded(gradient)) << diagnostics;
    if (failed(gradient))
      return {};
    ref::Interpreter interpreter(ref::Precision::F64);
    auto results = interpreter.run(*gradient, inputs);
    EXPECT_TRUE(succeeded(results)) << diagnostics;
    if (failed(results))
      return {};
    return std::vector<ref::Tensor>(results->begin() + 1, results->end());
  }

  static ref::Tensor tensor(llvm::ArrayRef<int64_t> shape,
                            std::vector<double> data) {
    ref::Tensor t(shape, ref::ElementKind::F32);
    t.data = std::move(data);
    return t;
  }
};

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

TEST_F(ElementwiseGradientTest, Neg) {
  expectGradientsMatch(unaryLoss("neg", "4x3x5xf32"), {0});
}

TEST_F(ElementwiseGradientTest, AbsAwayFromZero) {
  expectGradientsMatch(unaryLossMixedSigns("abs"), {0}, InputSpec{0.2, 1.5});
}

TEST_F(ElementwiseGradientTest, Exp) {
  expectGradientsMatch(unaryLoss("exp", "4x3x5xf32"), {0});
}

TEST_F(ElementwiseGradientTest, Log) {
  expectGradientsMatch(unaryLoss("log", "4x3x5xf32"), {0}, InputSpec{0.3, 2.5});
}

TEST_F(ElementwiseGradientTest, Sqrt) {
  expectGradientsMatch(unaryLoss("sqrt", "4x3x5xf32"), {0},
                       InputSpec{0.3, 2.5});
}

TEST_F(ElementwiseGradientTest, Rsqrt) {
  expectGradientsMatch(unaryLoss("rsqrt", "4x3x5xf32"), {0},
                       InputSpec{0.3, 2.5});
}

TEST_F(ElementwiseGradientTest, Sin) {
  expectGradientsMatch(unaryLoss("sin", "4x3x5xf32"), {0}, InputSpec{-4, 4});
}

TEST_F(ElementwiseGradientTest, Cos) {
  expectGradientsMatch(unaryLoss("cos", "4x3x5xf32"), {0}, InputSpec{-4, 4});
}

TEST_F(ElementwiseGradientTest, Tanh) {
  expectGradientsMatch(unaryLoss("tanh", "4x3x5xf32"), {0}, InputSpec{-3, 3});
}

TEST_F(ElementwiseGradientTest, Erf) {
  expectGradientsMatch(unaryLoss("erf", "4x3x5xf32"), {0}, InputSpec{-3, 3});
}

TEST_F(ElementwiseGradientTest, Sigmoid) {
  expectGradientsMatch(unaryLoss("sigmoid", "4x3x5xf32"), {0},
                       InputSpec{-4, 4});
}

TEST_F(ElementwiseGradientTest, ReluAwayFromZero) {
  expectGradientsMatch(unaryLossMixedSigns("relu"), {0}, InputSpec{0.2, 1.5});
}

TEST_F(ElementwiseGradientTest, Silu) {
  expectGradientsMatch(unaryLoss("silu", "4x3x5xf32"), {0}, InputSpec{-4, 4});
}

TEST_F(ElementwiseGradientTest, GeluExact) {
  expectGradientsMatch(unaryLoss("gelu", "4x3x5xf32"), {0}, InputSpec{-4, 4});
}

TEST_F(ElementwiseGradientTest, GeluTanh) {
  expectGradientsMatch(unaryLoss("gelu", "4x3x5xf32", "approximate = tanh"),
                       {0}, InputSpec{-4, 4});
}

TEST_F(ElementwiseGradientTest, LeakyReluDefaultAlpha) {
  expectGradientsMatch(unaryLossMixedSigns("leaky_relu"), {0},
                       InputSpec{0.2, 1.5});
}

TEST_F(ElementwiseGradientTest, LeakyReluAlpha) {
  expectGradientsMatch(unaryLossMixedSigns("leaky_relu", "alpha = 0.3"), {0},
                       InputSpec{0.2, 1.5});
}

TEST_F(ElementwiseGradientTest, Bf16UnaryChain) {
  // bf16 operands get bf16 gradients (the pass checks the types).
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<3x7xbf16>, %w: tensor<3x7xbf16>) -> tensor<bf16> {
      %a = kiln.gelu %x : tensor<3x7xbf16>
      %b = kiln.leaky_relu %a alpha = 0.2 : tensor<3x7xbf16>
      %c = kiln.silu %b : tensor<3x7xbf16>
      %d = kiln.gelu %c approximate = tanh : tensor<3x7xbf16>
      %p = kiln.mul %d, %w : tensor<3x7xbf16>, tensor<3x7xbf16>
      %l = kiln.reduce_sum %p dims = [0, 1] : tensor<3x7xbf16>
      return %l : tensor<bf16>
    })mlir",
                       {0}, InputSpec{0.1, 2});
}

TEST_F(ElementwiseGradientTest, CastFloatToFloatBothWays) {
  // f32 -> bf16 -> f16 -> f32: each gradient is cast back to its input type.
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<2x3x5xf32>, %v: tensor<3x5xbf16>, %w: tensor<2x3x5xf32>) -> tensor<f32> {
      %a = kiln.cast %x : tensor<2x3x5xf32> to tensor<2x3x5xbf16>
      %b = kiln.mul %a, %v : tensor<2x3x5xbf16>, tensor<3x5xbf16>
      %c = kiln.cast %b : tensor<2x3x5xbf16> to tensor<2x3x5xf16>
      %d = kiln.tanh %c : tensor<2x3x5xf16>
      %e = kiln.cast %d : tensor<2x3x5xf16> to tensor<2x3x5xf32>
      %p = kiln.mul %e, %w : tensor<2x3x5xf32>, tensor<2x3x5xf32>
      %l = kiln.reduce_sum %p dims = [0, 1, 2] : tensor<2x3x5xf32>
      return %l : tensor<f32>
    })mlir",
                       {0, 1});
}

TEST_F(ElementwiseGradientTest, CastThroughIntegerPassesNoGradient) {
  // floor(x) via i32 is piecewise constant: only the direct path counts.
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<4x3xf32>, %w: tensor<4x3xf32>) -> tensor<f32> {
      %i = kiln.cast %x : tensor<4x3xf32> to tensor<4x3xi32>
      %f = kiln.cast %i : tensor<4x3xi32> to tensor<4x3xf32>
      %s = kiln.add %f, %x : tensor<4x3xf32>, tensor<4x3xf32>
      %p = kiln.mul %s, %w : tensor<4x3xf32>, tensor<4x3xf32>
      %l = kiln.reduce_sum %p dims = [0, 1] : tensor<4x3xf32>
      return %l : tensor<f32>
    })mlir",
                       {0}, InputSpec{0.1, 0.9});
}

//===----------------------------------------------------------------------===//
// Binary
//===----------------------------------------------------------------------===//

TEST_F(ElementwiseGradientTest, AddBroadcast) {
  expectGradientsMatch(binaryLoss("add"), {0, 1});
}

TEST_F(ElementwiseGradientTest, SubBroadcast) {
  expectGradientsMatch(binaryLoss("sub"), {0, 1});
  expectGradientsMatch(binaryLoss("sub", "3x1xf32", "2x1x5xf32", "2x3x5xf32"),
                       {0, 1});
}

TEST_F(ElementwiseGradientTest, MulBroadcast) {
  expectGradientsMatch(binaryLoss("mul"), {0, 1});
  expectGradientsMatch(binaryLoss("mul", "f32", "2x3x5xf32", "2x3x5xf32"),
                       {0, 1});
}

TEST_F(ElementwiseGradientTest, DivBroadcast) {
  InputSpec spec;
  spec.ranges[1] = {0.5, 2.0};
  expectGradientsMatch(binaryLoss("div"), {0, 1}, spec);
  // A negative divisor, kept as far from the pole at zero as the positive one.
  InputSpec negative;
  negative.ranges[1] = {-2.0, -0.5};
  expectGradientsMatch(binaryLoss("div", "3x1xf32", "2x1x5xf32", "2x3x5xf32"),
                       {0, 1}, negative);
}

TEST_F(ElementwiseGradientTest, PowBroadcastBaseAndExponent) {
  InputSpec spec;
  spec.ranges[0] = {0.3, 2.0}; // base > 0
  spec.ranges[1] = {-1.5, 2.5};
  expectGradientsMatch(binaryLoss("pow"), {0, 1}, spec);
  expectGradientsMatch(binaryLoss("pow", "3x1xf32", "2x1x5xf32", "2x3x5xf32"),
                       {0, 1}, spec);
}

TEST_F(ElementwiseGradientTest, MaxBroadcast) {
  expectGradientsMatch(binaryLoss("max"), {0, 1});
}

TEST_F(ElementwiseGradientTest, MinBroadcast) {
  expectGradientsMatch(binaryLoss("min", "3x1xf32", "2x1x5xf32", "2x3x5xf32"),
                       {0, 1});
}

TEST_F(ElementwiseGradientTest, SelectBothValuesBroadcast) {
  InputSpec spec;
  spec.intBound = 2;
  expectGradientsMatch(R"mlir(
    func.func @loss(%c: tensor<3x5xi1>, %t: tensor<4x1x5xf32>, %f: tensor<3x1xf32>, %w: tensor<4x3x5xf32>) -> tensor<f32> {
      %y = kiln.select %c, %t, %f : tensor<3x5xi1>, tensor<4x1x5xf32>, tensor<3x1xf32>
      %p = kiln.mul %y, %w : tensor<4x3x5xf32>, tensor<4x3x5xf32>
      %l = kiln.reduce_sum %p dims = [0, 1, 2] : tensor<4x3x5xf32>
      return %l : tensor<f32>
    })mlir",
                       {1, 2}, spec);
}

TEST_F(ElementwiseGradientTest, ChainOfEveryBinaryOpInBf16) {
  InputSpec spec{0.5, 1.5};
  expectGradientsMatch(R"mlir(
    func.func @loss(%a: tensor<2x1x3xbf16>, %b: tensor<4x1xbf16>, %w: tensor<2x4x3xbf16>) -> tensor<bf16> {
      %0 = kiln.pow %a, %b : tensor<2x1x3xbf16>, tensor<4x1xbf16>
      %1 = kiln.div %0, %b : tensor<2x4x3xbf16>, tensor<4x1xbf16>
      %2 = kiln.sub %1, %a : tensor<2x4x3xbf16>, tensor<2x1x3xbf16>
      %3 = kiln.max %2, %w : tensor<2x4x3xbf16>, tensor<2x4x3xbf16>
      %4 = kiln.min %3, %a : tensor<2x4x3xbf16>, tensor<2x1x3xbf16>
      %p = kiln.mul %4, %w : tensor<2x4x3xbf16>, tensor<2x4x3xbf16>
      %l = kiln.reduce_sum %p dims = [0, 1, 2] : tensor<2x4x3xbf16>
      return %l : tensor<bf16>
    })mlir",
                       {0, 1}, spec);
}

//===----------------------------------------------------------------------===//
// Documented choices at kinks, checked at exact points
//===----------------------------------------------------------------------===//

TEST_F(ElementwiseGradientTest, MaxMinSplitTiesEvenly) {
  for (const char *op : {"max", "min"}) {
    std::vector<ref::Tensor> grads = gradientsAt(
        binaryLoss(op, "1x1x4xf32", "1x1x4xf32", "1x1x4xf32"), {0, 1},
        {tensor({1, 1, 4}, {1.0, 2.0, -3.0, 0.5}),
         tensor({1, 1, 4}, {1.0, 1.0, 4.0, 0.5}),
         tensor({1, 1, 4}, {2.0, 3.0, 5.0, -7.0})});
    ASSERT_EQ(grads.size(), 2u) << op;
    bool isMax = std::string(op) == "max";
    // Ties at elements 0 and 3 split the weight in halves.
    EXPECT_EQ(grads[0].data, (std::vector<double>{1.0, isMax ? 3.0 : 0.0,
                                                  isMax ? 0.0 : 5.0, -3.5}))
        << op;
    EXPECT_EQ(grads[1].data, (std::vector<double>{1.0, isMax ? 0.0 : 3.0,
                                                  isMax ? 5.0 : 0.0, -3.5}))
        << op;
  }
}

TEST_F(ElementwiseGradientTest, KinksAndSingularPoints) {
  // relu and leaky_relu take the left derivative at 0, abs takes 0, and
  // exact gelu has derivative 1/2 at 0 (where y / x would be 0 / 0).
  std::string source = R"mlir(
    func.func @loss(%x: tensor<3xf32>, %w: tensor<3xf32>) -> tensor<f32> {
      %r = kiln.relu %x : tensor<3xf32>
      %k = kiln.leaky_relu %x alpha = 0.25 : tensor<3xf32>
      %a = kiln.abs %x : tensor<3xf32>
      %g = kiln.gelu %x : tensor<3xf32>
      %s0 = kiln.add %r, %k : tensor<3xf32>, tensor<3xf32>
      %s1 = kiln.add %a, %g : tensor<3xf32>, tensor<3xf32>
      %s = kiln.add %s0, %s1 : tensor<3xf32>, tensor<3xf32>
      %p = kiln.mul %s, %w : tensor<3xf32>, tensor<3xf32>
      %l = kiln.reduce_sum %p dims = [0] : tensor<3xf32>
      return %l : tensor<f32>
    })mlir";
  std::vector<ref::Tensor> grads = gradientsAt(
      source, {0},
      {tensor({3}, {0.0, 1e-12, -1e-12}), tensor({3}, {2.0, 4.0, 8.0})});
  ASSERT_EQ(grads.size(), 1u);
  // x = 0: relu 0, leaky 0.25, abs 0, gelu 0.5.
  EXPECT_DOUBLE_EQ(grads[0].data[0], 2.0 * 0.75);
  // Tiny x: relu 1 / 0, leaky 1 / 0.25, abs +-1, gelu ~0.5 (no 0/0 trouble).
  EXPECT_NEAR(grads[0].data[1], 4.0 * (1 + 1 + 1 + 0.5), 1e-9);
  EXPECT_NEAR(grads[0].data[2], 8.0 * (0 + 0.25 - 1 + 0.5), 1e-9);
}

TEST_F(ElementwiseGradientTest, PowExponentGradientAtZeroBase) {
  std::vector<ref::Tensor> grads = gradientsAt(
      binaryLoss("pow", "1x1x3xf32", "1x1x3xf32", "1x1x3xf32"), {0, 1},
      {tensor({1, 1, 3}, {0.0, 0.0, 2.0}), tensor({1, 1, 3}, {2.0, 1.0, 3.0}),
       tensor({1, 1, 3}, {1.0, 1.0, 1.0})});
  ASSERT_EQ(grads.size(), 2u);
  EXPECT_EQ(grads[0].data, (std::vector<double>{0.0, 1.0, 12.0}));
  EXPECT_EQ(grads[1].data[0], 0.0);
  EXPECT_EQ(grads[1].data[1], 0.0);
  EXPECT_DOUBLE_EQ(grads[1].data[2], 8.0 * std::log(2.0));
}

} // namespace
} // namespace mlir::kiln
