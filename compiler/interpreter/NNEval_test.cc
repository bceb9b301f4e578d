// Evaluators of the neural-network ops and losses against straightforward
// computations written out here (direct index formulas, no shared code), on
// fresh random inputs.

#include "compiler/interpreter/Interpreter.h"
#include "runtime/random/philox.h"

#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

namespace mlir::kiln::ref {
namespace {

class NNEvalTest : public ::testing::Test {
protected:
  NNEvalTest() {
    context.loadDialect<KilnDialect, func::FuncDialect>();
    context.getDiagEngine().registerHandler([this](Diagnostic &diag) {
      diagnostics += diag.str() + "\n";
      return success();
    });
  }

  /// Parses `source` and runs its first function on `inputs`.
  std::vector<Tensor> run(llvm::StringRef source, std::vector<Tensor> inputs,
                          Precision precision = Precision::F64) {
    module = parseSourceString<ModuleOp>(source, &context);
    EXPECT_TRUE(module) << diagnostics;
    if (!module)
      return {};
    Interpreter interpreter(precision);
    auto results =
        interpreter.run(*module->getOps<func::FuncOp>().begin(), inputs);
    EXPECT_TRUE(succeeded(results)) << diagnostics;
    return succeeded(results) ? *results : std::vector<Tensor>{};
  }

  /// Parses `source`, expects its first function to fail on `inputs` and
  /// returns the diagnostics.
  std::string runError(llvm::StringRef source, std::vector<Tensor> inputs) {
    module = parseSourceString<ModuleOp>(source, &context);
    EXPECT_TRUE(module) << diagnostics;
    if (!module)
      return "";
    diagnostics.clear();
    Interpreter interpreter(Precision::F64);
    EXPECT_TRUE(failed(
        interpreter.run(*module->getOps<func::FuncOp>().begin(), inputs)));
    return diagnostics;
  }

  Tensor random(llvm::ArrayRef<int64_t> shape, double low = -2.0,
                double high = 2.0, ElementKind kind = ElementKind::F32) {
    Tensor t(shape, kind);
    std::uniform_real_distribution<double> dist(low, high);
    for (double &x : t.data)
      x = dist(rng);
    return t;
  }

  Tensor randomIndices(llvm::ArrayRef<int64_t> shape, int64_t bound) {
    Tensor t(shape, ElementKind::I32);
    std::uniform_int_distribution<int64_t> dist(0, bound - 1);
    for (double &x : t.data)
      x = double(dist(rng));
    return t;
  }

  static void expectClose(const Tensor &actual,
                          const std::vector<double> &expected,
                          double tolerance = 1e-12) {
    ASSERT_EQ(actual.data.size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i)
      EXPECT_NEAR(actual.data[i], expected[i],
                  tolerance * std::max(1.0, std::abs(expected[i])))
          << "at flat index " << i;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  std::string diagnostics;
  std::mt19937_64 rng{std::random_device{}()};
};

//===----------------------------------------------------------------------===//
// Softmax
//===----------------------------------------------------------------------===//

TEST_F(NNEvalTest, SoftmaxAndLogSoftmaxMiddleDim) {
  Tensor x = random({3, 5, 4}, -3, 3);
  auto r = run(R"mlir(
    func.func @f(%x: tensor<3x5x4xf32>) -> (tensor<3x5x4xf32>, tensor<3x5x4xf32>) {
      %s = kiln.softmax %x dim = 1 : tensor<3x5x4xf32>
      %l = kiln.log_softmax %x dim = 1 : tensor<3x5x4xf32>
      return %s, %l : tensor<3x5x4xf32>, tensor<3x5x4xf32>
    })mlir",
               {x});
  ASSERT_EQ(r.size(), 2u);
  std::vector<double> soft(60), logSoft(60);
  for (int a = 0; a < 3; ++a)
    for (int c = 0; c < 4; ++c) {
      double sum = 0;
      for (int b = 0; b < 5; ++b)
        sum += std::exp(x.data[(a * 5 + b) * 4 + c]);
      for (int b = 0; b < 5; ++b) {
        int i = (a * 5 + b) * 4 + c;
        soft[i] = std::exp(x.data[i]) / sum;
        logSoft[i] = x.data[i] - std::log(sum);
      }
    }
  expectClose(r[0], soft);
  expectClose(r[1], logSoft);
}

TEST_F(NNEvalTest, SoftmaxIsStableForLargeInputs) {
  // exp(1000) overflows; subtracting the maximum must keep results exact.
  Tensor x({2, 3}, ElementKind::F32);
  x.data = {1000, 1001, 1002, -1000, -1001, -1003};
  auto r = run(R"mlir(
    func.func @f(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
      %s = kiln.softmax %x dim = 1 : tensor<2x3xf32>
      %l = kiln.log_softmax %x dim = 1 : tensor<2x3xf32>
      return %s, %l : tensor<2x3xf32>, tensor<2x3xf32>
    })mlir",
               {x});
  ASSERT_EQ(r.size(), 2u);
  double z0 = 1 + std::exp(1.0) + std::exp(2.0);
  double z1 = 1 + std::exp(-1.0) + std::exp(-3.0);
  expectClose(r[0], {1 / z0, std::exp(1.0) / z0, std::exp(2.0) / z0, 1 / z1,
                     std::exp(-1.0) / z1, std::exp(-3.0) / z1});
  expectClose(r[1], {-std::log(z0), 1 - std::log(z0), 2 - std::log(z0),
                     -std::log(z1), -1 - std::log(z1), -3 - std::log(z1)});
}

TEST_F(NNEvalTest, SoftmaxBf16RoundsInF32Mode) {
  Tensor x = random({4, 9}, -2, 2, ElementKind::BF16);
  for (double &v : x.data)
    v = roundToStorage(v, ElementKind::BF16, Precision::F32);
  auto r = run(R"mlir(
    func.func @f(%x: tensor<4x9xbf16>) -> tensor<4x9xbf16> {
      %s = kiln.softmax %x dim = 1 : tensor<4x9xbf16>
      return %s : tensor<4x9xbf16>
    })mlir",
               {x}, Precision::F32);
  ASSERT_EQ(r.size(), 1u);
  for (int i = 0; i < 4; ++i) {
    double sum = 0;
    for (int j = 0; j < 9; ++j)
      sum += std::exp(x.data[i * 9 + j]);
    for (int j = 0; j < 9; ++j) {
      double v = r[0].data[i * 9 + j];
      EXPECT_EQ(v, roundToStorage(v, ElementKind::BF16, Precision::F32));
      EXPECT_NEAR(v, std::exp(x.data[i * 9 + j]) / sum, 1.0 / 128);
    }
  }
}

//===----------------------------------------------------------------------===//
// Normalisation
//===----------------------------------------------------------------------===//

TEST_F(NNEvalTest, LayerNormTwoDimsWeightBias) {
  Tensor x = random({3, 4, 5}, -3, 5), w = random({4, 5}), b = random({4, 5});
  auto r = run(R"mlir(
    func.func @f(%x: tensor<3x4x5xf32>, %w: tensor<4x5xf32>, %b: tensor<4x5xf32>)
        -> (tensor<3x4x5xf32>, tensor<3x4x5xf32>) {
      %y = kiln.layer_norm %x, %w, %b dims = 2 eps = 1.0e-03
          : tensor<3x4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>
      %z = kiln.layer_norm %x : tensor<3x4x5xf32>
      return %y, %z : tensor<3x4x5xf32>, tensor<3x4x5xf32>
    })mlir",
               {x, w, b});
  ASSERT_EQ(r.size(), 2u);
  std::vector<double> y(60), z(60);
  for (int a = 0; a < 3; ++a) {
    double mean = 0, var = 0;
    for (int j = 0; j < 20; ++j)
      mean += x.data[a * 20 + j] / 20;
    for (int j = 0; j < 20; ++j)
      var += std::pow(x.data[a * 20 + j] - mean, 2) / 20;
    for (int j = 0; j < 20; ++j)
      y[a * 20 + j] =
          (x.data[a * 20 + j] - mean) / std::sqrt(var + 1e-3) * w.data[j] +
          b.data[j];
  }
  for (int row = 0; row < 12; ++row) {
    double mean = 0, var = 0;
    for (int j = 0; j < 5; ++j)
      mean += x.data[row * 5 + j] / 5;
    for (int j = 0; j < 5; ++j)
      var += std::pow(x.data[row * 5 + j] - mean, 2) / 5;
    for (int j = 0; j < 5; ++j)
      z[row * 5 + j] = (x.data[row * 5 + j] - mean) / std::sqrt(var + 1e-5);
  }
  expectClose(r[0], y, 1e-11);
  expectClose(r[1], z, 1e-11);
}

TEST_F(NNEvalTest, RmsNorm) {
  Tensor x = random({2, 3, 6}), w = random({6});
  auto r = run(R"mlir(
    func.func @f(%x: tensor<2x3x6xf32>, %w: tensor<6xf32>) -> (tensor<2x3x6xf32>, tensor<2x3x6xf32>) {
      %y = kiln.rms_norm %x, %w eps = 1.0e-02 : tensor<2x3x6xf32>, tensor<6xf32>
      %z = kiln.rms_norm %x : tensor<2x3x6xf32>
      return %y, %z : tensor<2x3x6xf32>, tensor<2x3x6xf32>
    })mlir",
               {x, w});
  ASSERT_EQ(r.size(), 2u);
  std::vector<double> y(36), z(36);
  for (int row = 0; row < 6; ++row) {
    double ms = 0;
    for (int j = 0; j < 6; ++j)
      ms += x.data[row * 6 + j] * x.data[row * 6 + j] / 6;
    for (int j = 0; j < 6; ++j) {
      y[row * 6 + j] = x.data[row * 6 + j] / std::sqrt(ms + 1e-2) * w.data[j];
      z[row * 6 + j] = x.data[row * 6 + j] / std::sqrt(ms + 1e-5);
    }
  }
  expectClose(r[0], y, 1e-11);
  expectClose(r[1], z, 1e-11);
}

TEST_F(NNEvalTest, BatchNormChannelsLast) {
  Tensor x = random({3, 2, 4, 5}, 1, 4), g = random({5}), b = random({5});
  auto r = run(R"mlir(
    func.func @f(%x: tensor<3x2x4x5xf32>, %g: tensor<5xf32>, %b: tensor<5xf32>)
        -> (tensor<3x2x4x5xf32>, tensor<5xf32>, tensor<5xf32>) {
      %y, %m, %v = kiln.batch_norm %x, %g, %b dim = 3 eps = 1.0e-03
          : tensor<3x2x4x5xf32>, tensor<5xf32>, tensor<5xf32>
      return %y, %m, %v : tensor<3x2x4x5xf32>, tensor<5xf32>, tensor<5xf32>
    })mlir",
               {x, g, b});
  ASSERT_EQ(r.size(), 3u);
  std::vector<double> y(120), mean(5, 0), var(5, 0);
  for (int i = 0; i < 120; ++i)
    mean[i % 5] += x.data[i] / 24;
  for (int i = 0; i < 120; ++i)
    var[i % 5] += std::pow(x.data[i] - mean[i % 5], 2) / 24;
  for (int i = 0; i < 120; ++i)
    y[i] = (x.data[i] - mean[i % 5]) / std::sqrt(var[i % 5] + 1e-3) *
               g.data[i % 5] +
           b.data[i % 5];
  expectClose(r[0], y, 1e-11);
  expectClose(r[1], mean);
  expectClose(r[2], var);
}

TEST_F(NNEvalTest, BatchNormRank3) {
  Tensor x = random({4, 3, 5}), g = random({3}), b = random({3});
  auto r = run(R"mlir(
    func.func @f(%x: tensor<4x3x5xf32>, %g: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<4x3x5xf32> {
      %y, %m, %v = kiln.batch_norm %x, %g, %b : tensor<4x3x5xf32>, tensor<3xf32>, tensor<3xf32>
      return %y : tensor<4x3x5xf32>
    })mlir",
               {x, g, b});
  ASSERT_EQ(r.size(), 1u);
  std::vector<double> y(60);
  for (int c = 0; c < 3; ++c) {
    double mean = 0, var = 0;
    for (int n = 0; n < 4; ++n)
      for (int l = 0; l < 5; ++l)
        mean += x.data[(n * 3 + c) * 5 + l] / 20;
    for (int n = 0; n < 4; ++n)
      for (int l = 0; l < 5; ++l)
        var += std::pow(x.data[(n * 3 + c) * 5 + l] - mean, 2) / 20;
    for (int n = 0; n < 4; ++n)
      for (int l = 0; l < 5; ++l) {
        int i = (n * 3 + c) * 5 + l;
        y[i] =
            (x.data[i] - mean) / std::sqrt(var + 1e-5) * g.data[c] + b.data[c];
      }
  }
  expectClose(r[0], y, 1e-11);
}

TEST_F(NNEvalTest, BatchNormUpdatesRunningStatistics) {
  Tensor x = random({4, 3, 5}), g = random({3}), b = random({3}),
         rm = random({3}), rv = random({3}, 0.5, 2.0);
  auto r = run(R"mlir(
    func.func @f(%x: tensor<4x3x5xf32>, %g: tensor<3xf32>, %b: tensor<3xf32>,
                 %rm: tensor<3xf32>, %rv: tensor<3xf32>)
        -> (tensor<4x3x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
      %y, %m, %v, %rm1, %rv1 = kiln.batch_norm %x, %g, %b running %rm, %rv momentum = 0.3
          : tensor<4x3x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
      return %y, %v, %rm1, %rv1 : tensor<4x3x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
    })mlir",
               {x, g, b, rm, rv});
  ASSERT_EQ(r.size(), 4u);
  std::vector<double> y(60), var(3), newMean(3), newVar(3);
  for (int c = 0; c < 3; ++c) {
    double mean = 0, m2 = 0;
    for (int n = 0; n < 4; ++n)
      for (int l = 0; l < 5; ++l)
        mean += x.data[(n * 3 + c) * 5 + l] / 20;
    for (int n = 0; n < 4; ++n)
      for (int l = 0; l < 5; ++l)
        m2 += std::pow(x.data[(n * 3 + c) * 5 + l] - mean, 2);
    // The batch is normalised with the biased variance; the running
    // variance follows the unbiased one (PyTorch).
    var[c] = m2 / 20;
    newMean[c] = 0.7 * rm.data[c] + 0.3 * mean;
    newVar[c] = 0.7 * rv.data[c] + 0.3 * m2 / 19;
    for (int n = 0; n < 4; ++n)
      for (int l = 0; l < 5; ++l) {
        int i = (n * 3 + c) * 5 + l;
        y[i] = (x.data[i] - mean) / std::sqrt(var[c] + 1e-5) * g.data[c] +
               b.data[c];
      }
  }
  expectClose(r[0], y, 1e-11);
  expectClose(r[1], var);
  expectClose(r[2], newMean);
  expectClose(r[3], newVar);
}

TEST_F(NNEvalTest, BatchNormEvalNormalisesWithRunningStatistics) {
  Tensor x = random({3, 2, 4}), g = random({4}), b = random({4}),
         rm = random({4}), rv = random({4}, 0.5, 2.0);
  auto r = run(R"mlir(
    func.func @f(%x: tensor<3x2x4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>,
                 %rm: tensor<4xf32>, %rv: tensor<4xf32>)
        -> (tensor<3x2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
      %y:5 = kiln.batch_norm %x, %g, %b running %rm, %rv eval dim = 2 eps = 1.0e-03
          : tensor<3x2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
      return %y#0, %y#1, %y#2, %y#3, %y#4
          : tensor<3x2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
    })mlir",
               {x, g, b, rm, rv});
  ASSERT_EQ(r.size(), 5u);
  std::vector<double> y(24);
  for (int i = 0; i < 24; ++i)
    y[i] = (x.data[i] - rm.data[i % 4]) / std::sqrt(rv.data[i % 4] + 1e-3) *
               g.data[i % 4] +
           b.data[i % 4];
  expectClose(r[0], y, 1e-11);
  // Nothing is updated: the statistics used are the running ones.
  for (int k : {1, 3})
    expectClose(r[k], rm.data);
  for (int k : {2, 4})
    expectClose(r[k], rv.data);
}

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

struct ConvCase {
  bool nhwc;
  int n, c, h, w, o, kh, kw, sh, sw, top, bottom, left, right, dh, dw, groups;
  bool bias;
};

/// Straightforward conv2d over NCHW index names, whatever the storage layout.
std::vector<double> naiveConv(const ConvCase &k, const Tensor &x,
                              const Tensor &f, const Tensor *b, int oh,
                              int ow) {
  auto xAt = [&](int n, int c, int h, int w) {
    return k.nhwc ? x.data[((n * k.h + h) * k.w + w) * k.c + c]
                  : x.data[((n * k.c + c) * k.h + h) * k.w + w];
  };
  int cg = k.c / k.groups, og = k.o / k.groups;
  auto fAt = [&](int o, int c, int i, int j) {
    return k.nhwc ? f.data[((o * k.kh + i) * k.kw + j) * cg + c]
                  : f.data[((o * cg + c) * k.kh + i) * k.kw + j];
  };
  std::vector<double> y(k.n * k.o * oh * ow);
  for (int n = 0; n < k.n; ++n)
    for (int o = 0; o < k.o; ++o)
      for (int r = 0; r < oh; ++r)
        for (int s = 0; s < ow; ++s) {
          double sum = b ? b->data[o] : 0.0;
          for (int c = 0; c < cg; ++c)
            for (int i = 0; i < k.kh; ++i)
              for (int j = 0; j < k.kw; ++j) {
                int ih = r * k.sh - k.top + i * k.dh;
                int iw = s * k.sw - k.left + j * k.dw;
                if (ih >= 0 && ih < k.h && iw >= 0 && iw < k.w)
                  sum += xAt(n, (o / og) * cg + c, ih, iw) * fAt(o, c, i, j);
              }
          int index = k.nhwc ? ((n * oh + r) * ow + s) * k.o + o
                             : ((n * k.o + o) * oh + r) * ow + s;
          y[index] = sum;
        }
  return y;
}

std::string shapeType(llvm::ArrayRef<int64_t> shape) {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s + "f32>";
}

class NNConvEvalTest : public NNEvalTest,
                       public ::testing::WithParamInterface<ConvCase> {};

TEST_P(NNConvEvalTest, MatchesDirectFormula) {
  ConvCase k = GetParam();
  int oh = (k.h + k.top + k.bottom - k.dh * (k.kh - 1) - 1) / k.sh + 1;
  int ow = (k.w + k.left + k.right - k.dw * (k.kw - 1) - 1) / k.sw + 1;
  int cg = k.c / k.groups;
  Shape xs = k.nhwc ? Shape{k.n, k.h, k.w, k.c} : Shape{k.n, k.c, k.h, k.w};
  Shape fs = k.nhwc ? Shape{k.o, k.kh, k.kw, cg} : Shape{k.o, cg, k.kh, k.kw};
  Shape ys = k.nhwc ? Shape{k.n, oh, ow, k.o} : Shape{k.n, k.o, oh, ow};
  Tensor x = random(xs), f = random(fs), b = random({k.o});
  auto list = [](std::initializer_list<int> v) {
    std::string s = "[";
    for (int e : v)
      s += (s.size() > 1 ? ", " : "") + std::to_string(e);
    return s + "]";
  };
  std::string source =
      "func.func @f(%x: " + shapeType(xs) + ", %w: " + shapeType(fs) +
      ", %b: tensor<" + std::to_string(k.o) + "xf32>) -> " + shapeType(ys) +
      " {\n  %y = kiln.conv2d %x, %w" + (k.bias ? ", %b" : "") +
      " layout = " + (k.nhwc ? "nhwc" : "nchw") +
      " stride = " + list({k.sh, k.sw}) +
      " padding = " + list({k.top, k.bottom, k.left, k.right}) +
      " dilation = " + list({k.dh, k.dw}) +
      " groups = " + std::to_string(k.groups) + " : " + shapeType(xs) + ", " +
      shapeType(fs) +
      (k.bias ? ", tensor<" + std::to_string(k.o) + "xf32>" : "") +
      "\n  return %y : " + shapeType(ys) + "\n}";
  auto r = run(source, {x, f, b});
  ASSERT_EQ(r.size(), 1u) << source;
  expectClose(r[0], naiveConv(k, x, f, k.bias ? &b : nullptr, oh, ow));
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, NNConvEvalTest,
    ::testing::Values(
        // nhwc, n, c, h, w, o, kh, kw, sh, sw, top, bottom, left, right, dh,
        // dw, groups, bias
        ConvCase{false, 2, 3, 7, 6, 4, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 1, true},
        ConvCase{true, 2, 3, 7, 6, 4, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 1, false},
        ConvCase{false, 2, 6, 11, 10, 4, 3, 2, 2, 3, 1, 2, 0, 1, 1, 1, 2, true},
        ConvCase{true, 2, 6, 11, 10, 4, 3, 2, 2, 3, 1, 2, 0, 1, 1, 1, 2, true},
        ConvCase{false, 1, 4, 13, 9, 8, 3, 3, 1, 2, 2, 2, 3, 1, 2, 3, 4, false},
        ConvCase{true, 1, 4, 13, 9, 8, 3, 3, 1, 2, 2, 2, 3, 1, 2, 3, 4, true},
        ConvCase{false, 3, 2, 5, 5, 3, 5, 5, 2, 2, 2, 2, 2, 2, 1, 1, 1, true},
        ConvCase{true, 1, 3, 4, 9, 6, 1, 4, 3, 1, 0, 1, 2, 2, 1, 2, 3, false}));

TEST_F(NNEvalTest, ConvBackwardOpsAreAdjointsOfConv) {
  // <conv(x, f), g> = <x, backward_input(g, f)> = <f, backward_filter(g, x)>.
  Tensor x = random({2, 9, 8, 4}), f = random({6, 3, 3, 2}),
         g = random({2, 4, 3, 6});
  auto r = run(R"mlir(
    func.func @f(%x: tensor<2x9x8x4xf32>, %w: tensor<6x3x3x2xf32>, %g: tensor<2x4x3x6xf32>)
        -> (tensor<2x4x3x6xf32>, tensor<2x9x8x4xf32>, tensor<6x3x3x2xf32>) {
      %y = kiln.conv2d %x, %w layout = nhwc stride = [2, 2] padding = [1, 2, 0, 1]
          dilation = [2, 2] groups = 2 : tensor<2x9x8x4xf32>, tensor<6x3x3x2xf32>
      %dx = kiln.conv2d_backward_input %g, %w layout = nhwc stride = [2, 2]
          padding = [1, 2, 0, 1] dilation = [2, 2] groups = 2
          : tensor<2x4x3x6xf32>, tensor<6x3x3x2xf32> -> tensor<2x9x8x4xf32>
      %dw = kiln.conv2d_backward_filter %g, %x layout = nhwc stride = [2, 2]
          padding = [1, 2, 0, 1] dilation = [2, 2] groups = 2
          : tensor<2x4x3x6xf32>, tensor<2x9x8x4xf32> -> tensor<6x3x3x2xf32>
      return %y, %dx, %dw : tensor<2x4x3x6xf32>, tensor<2x9x8x4xf32>, tensor<6x3x3x2xf32>
    })mlir",
               {x, f, g});
  ASSERT_EQ(r.size(), 3u);
  auto dot = [](const std::vector<double> &a, const std::vector<double> &b) {
    double s = 0;
    for (size_t i = 0; i < a.size(); ++i)
      s += a[i] * b[i];
    return s;
  };
  double reference = dot(r[0].data, g.data);
  EXPECT_NEAR(dot(x.data, r[1].data), reference,
              1e-10 * std::abs(reference) + 1e-12);
  EXPECT_NEAR(dot(f.data, r[2].data), reference,
              1e-10 * std::abs(reference) + 1e-12);
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

TEST_F(NNEvalTest, PoolsWithPaddingNchwAndNhwc) {
  // H = 7, W = 6, kernel [3, 2], stride [2, 2], padding [1, 1, 1, 0]:
  // OH = 4, OW = 3. Negative inputs: padding must not win the maximum.
  Tensor x = random({2, 3, 7, 6}, -5, -1);
  Tensor xt({2, 7, 6, 3}, ElementKind::F32);
  for (int n = 0; n < 2; ++n)
    for (int c = 0; c < 3; ++c)
      for (int h = 0; h < 7; ++h)
        for (int w = 0; w < 6; ++w)
          xt.data[((n * 7 + h) * 6 + w) * 3 + c] =
              x.data[((n * 3 + c) * 7 + h) * 6 + w];
  auto r = run(R"mlir(
    func.func @f(%x: tensor<2x3x7x6xf32>, %xt: tensor<2x7x6x3xf32>)
        -> (tensor<2x3x4x3xf32>, tensor<2x3x4x3xf32>, tensor<2x3x4x3xf32>,
            tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>) {
      %m = kiln.max_pool2d %x layout = nchw kernel = [3, 2] stride = [2, 2]
          padding = [1, 1, 1, 0] : tensor<2x3x7x6xf32>
      %a = kiln.avg_pool2d %x layout = nchw kernel = [3, 2] stride = [2, 2]
          padding = [1, 1, 1, 0] : tensor<2x3x7x6xf32>
      %ap = kiln.avg_pool2d %x layout = nchw kernel = [3, 2] stride = [2, 2]
          padding = [1, 1, 1, 0] count_include_pad : tensor<2x3x7x6xf32>
      %mt = kiln.max_pool2d %xt layout = nhwc kernel = [3, 2] stride = [2, 2]
          padding = [1, 1, 1, 0] : tensor<2x7x6x3xf32>
      %at = kiln.avg_pool2d %xt layout = nhwc kernel = [3, 2] stride = [2, 2]
          padding = [1, 1, 1, 0] : tensor<2x7x6x3xf32>
      return %m, %a, %ap, %mt, %at : tensor<2x3x4x3xf32>, tensor<2x3x4x3xf32>,
          tensor<2x3x4x3xf32>, tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>
    })mlir",
               {x, xt});
  ASSERT_EQ(r.size(), 5u);
  std::vector<double> mx(72), avg(72), avgPad(72), mxT(72), avgT(72);
  for (int n = 0; n < 2; ++n)
    for (int c = 0; c < 3; ++c)
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 3; ++j) {
          double best = -std::numeric_limits<double>::infinity(), sum = 0;
          int count = 0;
          for (int a = 0; a < 3; ++a)
            for (int b = 0; b < 2; ++b) {
              int h = i * 2 - 1 + a, w = j * 2 - 1 + b;
              if (h < 0 || h >= 7 || w < 0 || w >= 6)
                continue;
              double v = x.data[((n * 3 + c) * 7 + h) * 6 + w];
              best = std::max(best, v);
              sum += v;
              ++count;
            }
          int nchw = ((n * 3 + c) * 4 + i) * 3 + j;
          int nhwc = ((n * 4 + i) * 3 + j) * 3 + c;
          mx[nchw] = mxT[nhwc] = best;
          avg[nchw] = avgT[nhwc] = sum / count;
          avgPad[nchw] = sum / 6;
        }
  expectClose(r[0], mx);
  expectClose(r[1], avg);
  expectClose(r[2], avgPad);
  expectClose(r[3], mxT);
  expectClose(r[4], avgT);
}

TEST_F(NNEvalTest, MaxPoolBackwardGivesTiesToTheFirstMaximum) {
  // One 2x2 window holding 7 twice: the first (row-major) gets it all.
  Tensor x({1, 1, 2, 3}, ElementKind::F32);
  x.data = {1, 7, 7, 7, 2, 0};
  Tensor g({1, 1, 1, 2}, ElementKind::F32);
  g.data = {3, 5};
  auto r = run(R"mlir(
    func.func @f(%g: tensor<1x1x1x2xf32>, %x: tensor<1x1x2x3xf32>) -> tensor<1x1x2x3xf32> {
      %d = kiln.max_pool2d_backward %g, %x layout = nchw kernel = [2, 2]
          : tensor<1x1x1x2xf32>, tensor<1x1x2x3xf32>
      return %d : tensor<1x1x2x3xf32>
    })mlir",
               {g, x});
  ASSERT_EQ(r.size(), 1u);
  // Window 0 covers columns 0-1: first 7 at (0, 1). Window 1 covers 1-2:
  // first 7 at (0, 1) too, so it receives 3 + 5.
  expectClose(r[0], {0, 8, 0, 0, 0, 0});
}

TEST_F(NNEvalTest, AvgPoolBackwardSpreadsByDivisor) {
  Tensor g = random({1, 2, 2, 1});
  auto r = run(R"mlir(
    func.func @f(%g: tensor<1x2x2x1xf32>) -> (tensor<1x3x3x1xf32>, tensor<1x3x3x1xf32>) {
      %d = kiln.avg_pool2d_backward %g layout = nhwc kernel = [2, 2] stride = [2, 2]
          padding = [1, 0, 1, 0] : tensor<1x2x2x1xf32> -> tensor<1x3x3x1xf32>
      %p = kiln.avg_pool2d_backward %g layout = nhwc kernel = [2, 2] stride = [2, 2]
          padding = [1, 0, 1, 0] count_include_pad : tensor<1x2x2x1xf32> -> tensor<1x3x3x1xf32>
      return %d, %p : tensor<1x3x3x1xf32>, tensor<1x3x3x1xf32>
    })mlir",
               {g});
  ASSERT_EQ(r.size(), 2u);
  const std::vector<double> &v = g.data;
  // Windows: (0,0) covers input (0,0) only; (0,1) covers (0,1),(0,2);
  // (1,0) covers (1,0),(2,0); (1,1) covers the 2x2 block at (1,1).
  expectClose(r[0], {v[0], v[1] / 2, v[1] / 2, v[2] / 2, v[3] / 4, v[3] / 4,
                     v[2] / 2, v[3] / 4, v[3] / 4});
  expectClose(r[1], {v[0] / 4, v[1] / 4, v[1] / 4, v[2] / 4, v[3] / 4, v[3] / 4,
                     v[2] / 4, v[3] / 4, v[3] / 4});
}

//===----------------------------------------------------------------------===//
// Embedding, rope, dropout
//===----------------------------------------------------------------------===//

TEST_F(NNEvalTest, EmbeddingGatherAndScatterAdd) {
  Tensor table = random({7, 5}), indices = randomIndices({3, 4}, 7);
  Tensor g = random({3, 4, 5});
  auto r = run(R"mlir(
    func.func @f(%t: tensor<7x5xf32>, %i: tensor<3x4xi32>, %g: tensor<3x4x5xf32>)
        -> (tensor<3x4x5xf32>, tensor<7x5xf32>) {
      %e = kiln.embedding %t, %i : tensor<7x5xf32>, tensor<3x4xi32>
      %d = kiln.embedding_backward %g, %i : tensor<3x4x5xf32>, tensor<3x4xi32> -> tensor<7x5xf32>
      return %e, %d : tensor<3x4x5xf32>, tensor<7x5xf32>
    })mlir",
               {table, indices, g});
  ASSERT_EQ(r.size(), 2u);
  std::vector<double> gathered(60), scattered(35, 0.0);
  for (int k = 0; k < 12; ++k)
    for (int j = 0; j < 5; ++j) {
      int row = int(indices.data[k]);
      gathered[k * 5 + j] = table.data[row * 5 + j];
      scattered[row * 5 + j] += g.data[k * 5 + j];
    }
  expectClose(r[0], gathered);
  expectClose(r[1], scattered);
}

TEST_F(NNEvalTest, EmbeddingRank0Indices) {
  Tensor table = random({4, 3});
  Tensor index({}, ElementKind::I32);
  index.data = {2};
  auto r = run(R"mlir(
    func.func @f(%t: tensor<4x3xf32>, %i: tensor<i32>) -> tensor<3xf32> {
      %e = kiln.embedding %t, %i : tensor<4x3xf32>, tensor<i32>
      return %e : tensor<3xf32>
    })mlir",
               {table, index});
  ASSERT_EQ(r.size(), 1u);
  expectClose(r[0], {table.data[6], table.data[7], table.data[8]});
}

TEST_F(NNEvalTest, RopeRotatesHalves) {
  Tensor x = random({2, 3, 2, 8});
  auto r = run(R"mlir(
    func.func @f(%x: tensor<2x3x2x8xf32>) -> tensor<2x3x2x8xf32> {
      %y = kiln.rope %x theta = 500.0 position_offset = 4 : tensor<2x3x2x8xf32>
      return %y : tensor<2x3x2x8xf32>
    })mlir",
               {x});
  ASSERT_EQ(r.size(), 1u);
  std::vector<double> y(96);
  for (int b = 0; b < 2; ++b)
    for (int t = 0; t < 3; ++t)
      for (int h = 0; h < 2; ++h)
        for (int i = 0; i < 4; ++i) {
          double a = (t + 4) * std::pow(500.0, -2.0 * i / 8);
          int base = ((b * 3 + t) * 2 + h) * 8;
          double lo = x.data[base + i], hi = x.data[base + i + 4];
          y[base + i] = lo * std::cos(a) - hi * std::sin(a);
          y[base + i + 4] = hi * std::cos(a) + lo * std::sin(a);
        }
  expectClose(r[0], y);
}

TEST_F(NNEvalTest, InverseRopeRotatesBack) {
  // The inverse rotates by -a: rope then its inverse is the identity, and
  // the inverse alone is the transposed rotation.
  Tensor x = random({2, 3, 2, 8});
  auto r = run(R"mlir(
    func.func @f(%x: tensor<2x3x2x8xf32>) -> (tensor<2x3x2x8xf32>, tensor<2x3x2x8xf32>) {
      %y = kiln.rope %x theta = 500.0 position_offset = 4 : tensor<2x3x2x8xf32>
      %z = kiln.rope %y theta = 500.0 position_offset = 4 inverse : tensor<2x3x2x8xf32>
      %w = kiln.rope %x theta = 500.0 position_offset = 4 inverse : tensor<2x3x2x8xf32>
      return %z, %w : tensor<2x3x2x8xf32>, tensor<2x3x2x8xf32>
    })mlir",
               {x});
  ASSERT_EQ(r.size(), 2u);
  expectClose(r[0], x.data);
  std::vector<double> w(96);
  for (int b = 0; b < 2; ++b)
    for (int t = 0; t < 3; ++t)
      for (int h = 0; h < 2; ++h)
        for (int i = 0; i < 4; ++i) {
          double a = (t + 4) * std::pow(500.0, -2.0 * i / 8);
          int base = ((b * 3 + t) * 2 + h) * 8;
          double lo = x.data[base + i], hi = x.data[base + i + 4];
          w[base + i] = lo * std::cos(a) + hi * std::sin(a);
          w[base + i + 4] = hi * std::cos(a) - lo * std::sin(a);
        }
  expectClose(r[1], w);
}

TEST_F(NNEvalTest, DropoutUsesThePhiloxUniforms) {
  Tensor x = random({64, 33}, 0.5, 2.0);
  Tensor step({}, ElementKind::I32);
  step.data = {-3}; // read as the unsigned word 2^32 - 3
  auto r = run(R"mlir(
    func.func @f(%x: tensor<64x33xf32>, %s: tensor<i32>) -> (tensor<64x33xf32>, tensor<64x33xf32>) {
      %a = kiln.dropout %x, %s rate = 0.25 seed = 81985529216486895 stream = 3 : tensor<64x33xf32>
      %b = kiln.dropout %x rate = 0.25 seed = 81985529216486895 stream = 3 : tensor<64x33xf32>
      return %a, %b : tensor<64x33xf32>, tensor<64x33xf32>
    })mlir",
               {x, step});
  ASSERT_EQ(r.size(), 2u);
  ::kiln::RandomStream withOffset{0x0123456789ABCDEFull, 3, 0xFFFFFFFDu};
  ::kiln::RandomStream plain{0x0123456789ABCDEFull, 3, 0};
  std::vector<double> a(x.data.size()), b(x.data.size());
  int kept = 0, differ = 0;
  for (size_t i = 0; i < x.data.size(); ++i) {
    a[i] = withOffset.Uniform(i) >= 0.25 ? x.data[i] / 0.75 : 0.0;
    b[i] = plain.Uniform(i) >= 0.25 ? x.data[i] / 0.75 : 0.0;
    kept += a[i] != 0;
    differ += (a[i] != 0) != (b[i] != 0);
  }
  expectClose(r[0], a);
  expectClose(r[1], b);
  // 2112 draws: the kept fraction is near 0.75 and the offset changes masks.
  EXPECT_NEAR(kept / double(x.data.size()), 0.75, 0.05);
  EXPECT_GT(differ, 100);
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

TEST_F(NNEvalTest, MseLoss) {
  Tensor p = random({4, 7}), t = random({4, 7});
  auto r = run(R"mlir(
    func.func @f(%p: tensor<4x7xf32>, %t: tensor<4x7xf32>) -> (tensor<f32>, tensor<f32>) {
      %m = kiln.mse_loss %p, %t : tensor<4x7xf32>
      %s = kiln.mse_loss %p, %t reduction = sum : tensor<4x7xf32>
      return %m, %s : tensor<f32>, tensor<f32>
    })mlir",
               {p, t});
  ASSERT_EQ(r.size(), 2u);
  double sum = 0;
  for (int i = 0; i < 28; ++i)
    sum += (p.data[i] - t.data[i]) * (p.data[i] - t.data[i]);
  expectClose(r[0], {sum / 28});
  expectClose(r[1], {sum});
}

TEST_F(NNEvalTest, CrossEntropyWithLabelSmoothing) {
  Tensor logits = random({6, 5}, -4, 4), labels = randomIndices({6}, 5);
  logits.data[0] = 800; // stable for large logits
  auto r = run(R"mlir(
    func.func @f(%x: tensor<6x5xf32>, %y: tensor<6xi32>) -> (tensor<f32>, tensor<f32>, tensor<f32>) {
      %m = kiln.cross_entropy %x, %y label_smoothing = 0.2 : tensor<6x5xf32>, tensor<6xi32>
      %s = kiln.cross_entropy %x, %y reduction = sum label_smoothing = 0.2 : tensor<6x5xf32>, tensor<6xi32>
      %p = kiln.cross_entropy %x, %y reduction = sum : tensor<6x5xf32>, tensor<6xi32>
      return %m, %s, %p : tensor<f32>, tensor<f32>, tensor<f32>
    })mlir",
               {logits, labels});
  ASSERT_EQ(r.size(), 3u);
  // -sum_c q_c log p_c with q = 0.8 onehot + 0.2 / 5 (PyTorch's target).
  double smoothed = 0, plain = 0;
  for (int n = 0; n < 6; ++n) {
    double mx = *std::max_element(&logits.data[n * 5], &logits.data[n * 5 + 5]);
    double z = 0;
    for (int c = 0; c < 5; ++c)
      z += std::exp(logits.data[n * 5 + c] - mx);
    for (int c = 0; c < 5; ++c) {
      double logp = logits.data[n * 5 + c] - mx - std::log(z);
      bool hit = c == int(labels.data[n]);
      smoothed -= ((hit ? 0.8 : 0.0) + 0.2 / 5) * logp;
      if (hit)
        plain -= logp;
    }
  }
  expectClose(r[0], {smoothed / 6}, 1e-11);
  expectClose(r[1], {smoothed}, 1e-11);
  expectClose(r[2], {plain}, 1e-11);
}

TEST_F(NNEvalTest, CrossEntropyBackwardClosedForm) {
  Tensor logits = random({3, 4}), labels = randomIndices({3}, 4);
  Tensor g({}, ElementKind::F32);
  g.data = {1.7};
  auto r = run(R"mlir(
    func.func @f(%g: tensor<f32>, %x: tensor<3x4xf32>, %y: tensor<3xi32>) -> tensor<3x4xf32> {
      %d = kiln.cross_entropy_backward %g, %x, %y label_smoothing = 0.1 : tensor<3x4xf32>, tensor<3xi32>
      return %d : tensor<3x4xf32>
    })mlir",
               {g, logits, labels});
  ASSERT_EQ(r.size(), 1u);
  std::vector<double> expected(12);
  for (int n = 0; n < 3; ++n) {
    double z = 0;
    for (int c = 0; c < 4; ++c)
      z += std::exp(logits.data[n * 4 + c]);
    for (int c = 0; c < 4; ++c) {
      double target = (c == int(labels.data[n]) ? 0.9 : 0.0) + 0.1 / 4;
      expected[n * 4 + c] =
          1.7 / 3 * (std::exp(logits.data[n * 4 + c]) / z - target);
    }
  }
  expectClose(r[0], expected);
}

/// PyTorch's cross entropy with ignore_index, written out: the rows whose
/// label is `ignore` are left out of the sum and of the mean's count.
struct IgnoredCrossEntropy {
  double sum = 0;
  int64_t counted = 0;
  std::vector<double> rowGradient; // d(sum) / d logits
};

IgnoredCrossEntropy ignoredCrossEntropy(const Tensor &logits,
                                        const Tensor &labels, double eps,
                                        int64_t ignore) {
  int64_t rows = logits.shape[0], classes = logits.shape[1];
  IgnoredCrossEntropy out;
  out.rowGradient.assign(rows * classes, 0.0);
  for (int64_t n = 0; n < rows; ++n) {
    if (labels.data[n] == double(ignore))
      continue;
    ++out.counted;
    const double *x = &logits.data[n * classes];
    double z = 0;
    for (int64_t c = 0; c < classes; ++c)
      z += std::exp(x[c]);
    for (int64_t c = 0; c < classes; ++c) {
      double q = (c == int64_t(labels.data[n]) ? 1 - eps : 0.0) + eps / classes;
      out.sum -= q * (x[c] - std::log(z));
      out.rowGradient[n * classes + c] = std::exp(x[c]) / z - q;
    }
  }
  return out;
}

TEST_F(NNEvalTest, CrossEntropyIgnoreIndex) {
  Tensor logits = random({7, 5}, -3, 3), labels = randomIndices({7}, 5);
  labels.data[1] = labels.data[4] = -100;
  Tensor g({}, ElementKind::F32);
  g.data = {0.3 + random({1}, 0, 1).data[0]};
  auto r = run(R"mlir(
    func.func @f(%x: tensor<7x5xf32>, %y: tensor<7xi32>, %g: tensor<f32>)
        -> (tensor<f32>, tensor<f32>, tensor<f32>, tensor<7x5xf32>, tensor<7x5xf32>) {
      %m = kiln.cross_entropy %x, %y ignore_index = -100 : tensor<7x5xf32>, tensor<7xi32>
      %ms = kiln.cross_entropy %x, %y label_smoothing = 0.2 ignore_index = -100 : tensor<7x5xf32>, tensor<7xi32>
      %s = kiln.cross_entropy %x, %y reduction = sum label_smoothing = 0.2 ignore_index = -100 : tensor<7x5xf32>, tensor<7xi32>
      %dm = kiln.cross_entropy_backward %g, %x, %y label_smoothing = 0.2 ignore_index = -100 : tensor<7x5xf32>, tensor<7xi32>
      %ds = kiln.cross_entropy_backward %g, %x, %y reduction = sum ignore_index = -100 : tensor<7x5xf32>, tensor<7xi32>
      return %m, %ms, %s, %dm, %ds : tensor<f32>, tensor<f32>, tensor<f32>, tensor<7x5xf32>, tensor<7x5xf32>
    })mlir",
               {logits, labels, g});
  ASSERT_EQ(r.size(), 5u);
  IgnoredCrossEntropy plain = ignoredCrossEntropy(logits, labels, 0, -100);
  IgnoredCrossEntropy smoothed = ignoredCrossEntropy(logits, labels, 0.2, -100);
  ASSERT_EQ(plain.counted, 5);
  expectClose(r[0], {plain.sum / 5});
  expectClose(r[1], {smoothed.sum / 5});
  expectClose(r[2], {smoothed.sum});
  std::vector<double> mean(35), sum(35);
  for (int i = 0; i < 35; ++i) {
    mean[i] = g.data[0] / 5 * smoothed.rowGradient[i];
    sum[i] = g.data[0] * plain.rowGradient[i];
  }
  expectClose(r[3], mean);
  expectClose(r[4], sum);
  for (int c = 0; c < 5; ++c)
    EXPECT_EQ(r[3].data[5 + c], 0.0) << "an ignored row's gradient is 0";
}

TEST_F(NNEvalTest, CrossEntropyIgnoreIndexOfAClass) {
  // ignore_index may name a class: its rows are left out like any other.
  Tensor logits = random({6, 3}), labels = randomIndices({6}, 3);
  labels.data[0] = 2;
  labels.data[3] = 0;
  auto r = run(R"mlir(
    func.func @f(%x: tensor<6x3xf32>, %y: tensor<6xi32>) -> tensor<f32> {
      %m = kiln.cross_entropy %x, %y ignore_index = 2 : tensor<6x3xf32>, tensor<6xi32>
      return %m : tensor<f32>
    })mlir",
               {logits, labels});
  ASSERT_EQ(r.size(), 1u);
  IgnoredCrossEntropy expected = ignoredCrossEntropy(logits, labels, 0, 2);
  expectClose(r[0], {expected.sum / double(expected.counted)});
}

TEST_F(NNEvalTest, CrossEntropyEveryRowIgnored) {
  // As PyTorch: the mean is 0 / 0 and the gradient 0; the sum is 0.
  Tensor logits = random({3, 4}), labels({3}, ElementKind::I32);
  labels.data = {-1, -1, -1};
  Tensor g({}, ElementKind::F32);
  g.data = {1.0};
  auto r = run(R"mlir(
    func.func @f(%x: tensor<3x4xf32>, %y: tensor<3xi32>, %g: tensor<f32>)
        -> (tensor<f32>, tensor<f32>, tensor<3x4xf32>) {
      %m = kiln.cross_entropy %x, %y label_smoothing = 0.1 ignore_index = -1 : tensor<3x4xf32>, tensor<3xi32>
      %s = kiln.cross_entropy %x, %y reduction = sum ignore_index = -1 : tensor<3x4xf32>, tensor<3xi32>
      %d = kiln.cross_entropy_backward %g, %x, %y label_smoothing = 0.1 ignore_index = -1 : tensor<3x4xf32>, tensor<3xi32>
      return %m, %s, %d : tensor<f32>, tensor<f32>, tensor<3x4xf32>
    })mlir",
               {logits, labels, g});
  ASSERT_EQ(r.size(), 3u);
  EXPECT_TRUE(std::isnan(r[0].data[0]));
  EXPECT_EQ(r[1].data[0], 0.0);
  expectClose(r[2], std::vector<double>(12, 0.0));
}

TEST_F(NNEvalTest, CrossEntropyLabelOutsideTheClassesIsAnError) {
  Tensor logits = random({4, 5}), labels = randomIndices({4}, 5);
  labels.data[2] = 7;
  std::string error = runError(R"mlir(
    func.func @f(%x: tensor<4x5xf32>, %y: tensor<4xi32>) -> tensor<f32> {
      %m = kiln.cross_entropy %x, %y ignore_index = -100 : tensor<4x5xf32>, tensor<4xi32>
      return %m : tensor<f32>
    })mlir",
                               {logits, labels});
  EXPECT_NE(error.find("'kiln.cross_entropy' op label 7 of row 2 is outside "
                       "the 5 classes [0, 5) and is not ignore_index -100"),
            std::string::npos)
      << error;
  labels.data[2] = -1;
  error = runError(R"mlir(
    func.func @f(%g: tensor<f32>, %x: tensor<4x5xf32>, %y: tensor<4xi32>) -> tensor<4x5xf32> {
      %d = kiln.cross_entropy_backward %g, %x, %y : tensor<4x5xf32>, tensor<4xi32>
      return %d : tensor<4x5xf32>
    })mlir",
                   {random({}), logits, labels});
  EXPECT_NE(error.find("'kiln.cross_entropy_backward' op label -1 of row 2 is "
                       "outside the 5 classes [0, 5)\n"),
            std::string::npos)
      << error;
}

TEST_F(NNEvalTest, EmbeddingIndexOutsideTheTableIsAnError) {
  Tensor table = random({6, 3}), indices = randomIndices({2, 4}, 6);
  indices.data[5] = 6;
  std::string error = runError(R"mlir(
    func.func @f(%t: tensor<6x3xf32>, %i: tensor<2x4xi32>) -> tensor<2x4x3xf32> {
      %e = kiln.embedding %t, %i : tensor<6x3xf32>, tensor<2x4xi32>
      return %e : tensor<2x4x3xf32>
    })mlir",
                               {table, indices});
  EXPECT_NE(error.find("'kiln.embedding' op index 6 at element [1, 1] of "
                       "'indices' is outside the 6 rows of the table"),
            std::string::npos)
      << error;
}

TEST_F(NNEvalTest, BinaryCrossEntropyStableForm) {
  Tensor x = random({5, 3}, -3, 3), t = random({5, 3}, 0, 1);
  x.data[0] = 60; // log(1 + exp(-60)) underflows gracefully
  x.data[1] = -60;
  auto r = run(R"mlir(
    func.func @f(%x: tensor<5x3xf32>, %t: tensor<5x3xf32>) -> (tensor<f32>, tensor<f32>, tensor<5x3xf32>) {
      %m = kiln.binary_cross_entropy %x, %t : tensor<5x3xf32>
      %s = kiln.binary_cross_entropy %x, %t reduction = sum : tensor<5x3xf32>
      %one = kiln.constant dense<2.0> : tensor<f32>
      %d = kiln.binary_cross_entropy_backward %one, %x, %t reduction = sum : tensor<5x3xf32>
      return %m, %s, %d : tensor<f32>, tensor<f32>, tensor<5x3xf32>
    })mlir",
               {x, t});
  ASSERT_EQ(r.size(), 3u);
  double sum = 0;
  std::vector<double> grad(15);
  for (int i = 0; i < 15; ++i) {
    double sig = 1 / (1 + std::exp(-x.data[i]));
    // -t log(sigmoid) - (1 - t) log(1 - sigmoid), with the logs written
    // out as -log(1 + exp(-x)) and -x - log(1 + exp(-x)).
    double logSig = -std::log1p(std::exp(-x.data[i]));
    double logOneMinus = -x.data[i] + logSig;
    sum -= t.data[i] * logSig + (1 - t.data[i]) * logOneMinus;
    grad[i] = 2 * (sig - t.data[i]);
  }
  expectClose(r[0], {sum / 15}, 1e-11);
  expectClose(r[1], {sum}, 1e-11);
  expectClose(r[2], grad);
}

} // namespace
} // namespace mlir::kiln::ref
