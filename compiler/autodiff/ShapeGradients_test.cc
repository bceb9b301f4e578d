// Gradient checks of the shape family's rules: every differentiable op and
// operand, against central finite differences on fresh random inputs. Each
// loss is sum(op(x) * w) with a random, non-differentiated weight w.

#include "compiler/autodiff/Autodiff.h"
#include "compiler/autodiff/GradientTestUtils.h"
#include "compiler/interpreter/Interpreter.h"

#include <cmath>

namespace mlir::kiln {
namespace {

class ShapeGradientsTest : public GradientCheckTest {
protected:
  /// Builds the gradient function of `source` with respect to `wrt`, checks
  /// that it verifies and runs it on `inputs`; returns its results (loss,
  /// then one gradient per entry of `wrt`).
  std::vector<ref::Tensor> runGradient(llvm::StringRef source,
                                       std::vector<unsigned> wrt,
                                       std::vector<ref::Tensor> inputs) {
    module = parseSourceString<ModuleOp>(source, &context);
    EXPECT_TRUE(module) << diagnostics;
    if (!module)
      return {};
    func::FuncOp f = *module->getOps<func::FuncOp>().begin();
    FailureOr<func::FuncOp> grad = buildGradientFunction(f, wrt, "grad");
    EXPECT_TRUE(succeeded(grad)) << diagnostics;
    if (failed(grad))
      return {};
    EXPECT_TRUE(succeeded(verify(*module))) << diagnostics;
    ref::Interpreter interpreter(ref::Precision::F64);
    auto results = interpreter.run(*grad, inputs);
    EXPECT_TRUE(succeeded(results)) << diagnostics;
    return succeeded(results) ? *results : std::vector<ref::Tensor>();
  }

  OwningOpRef<ModuleOp> module;
};

TEST_F(ShapeGradientsTest, Reshape) {
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<2x3x5xf32>, %w: tensor<5x6xf32>) -> tensor<f32> {
      %y = kiln.reshape %x : tensor<2x3x5xf32> -> tensor<5x6xf32>
      %p = kiln.mul %y, %w : tensor<5x6xf32>, tensor<5x6xf32>
      %l = kiln.reduce_sum %p dims = [0, 1] : tensor<5x6xf32>
      return %l : tensor<f32>
    })mlir",
                       {0});
}

TEST_F(ShapeGradientsTest, BroadcastTo) {
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<3x1x5xf32>, %w: tensor<2x3x4x5xf32>) -> tensor<f32> {
      %y = kiln.broadcast_to %x : tensor<3x1x5xf32> -> tensor<2x3x4x5xf32>
      %p = kiln.mul %y, %w : tensor<2x3x4x5xf32>, tensor<2x3x4x5xf32>
      %l = kiln.reduce_sum %p dims = [0, 1, 2, 3] : tensor<2x3x4x5xf32>
      return %l : tensor<f32>
    })mlir",
                       {0});
}

TEST_F(ShapeGradientsTest, Transpose) {
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<2x3x5x7xf32>, %w: tensor<5x2x7x3xf32>) -> tensor<f32> {
      %y = kiln.transpose %x perm = [2, 0, 3, 1] : tensor<2x3x5x7xf32>
      %p = kiln.mul %y, %w : tensor<5x2x7x3xf32>, tensor<5x2x7x3xf32>
      %l = kiln.reduce_sum %p dims = [0, 1, 2, 3] : tensor<5x2x7x3xf32>
      return %l : tensor<f32>
    })mlir",
                       {0});
}

TEST_F(ShapeGradientsTest, SliceUnitStep) {
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<4x9xf32>, %w: tensor<2x5xf32>) -> tensor<f32> {
      %y = kiln.slice %x start = [1, 3] limit = [3, 8] step = [1, 1] : tensor<4x9xf32>
      %p = kiln.mul %y, %w : tensor<2x5xf32>, tensor<2x5xf32>
      %l = kiln.reduce_sum %p dims = [0, 1] : tensor<2x5xf32>
      return %l : tensor<f32>
    })mlir",
                       {0});
}

TEST_F(ShapeGradientsTest, SliceWithSteps) {
  // dim 0: step 2 from 1 below 6 -> 1, 3, 5 (limit not reached exactly);
  // dim 1: step 3 from 2 below 11 -> 2, 5, 8; dim 2: step 4 giving one
  // element; dim 3: whole.
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<7x11x5x2xf32>, %w: tensor<3x3x1x2xf32>) -> tensor<f32> {
      %y = kiln.slice %x start = [1, 2, 3, 0] limit = [6, 11, 5, 2] step = [2, 3, 4, 1] : tensor<7x11x5x2xf32>
      %p = kiln.mul %y, %w : tensor<3x3x1x2xf32>, tensor<3x3x1x2xf32>
      %l = kiln.reduce_sum %p dims = [0, 1, 2, 3] : tensor<3x3x1x2xf32>
      return %l : tensor<f32>
    })mlir",
                       {0});
}

TEST_F(ShapeGradientsTest, ConcatEveryInput) {
  expectGradientsMatch(R"mlir(
    func.func @loss(%a: tensor<2x3x5xf32>, %b: tensor<2x1x5xf32>, %c: tensor<2x4x5xf32>,
                    %w: tensor<2x8x5xf32>) -> tensor<f32> {
      %y = kiln.concat %a, %b, %c dim = 1 : tensor<2x3x5xf32>, tensor<2x1x5xf32>, tensor<2x4x5xf32>
      %p = kiln.mul %y, %w : tensor<2x8x5xf32>, tensor<2x8x5xf32>
      %l = kiln.reduce_sum %p dims = [0, 1, 2] : tensor<2x8x5xf32>
      return %l : tensor<f32>
    })mlir",
                       {0, 1, 2});
}

TEST_F(ShapeGradientsTest, Pad) {
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<3x4xf32>, %w: tensor<6x5xf32>) -> tensor<f32> {
      %y = kiln.pad %x low = [2, 0] high = [1, 1] value = 0.75 : tensor<3x4xf32>
      %p = kiln.mul %y, %w : tensor<6x5xf32>, tensor<6x5xf32>
      %l = kiln.reduce_sum %p dims = [0, 1] : tensor<6x5xf32>
      return %l : tensor<f32>
    })mlir",
                       {0});
}

TEST_F(ShapeGradientsTest, Flip) {
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<2x3x5xf32>, %w: tensor<2x3x5xf32>) -> tensor<f32> {
      %y = kiln.flip %x dims = [2, 0] : tensor<2x3x5xf32>
      %p = kiln.mul %y, %w : tensor<2x3x5xf32>, tensor<2x3x5xf32>
      %l = kiln.reduce_sum %p dims = [0, 1, 2] : tensor<2x3x5xf32>
      return %l : tensor<f32>
    })mlir",
                       {0});
}

TEST_F(ShapeGradientsTest, TriuAndTril) {
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<3x4x6xf32>, %w: tensor<3x4x6xf32>) -> tensor<f32> {
      %u = kiln.triu %x diagonal = 1 : tensor<3x4x6xf32>
      %d = kiln.tril %x diagonal = -1 : tensor<3x4x6xf32>
      %e = kiln.exp %d : tensor<3x4x6xf32>
      %s = kiln.add %u, %e : tensor<3x4x6xf32>, tensor<3x4x6xf32>
      %p = kiln.mul %s, %w : tensor<3x4x6xf32>, tensor<3x4x6xf32>
      %l = kiln.reduce_sum %p dims = [0, 1, 2] : tensor<3x4x6xf32>
      return %l : tensor<f32>
    })mlir",
                       {0});
}

TEST_F(ShapeGradientsTest, ReduceSumKeepdim) {
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<3x5x4xf32>, %w: tensor<3x1x4xf32>) -> tensor<f32> {
      %y = kiln.reduce_sum %x dims = [1] keepdim : tensor<3x5x4xf32>
      %e = kiln.exp %y : tensor<3x1x4xf32>
      %p = kiln.mul %e, %w : tensor<3x1x4xf32>, tensor<3x1x4xf32>
      %l = kiln.reduce_sum %p dims = [0, 1, 2] : tensor<3x1x4xf32>
      return %l : tensor<f32>
    })mlir",
                       {0}, InputSpec{-0.5, 0.5});
}

TEST_F(ShapeGradientsTest, ReduceMean) {
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<3x5x7xf32>, %w: tensor<5xf32>, %v: tensor<3x1x7xf32>) -> tensor<f32> {
      %y = kiln.reduce_mean %x dims = [0, 2] : tensor<3x5x7xf32>
      %e = kiln.exp %y : tensor<5xf32>
      %p = kiln.mul %e, %w : tensor<5xf32>, tensor<5xf32>
      %l1 = kiln.reduce_sum %p dims = [0] : tensor<5xf32>
      %k = kiln.reduce_mean %x dims = [1] keepdim : tensor<3x5x7xf32>
      %q = kiln.mul %k, %v : tensor<3x1x7xf32>, tensor<3x1x7xf32>
      %l2 = kiln.reduce_sum %q dims = [0, 1, 2] : tensor<3x1x7xf32>
      %l = kiln.add %l1, %l2 : tensor<f32>, tensor<f32>
      return %l : tensor<f32>
    })mlir",
                       {0});
}

TEST_F(ShapeGradientsTest, ReduceMaxAndMin) {
  // Continuous random inputs: ties have probability zero, and the finite
  // difference step (1e-6) is far below the gaps between elements.
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<4x5x3xf32>, %w: tensor<5xf32>, %v: tensor<4x1x3xf32>) -> tensor<f32> {
      %y = kiln.reduce_max %x dims = [0, 2] : tensor<4x5x3xf32>
      %p = kiln.mul %y, %w : tensor<5xf32>, tensor<5xf32>
      %l1 = kiln.reduce_sum %p dims = [0] : tensor<5xf32>
      %m = kiln.reduce_min %x dims = [1] keepdim : tensor<4x5x3xf32>
      %q = kiln.mul %m, %v : tensor<4x1x3xf32>, tensor<4x1x3xf32>
      %l2 = kiln.reduce_sum %q dims = [0, 1, 2] : tensor<4x1x3xf32>
      %l = kiln.add %l1, %l2 : tensor<f32>, tensor<f32>
      return %l : tensor<f32>
    })mlir",
                       {0});
}

TEST_F(ShapeGradientsTest, ReduceMaxSplitsTiesEvenly) {
  // Row 0 has its max 3 twice, row 1 three times, row 2 once: each maximal
  // element gets g / (number of maxima); the others get nothing.
  ref::Tensor x({3, 4}, ref::ElementKind::F32);
  x.data = {3, 1, 3, -2, /**/ 5, 5, 5, 4, /**/ -1, -3, -2, -4};
  ref::Tensor w({3}, ref::ElementKind::F32);
  w.data = {0.5, -1.5, 2.0};
  std::vector<ref::Tensor> out = runGradient(R"mlir(
    func.func @loss(%x: tensor<3x4xf32>, %w: tensor<3xf32>) -> tensor<f32> {
      %y = kiln.reduce_max %x dims = [1] : tensor<3x4xf32>
      %p = kiln.mul %y, %w : tensor<3xf32>, tensor<3xf32>
      %l = kiln.reduce_sum %p dims = [0] : tensor<3xf32>
      return %l : tensor<f32>
    })mlir",
                                             {0}, {x, w});
  ASSERT_EQ(out.size(), 2u);
  std::vector<double> expected = {0.25,      0,    0.25, 0,
                                  /**/ -0.5, -0.5, -0.5, 0,
                                  /**/ 2.0,  0,    0,    0};
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_DOUBLE_EQ(out[1].data[i], expected[i]) << i;
}

TEST_F(ShapeGradientsTest, ReduceMinNaNGroupGetsNaNGradient) {
  ref::Tensor x({2, 3}, ref::ElementKind::F32);
  x.data = {1, NAN, 2, /**/ 4, -1, 0};
  ref::Tensor w({2}, ref::ElementKind::F32);
  w.data = {1.0, 3.0};
  std::vector<ref::Tensor> out = runGradient(R"mlir(
    func.func @loss(%x: tensor<2x3xf32>, %w: tensor<2xf32>) -> tensor<f32> {
      %y = kiln.reduce_min %x dims = [1] : tensor<2x3xf32>
      %p = kiln.mul %y, %w : tensor<2xf32>, tensor<2xf32>
      %l = kiln.reduce_sum %p dims = [0] : tensor<2xf32>
      return %l : tensor<f32>
    })mlir",
                                             {0}, {x, w});
  ASSERT_EQ(out.size(), 2u);
  for (int i = 0; i < 3; ++i)
    EXPECT_TRUE(std::isnan(out[1].data[i])) << i;
  EXPECT_EQ(out[1].data[3], 0.0);
  EXPECT_EQ(out[1].data[4], 3.0);
  EXPECT_EQ(out[1].data[5], 0.0);
}

/// A loss sum(matmul(a, b) * w) for the given shapes and flags.
std::string matmulLoss(const std::string &lhs, const std::string &rhs,
                       const std::string &out, const std::string &flags,
                       const std::string &allDims) {
  return "func.func @loss(%a: tensor<" + lhs + "xf32>, %b: tensor<" + rhs +
         "xf32>, %w: tensor<" + out +
         "xf32>) -> tensor<f32> {\n"
         "  %y = kiln.matmul %a, %b" +
         flags + " : tensor<" + lhs + "xf32>, tensor<" + rhs +
         "xf32>\n"
         "  %p = kiln.mul %y, %w : tensor<" +
         out + "xf32>, tensor<" + out +
         "xf32>\n"
         "  %l = kiln.reduce_sum %p dims = [" +
         allDims + "] : tensor<" + out +
         "xf32>\n"
         "  return %l : tensor<f32>\n}";
}

TEST_F(ShapeGradientsTest, MatmulEveryTransposeWithBatchBroadcast) {
  // lhs batch [2, 1], rhs batch [3]: the result batch is [2, 3]; both
  // operands' gradients are summed back over their broadcast batch dims.
  const char *m = "5", *k = "4", *n = "3";
  for (bool tl : {false, true})
    for (bool tr : {false, true}) {
      std::string lhs = std::string("2x1x") + (tl ? k : m) + "x" + (tl ? m : k);
      std::string rhs = std::string("3x") + (tr ? n : k) + "x" + (tr ? k : n);
      std::string flags = std::string(tl ? " transpose_lhs" : "") +
                          (tr ? " transpose_rhs" : "");
      SCOPED_TRACE(flags);
      expectGradientsMatch(matmulLoss(lhs, rhs, "2x3x5x3", flags, "0, 1, 2, 3"),
                           {0, 1});
    }
}

TEST_F(ShapeGradientsTest, MatmulUnbatchedLhsAgainstBatchedRhs) {
  expectGradientsMatch(
      matmulLoss("7x6", "2x1x7x3", "2x1x6x3", " transpose_lhs", "0, 1, 2, 3"),
      {0, 1});
}

TEST_F(ShapeGradientsTest, MatmulWeightSharedByEveryBatchRow) {
  // A weight without a batch of its own (2-D, or with unit batch dims)
  // applied to a batched lhs: its gradient is one product over all the
  // batch's rows; with a transposed lhs the batched product and sum stay.
  struct Case {
    const char *lhs, *rhs, *out, *flags;
  };
  for (Case c : {Case{"2x3x5x4", "4x6", "2x3x5x6", ""},
                 Case{"2x3x5x4", "6x4", "2x3x5x6", " transpose_rhs"},
                 Case{"2x3x5x4", "1x4x6", "2x3x5x6", ""},
                 Case{"2x3x4x5", "4x6", "2x3x5x6", " transpose_lhs"}}) {
    SCOPED_TRACE(std::string(c.lhs) + " @ " + c.rhs + c.flags);
    expectGradientsMatch(matmulLoss(c.lhs, c.rhs, c.out, c.flags, "0, 1, 2, 3"),
                         {0, 1});
  }
}

TEST_F(ShapeGradientsTest, MatmulRank2TransposeRhs) {
  expectGradientsMatch(
      matmulLoss("4x9", "5x9", "4x5", " transpose_rhs", "0, 1"), {0, 1});
}

TEST_F(ShapeGradientsTest, MatmulRandomShapes) {
  // Fresh sizes each run: M, K, N in [1, 6], batch dims where either side
  // may be 1 (broadcast) or missing.
  std::uniform_int_distribution<int> size(1, 6), coin(0, 1);
  for (int trial = 0; trial < 4; ++trial) {
    int m = size(rng), k = size(rng), n = size(rng), b0 = size(rng),
        b1 = 1 + size(rng);
    bool tl = coin(rng), tr = coin(rng);
    auto dims = [](std::vector<int> v) {
      std::string s;
      for (size_t i = 0; i < v.size(); ++i)
        s += (i ? "x" : "") + std::to_string(v[i]);
      return s;
    };
    std::vector<int> lhs = {b0, 1, tl ? k : m, tl ? m : k};
    std::vector<int> rhs = {b1, tr ? n : k, tr ? k : n};
    if (coin(rng)) // drop the lhs batch dims altogether
      lhs.erase(lhs.begin(), lhs.begin() + 2);
    std::vector<int> out = {lhs.size() == 4 ? b0 : 1, b1, m, n};
    if (lhs.size() == 2)
      out.erase(out.begin());
    std::string all = out.size() == 4 ? "0, 1, 2, 3" : "0, 1, 2";
    std::string flags =
        std::string(tl ? " transpose_lhs" : "") + (tr ? " transpose_rhs" : "");
    SCOPED_TRACE(dims(lhs) + " @ " + dims(rhs) + flags);
    expectGradientsMatch(
        matmulLoss(dims(lhs), dims(rhs), dims(out), flags, all), {0, 1});
  }
}

TEST_F(ShapeGradientsTest, ChainOfLayoutOps) {
  // Several rules composed, with a reused intermediate.
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<4x6xf32>, %w: tensor<3x4xf32>) -> tensor<f32> {
      %t = kiln.transpose %x perm = [1, 0] : tensor<4x6xf32>
      %s = kiln.slice %t start = [0, 0] limit = [6, 4] step = [2, 1] : tensor<6x4xf32>
      %f = kiln.flip %s dims = [1] : tensor<3x4xf32>
      %c = kiln.concat %f, %s dim = 0 : tensor<3x4xf32>, tensor<3x4xf32>
      %r = kiln.reshape %c : tensor<6x4xf32> -> tensor<3x2x4xf32>
      %m = kiln.reduce_max %r dims = [1] : tensor<3x2x4xf32>
      %p = kiln.mul %m, %w : tensor<3x4xf32>, tensor<3x4xf32>
      %l = kiln.reduce_sum %p dims = [0, 1] : tensor<3x4xf32>
      return %l : tensor<f32>
    })mlir",
                       {0});
}

TEST_F(ShapeGradientsTest, Bf16GradientsKeepTheOperandType) {
  std::vector<ref::Tensor> inputs;
  for (auto shape : {Shape{2, 4, 3}, Shape{5, 3}, Shape{2, 5}}) {
    ref::Tensor t(shape, ref::ElementKind::BF16);
    for (size_t i = 0; i < t.data.size(); ++i)
      t.data[i] = 0.25 * double(int(i % 7) - 3);
    inputs.push_back(t);
  }
  std::vector<ref::Tensor> out = runGradient(R"mlir(
    func.func @loss(%a: tensor<2x4x3xbf16>, %b: tensor<5x3xbf16>, %w: tensor<2x5xbf16>) -> tensor<bf16> {
      %y = kiln.matmul %a, %b transpose_rhs : tensor<2x4x3xbf16>, tensor<5x3xbf16>
      %m = kiln.reduce_mean %y dims = [1] : tensor<2x4x5xbf16>
      %p = kiln.mul %m, %w : tensor<2x5xbf16>, tensor<2x5xbf16>
      %l = kiln.reduce_sum %p dims = [0, 1] : tensor<2x5xbf16>
      return %l : tensor<bf16>
    })mlir",
                                             {0, 1}, inputs);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[1].kind, ref::ElementKind::BF16);
  EXPECT_EQ(out[2].kind, ref::ElementKind::BF16);
  // d/da[i, r, c] = sum_j w[i, j] / 4 * b[j, c].
  const ref::Tensor &b = inputs[1], &w = inputs[2];
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t r = 0; r < 4; ++r)
      for (int64_t c = 0; c < 3; ++c) {
        double expected = 0;
        for (int64_t j = 0; j < 5; ++j)
          expected += w.data[i * 5 + j] / 4 * b.data[j * 3 + c];
        EXPECT_DOUBLE_EQ(out[1].data[(i * 4 + r) * 3 + c], expected);
      }
}

} // namespace
} // namespace mlir::kiln
