// Evaluators of the elementwise family against independent computations.

#include "compiler/interpreter/Interpreter.h"
#include "runtime/random/philox.h"

#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/APFloat.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>

namespace mlir::kiln::ref {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

/// `value` rounded to bf16 or f16 directly from double, with APFloat.
double toHalfType(double value, const llvm::fltSemantics &semantics) {
  llvm::APFloat x(value);
  bool losesInfo;
  x.convert(semantics, llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  return x.convertToDouble();
}
double toBf16(double value) {
  return toHalfType(value, llvm::APFloat::BFloat());
}

/// Expects `actual` to be `expected` up to a relative `tolerance`; NaN must
/// match NaN and infinities must match exactly.
void expectClose(double actual, double expected, double tolerance,
                 const std::string &what) {
  if (std::isnan(expected)) {
    EXPECT_TRUE(std::isnan(actual)) << what << ": got " << actual;
    return;
  }
  if (std::isinf(expected)) {
    EXPECT_EQ(actual, expected) << what;
    return;
  }
  EXPECT_NEAR(actual, expected, tolerance * std::max(1.0, std::abs(expected)))
      << what;
}

class ElementwiseEvalTest : public ::testing::Test {
protected:
  ElementwiseEvalTest() {
    context.loadDialect<KilnDialect, func::FuncDialect>();
    context.getDiagEngine().registerHandler([this](Diagnostic &diag) {
      diagnostics += diag.str() + "\n";
      return success();
    });
  }

  /// Runs the first function of `source` on `inputs`; empty on failure.
  std::vector<Tensor> run(const std::string &source, std::vector<Tensor> inputs,
                          Precision precision = Precision::F64) {
    module = parseSourceString<ModuleOp>(source, &context);
    EXPECT_TRUE(module) << diagnostics << source;
    if (!module)
      return {};
    Interpreter interpreter(precision);
    auto results =
        interpreter.run(*module->getOps<func::FuncOp>().begin(), inputs);
    EXPECT_TRUE(succeeded(results)) << diagnostics;
    return succeeded(results) ? *results : std::vector<Tensor>{};
  }

  Tensor random(llvm::ArrayRef<int64_t> shape, double low, double high,
                ElementKind kind = ElementKind::F32) {
    Tensor t(shape, kind);
    std::uniform_real_distribution<double> dist(low, high);
    for (double &x : t.data)
      x = dist(rng);
    return t;
  }

  Tensor values(llvm::ArrayRef<int64_t> shape, std::vector<double> data,
                ElementKind kind = ElementKind::F32) {
    Tensor t(shape, kind);
    t.data = std::move(data);
    return t;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  std::string diagnostics;
  std::mt19937_64 rng{std::random_device{}()};
};

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

struct UnaryCase {
  std::string op;    // mnemonic
  std::string attrs; // text after the operand, e.g. "alpha = 0.2"
  std::function<double(double)> reference;
  double low, high; // input range
};

TEST_F(ElementwiseEvalTest, UnaryFloatOpsMatchFormulas) {
  const double k = std::sqrt(2.0 / M_PI);
  std::vector<UnaryCase> cases = {
      {"neg", "", [](double x) { return 0.0 - x; }, -3, 3},
      {"abs", "", [](double x) { return x < 0 ? -x : x; }, -3, 3},
      {"sign", "", [](double x) { return x < 0 ? -1.0 : 1.0; }, -3, 3},
      {"relu", "", [](double x) { return x < 0 ? 0.0 : x; }, -3, 3},
      {"exp", "", [](double x) { return std::pow(M_E, x); }, -3, 3},
      {"log", "", [](double x) { return std::log2(x) / std::log2(M_E); }, 0.01,
       5},
      {"sqrt", "", [](double x) { return std::pow(x, 0.5); }, 0.01, 5},
      {"rsqrt", "", [](double x) { return std::pow(x, -0.5); }, 0.01, 5},
      {"sin", "", [](double x) { return std::cos(x - M_PI / 2); }, -6, 6},
      {"cos", "", [](double x) { return std::sin(x + M_PI / 2); }, -6, 6},
      {"tanh", "",
       [](double x) { return (std::exp(2 * x) - 1) / (std::exp(2 * x) + 1); },
       -4, 4},
      {"sigmoid", "", [](double x) { return std::exp(x) / (std::exp(x) + 1); },
       -8, 8},
      {"erf", "", [](double x) { return 1.0 - std::erfc(x); }, -4, 4},
      {"silu", "", [](double x) { return x * std::exp(x) / (std::exp(x) + 1); },
       -8, 8},
      {"gelu", "",
       [](double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); }, -4,
       4},
      {"gelu", "approximate = tanh",
       [k](double x) {
         double u = k * (x + 0.044715 * x * x * x);
         return x * std::exp(u) / (std::exp(u) + std::exp(-u));
       },
       -4, 4},
      {"leaky_relu", "", [](double x) { return x > 0 ? x : double(0.01f) * x; },
       -3, 3},
      {"leaky_relu", "alpha = 0.3",
       [](double x) { return x > 0 ? x : double(0.3f) * x; }, -3, 3},
      {"floor", "",
       [](double x) { return x - std::fmod(x, 1.0) - (std::fmod(x, 1.0) < 0); },
       -5, 5},
      {"ceil", "", [](double x) { return -std::floor(-x); }, -5, 5},
      {"round", "", [](double x) { return std::floor(x + 0.5); }, -5, 5},
  };
  for (const UnaryCase &c : cases) {
    std::string source =
        "func.func @f(%x: tensor<3x5x7xf32>) -> tensor<3x5x7xf32> {\n"
        "  %y = kiln." +
        c.op + " %x " + c.attrs +
        " : tensor<3x5x7xf32>\n"
        "  return %y : tensor<3x5x7xf32>\n}";
    Tensor x = random({3, 5, 7}, c.low, c.high);
    std::vector<Tensor> out = run(source, {x});
    ASSERT_EQ(out.size(), 1u) << c.op;
    for (size_t i = 0; i < x.data.size(); ++i)
      expectClose(out[0].data[i], c.reference(x.data[i]), 1e-13,
                  c.op + " " + c.attrs + " at " + std::to_string(x.data[i]));
  }
}

TEST_F(ElementwiseEvalTest, UnaryEdgeCases) {
  auto apply = [&](const std::string &op, std::vector<double> in) {
    std::string n = std::to_string(in.size());
    std::string type = "tensor<" + n + "xf32>";
    std::vector<Tensor> out =
        run("func.func @f(%x: " + type + ") -> " + type + " {\n  %y = kiln." +
                op + " %x : " + type + "\n  return %y : " + type + "\n}",
            {values({int64_t(in.size())}, in)});
    return out.empty() ? std::vector<double>{} : out[0].data;
  };
  // round: half to even, -0.5 -> -0.
  std::vector<double> rounded =
      apply("round", {0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4999, 3.5000001});
  ASSERT_EQ(rounded.size(), 8u);
  EXPECT_EQ(rounded, (std::vector<double>{0, 2, 2, -0.0, -2, -2, 2, 4}));
  EXPECT_TRUE(std::signbit(rounded[3]));
  // sign passes zeros of either sign and NaN through.
  std::vector<double> signs = apply("sign", {-0.0, 0.0, kNaN, -7, 1e-30});
  ASSERT_EQ(signs.size(), 5u);
  EXPECT_TRUE(signs[0] == 0 && std::signbit(signs[0]));
  EXPECT_TRUE(signs[1] == 0 && !std::signbit(signs[1]));
  EXPECT_TRUE(std::isnan(signs[2]));
  EXPECT_EQ(signs[3], -1);
  EXPECT_EQ(signs[4], 1);
  // relu and leaky_relu propagate NaN.
  std::vector<double> relus = apply("relu", {kNaN, -2, 3});
  ASSERT_EQ(relus.size(), 3u);
  EXPECT_TRUE(std::isnan(relus[0]));
  EXPECT_EQ(relus[1], 0);
  EXPECT_EQ(relus[2], 3);
  std::vector<double> leaky = apply("leaky_relu", {kNaN, -2, 3});
  ASSERT_EQ(leaky.size(), 3u);
  EXPECT_TRUE(std::isnan(leaky[0]));
  EXPECT_EQ(leaky[1], -2 * double(0.01f));
  // abs clears the sign bit, also of -0 and -NaN.
  std::vector<double> absolute = apply("abs", {-0.0, -kNaN, -kInf});
  ASSERT_EQ(absolute.size(), 3u);
  EXPECT_FALSE(std::signbit(absolute[0]));
  EXPECT_FALSE(std::signbit(absolute[1]));
  EXPECT_EQ(absolute[2], kInf);
  // Poles and domains.
  std::vector<double> logs = apply("log", {0.0, -1.0});
  ASSERT_EQ(logs.size(), 2u);
  EXPECT_EQ(logs[0], -kInf);
  EXPECT_TRUE(std::isnan(logs[1]));
  std::vector<double> rsqrts = apply("rsqrt", {0.0, -4.0, 4.0});
  ASSERT_EQ(rsqrts.size(), 3u);
  EXPECT_EQ(rsqrts[0], kInf);
  EXPECT_TRUE(std::isnan(rsqrts[1]));
  EXPECT_EQ(rsqrts[2], 0.5);
  EXPECT_TRUE(std::isnan(apply("sqrt", {-1.0})[0]));
  // sigmoid and silu saturate without NaN.
  std::vector<double> sigmoids = apply("sigmoid", {-1000, 1000});
  EXPECT_EQ(sigmoids, (std::vector<double>{0, 1}));
  std::vector<double> silus = apply("silu", {-1000, 1000});
  EXPECT_EQ(silus[0], 0);
  EXPECT_EQ(silus[1], 1000);
  std::vector<double> floors = apply("floor", {-0.5, 2.0, -3.0001});
  EXPECT_EQ(floors, (std::vector<double>{-1, 2, -4}));
  std::vector<double> ceils = apply("ceil", {-0.5, 2.0, 3.0001});
  EXPECT_EQ(ceils, (std::vector<double>{0, 2, 4}));
}

TEST_F(ElementwiseEvalTest, IntegerUnaryOpsWrap) {
  std::string source = R"mlir(
    func.func @f(%x: tensor<5xi32>) -> (tensor<5xi32>, tensor<5xi32>, tensor<5xi32>, tensor<5xi32>) {
      %n = kiln.neg %x : tensor<5xi32>
      %a = kiln.abs %x : tensor<5xi32>
      %r = kiln.relu %x : tensor<5xi32>
      %s = kiln.sign %x : tensor<5xi32>
      return %n, %a, %r, %s : tensor<5xi32>, tensor<5xi32>, tensor<5xi32>, tensor<5xi32>
    })mlir";
  std::vector<Tensor> out =
      run(source, {values({5}, {-2147483648.0, 2147483647.0, -17, 0, 5},
                          ElementKind::I32)});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].data,
            (std::vector<double>{-2147483648.0, -2147483647.0, 17, 0, -5}));
  EXPECT_EQ(out[1].data,
            (std::vector<double>{-2147483648.0, 2147483647.0, 17, 0, 5}));
  EXPECT_EQ(out[2].data, (std::vector<double>{0, 2147483647.0, 0, 0, 5}));
  EXPECT_EQ(out[3].data, (std::vector<double>{-1, 1, -1, 0, 1}));
}

TEST_F(ElementwiseEvalTest, Bf16UnaryRoundsOnceInF32Mode) {
  std::string source = R"mlir(
    func.func @f(%x: tensor<64xbf16>) -> (tensor<64xbf16>, tensor<64xbf16>) {
      %e = kiln.exp %x : tensor<64xbf16>
      %t = kiln.tanh %x : tensor<64xbf16>
      return %e, %t : tensor<64xbf16>, tensor<64xbf16>
    })mlir";
  Tensor x = random({64}, -3, 3, ElementKind::BF16);
  for (double &v : x.data)
    v = toBf16(v);
  std::vector<Tensor> out = run(source, {x}, Precision::F32);
  ASSERT_EQ(out.size(), 2u);
  for (size_t i = 0; i < 64; ++i) {
    // Computed in f32, rounded once to bf16.
    EXPECT_EQ(out[0].data[i], toBf16(std::exp(float(x.data[i]))));
    EXPECT_EQ(out[1].data[i], toBf16(std::tanh(float(x.data[i]))));
  }
}

//===----------------------------------------------------------------------===//
// Binary, compare, select
//===----------------------------------------------------------------------===//

/// The element of a [4, 3, 5] broadcast of a [4, 1, 5] and a [3, 1] tensor.
struct BroadcastIndex {
  size_t out, lhs, rhs;
};
std::vector<BroadcastIndex> broadcastIndices() {
  std::vector<BroadcastIndex> indices;
  for (size_t i = 0; i < 4; ++i)
    for (size_t j = 0; j < 3; ++j)
      for (size_t k = 0; k < 5; ++k)
        indices.push_back({(i * 3 + j) * 5 + k, i * 5 + k, j});
  return indices;
}

TEST_F(ElementwiseEvalTest, BinaryFloatOpsBroadcast) {
  std::vector<std::pair<std::string, std::function<double(double, double)>>>
      cases = {
          {"add", [](double a, double b) { return a + b; }},
          {"sub", [](double a, double b) { return a + -b; }},
          {"mul", [](double a, double b) { return a * b; }},
          {"div", [](double a, double b) { return a * (1.0 / b); }},
          {"pow", [](double a, double b) { return std::exp(b * std::log(a)); }},
          {"max", [](double a, double b) { return std::fmax(a, b); }},
          {"min", [](double a, double b) { return std::fmin(a, b); }},
      };
  for (const auto &[op, reference] : cases) {
    std::string source = R"mlir(
      func.func @f(%a: tensor<4x1x5xf32>, %b: tensor<3x1xf32>) -> tensor<4x3x5xf32> {
        %z = kiln.)mlir" +
                         op +
                         R"mlir( %a, %b : tensor<4x1x5xf32>, tensor<3x1xf32>
        return %z : tensor<4x3x5xf32>
      })mlir";
    Tensor a = random({4, 1, 5}, 0.2, 3), b = random({3, 1}, -2, 2);
    if (op != "pow") // negative bases for everything but pow
      for (size_t i = 0; i < a.data.size(); i += 2)
        a.data[i] = -a.data[i];
    std::vector<Tensor> out = run(source, {a, b});
    ASSERT_EQ(out.size(), 1u) << op;
    ASSERT_EQ(out[0].shape, (Shape{4, 3, 5}));
    for (BroadcastIndex index : broadcastIndices())
      expectClose(out[0].data[index.out],
                  reference(a.data[index.lhs], b.data[index.rhs]), 1e-13, op);
  }
}

TEST_F(ElementwiseEvalTest, BinaryFloatEdgeCases) {
  std::string source = R"mlir(
    func.func @f(%a: tensor<6xf32>, %b: tensor<6xf32>) -> (tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>) {
      %x = kiln.max %a, %b : tensor<6xf32>, tensor<6xf32>
      %n = kiln.min %a, %b : tensor<6xf32>, tensor<6xf32>
      %d = kiln.div %a, %b : tensor<6xf32>, tensor<6xf32>
      %p = kiln.pow %a, %b : tensor<6xf32>, tensor<6xf32>
      return %x, %n, %d, %p : tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>
    })mlir";
  std::vector<Tensor> out =
      run(source, {values({6}, {kNaN, 1.0, 2.0, -8.0, 0.0, -2.0}),
                   values({6}, {1.0, kNaN, 2.0, 1.0 / 3, 0.0, 3.0})});
  ASSERT_EQ(out.size(), 4u);
  // max/min: NaN in either operand gives NaN; ties give the value.
  EXPECT_TRUE(std::isnan(out[0].data[0]) && std::isnan(out[0].data[1]));
  EXPECT_TRUE(std::isnan(out[1].data[0]) && std::isnan(out[1].data[1]));
  EXPECT_EQ(out[0].data[2], 2.0);
  EXPECT_EQ(out[1].data[2], 2.0);
  EXPECT_EQ(out[0].data[5], 3.0);
  EXPECT_EQ(out[1].data[5], -2.0);
  // IEEE division: 0 / 0 is NaN, x / x = 1.
  EXPECT_TRUE(std::isnan(out[2].data[4]));
  EXPECT_EQ(out[2].data[2], 1.0);
  // powf special cases: negative base with non-integer exponent is NaN,
  // pow(0, 0) = 1, negative base with an integer exponent is fine.
  EXPECT_TRUE(std::isnan(out[3].data[3]));
  EXPECT_EQ(out[3].data[4], 1.0);
  EXPECT_EQ(out[3].data[5], -8.0);
  EXPECT_EQ(out[3].data[2], 4.0);
}

TEST_F(ElementwiseEvalTest, IntegerBinaryOpsWrapAndDivideByRule) {
  std::string source = R"mlir(
    func.func @f(%a: tensor<8xi32>, %b: tensor<8xi32>) -> (tensor<8xi32>, tensor<8xi32>, tensor<8xi32>, tensor<8xi32>, tensor<8xi32>, tensor<8xi32>) {
      %s = kiln.add %a, %b : tensor<8xi32>, tensor<8xi32>
      %d = kiln.sub %a, %b : tensor<8xi32>, tensor<8xi32>
      %m = kiln.mul %a, %b : tensor<8xi32>, tensor<8xi32>
      %q = kiln.div %a, %b : tensor<8xi32>, tensor<8xi32>
      %x = kiln.max %a, %b : tensor<8xi32>, tensor<8xi32>
      %n = kiln.min %a, %b : tensor<8xi32>, tensor<8xi32>
      return %s, %d, %m, %q, %x, %n : tensor<8xi32>, tensor<8xi32>, tensor<8xi32>, tensor<8xi32>, tensor<8xi32>, tensor<8xi32>
    })mlir";
  std::vector<double> a = {2147483647.0, -2147483648.0, 7, -7, 7, -7, 65536, 5};
  std::vector<double> b = {1, -1, 2, 2, -2, 0, 65536, 123456789};
  std::vector<Tensor> out = run(source, {values({8}, a, ElementKind::I32),
                                         values({8}, b, ElementKind::I32)});
  ASSERT_EQ(out.size(), 6u);
  auto wrap = [](int64_t v) { return double(int32_t(uint32_t(uint64_t(v)))); };
  for (size_t i = 0; i < 8; ++i) {
    int64_t x = int64_t(a[i]), y = int64_t(b[i]);
    EXPECT_EQ(out[0].data[i], wrap(x + y)) << i;
    EXPECT_EQ(out[1].data[i], wrap(x - y)) << i;
    EXPECT_EQ(out[2].data[i], wrap(x * y)) << i;
    EXPECT_EQ(out[4].data[i], double(std::max(x, y))) << i;
    EXPECT_EQ(out[5].data[i], double(std::min(x, y))) << i;
  }
  EXPECT_EQ(out[0].data[0], -2147483648.0); // INT_MAX + 1 wraps
  EXPECT_EQ(out[2].data[6], 0.0);           // 2^32 wraps to 0
  // Truncation toward zero, x / 0 = 0, -2^31 / -1 = -2^31.
  EXPECT_EQ(out[3].data, (std::vector<double>{2147483647.0, -2147483648.0, 3,
                                              -3, -3, 0, 1, 0}));
}

TEST_F(ElementwiseEvalTest, CompareAllPredicatesWithNaNAndBroadcast) {
  const std::vector<std::pair<std::string, std::function<bool(double, double)>>>
      predicates = {
          {"eq",
           [](double a, double b) {
             return !(a < b) && !(b < a) && a == a && b == b;
           }},
          {"ne", [](double a, double b) { return !(a == b); }},
          {"lt", [](double a, double b) { return b - a > 0; }},
          {"le", [](double a, double b) { return a < b || a == b; }},
          {"gt", [](double a, double b) { return a - b > 0; }},
          {"ge", [](double a, double b) { return a > b || a == b; }},
      };
  for (const auto &[name, reference] : predicates) {
    std::string source = R"mlir(
      func.func @f(%a: tensor<4x1x5xf32>, %b: tensor<3x1xf32>) -> tensor<4x3x5xi1> {
        %m = kiln.compare )mlir" +
                         name +
                         R"mlir(, %a, %b : tensor<4x1x5xf32>, tensor<3x1xf32>
        return %m : tensor<4x3x5xi1>
      })mlir";
    // Small integers make ties likely; a NaN in each operand.
    Tensor a({4, 1, 5}, ElementKind::F32), b({3, 1}, ElementKind::F32);
    std::uniform_int_distribution<int> small(-2, 2);
    for (double &x : a.data)
      x = small(rng);
    for (double &x : b.data)
      x = small(rng);
    a.data[7] = kNaN;
    b.data[1] = kNaN;
    std::vector<Tensor> out = run(source, {a, b});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].kind, ElementKind::I1);
    for (BroadcastIndex index : broadcastIndices())
      EXPECT_EQ(out[0].data[index.out],
                reference(a.data[index.lhs], b.data[index.rhs]) ? 1.0 : 0.0)
          << name << " " << a.data[index.lhs] << " " << b.data[index.rhs];
  }
}

TEST_F(ElementwiseEvalTest, SelectBroadcastsAllThree) {
  std::string source = R"mlir(
    func.func @f(%c: tensor<3x1x5xi1>, %a: tensor<4x1xf32>, %b: tensor<5xf32>) -> tensor<3x4x5xf32> {
      %r = kiln.select %c, %a, %b : tensor<3x1x5xi1>, tensor<4x1xf32>, tensor<5xf32>
      return %r : tensor<3x4x5xf32>
    })mlir";
  Tensor c({3, 1, 5}, ElementKind::I1);
  std::bernoulli_distribution coin(0.5);
  for (double &x : c.data)
    x = coin(rng);
  c.data[0] = 1;
  c.data[1] = 0;
  Tensor a = random({4, 1}, -1, 1), b = random({5}, 2, 3);
  std::vector<Tensor> out = run(source, {c, a, b});
  ASSERT_EQ(out.size(), 1u);
  for (size_t i = 0; i < 3; ++i)
    for (size_t j = 0; j < 4; ++j)
      for (size_t k = 0; k < 5; ++k)
        EXPECT_EQ(out[0].data[(i * 4 + j) * 5 + k],
                  c.data[i * 5 + k] ? a.data[j] : b.data[k]);
}

//===----------------------------------------------------------------------===//
// Cast
//===----------------------------------------------------------------------===//

TEST_F(ElementwiseEvalTest, CastFloatToIntegerAndMask) {
  std::string source = R"mlir(
    func.func @f(%x: tensor<9xf32>) -> (tensor<9xi32>, tensor<9xi1>) {
      %i = kiln.cast %x : tensor<9xf32> to tensor<9xi32>
      %m = kiln.cast %x : tensor<9xf32> to tensor<9xi1>
      return %i, %m : tensor<9xi32>, tensor<9xi1>
    })mlir";
  std::vector<Tensor> out =
      run(source,
          {values({9}, {2.9, -2.9, kNaN, 3e9, -3e9, kInf, -kInf, -0.0, 0.25})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].data,
            (std::vector<double>{2, -2, 0, 2147483647.0, -2147483648.0,
                                 2147483647.0, -2147483648.0, 0, 0}));
  EXPECT_EQ(out[1].data, (std::vector<double>{1, 1, 1, 1, 1, 1, 1, 0, 1}));
}

TEST_F(ElementwiseEvalTest, CastIntegerAndMaskToFloat) {
  std::string source = R"mlir(
    func.func @f(%i: tensor<4xi32>, %m: tensor<4xi1>) -> (tensor<4xbf16>, tensor<4xf32>, tensor<4xi32>, tensor<4xi1>) {
      %a = kiln.cast %i : tensor<4xi32> to tensor<4xbf16>
      %b = kiln.cast %m : tensor<4xi1> to tensor<4xf32>
      %c = kiln.cast %m : tensor<4xi1> to tensor<4xi32>
      %d = kiln.cast %i : tensor<4xi32> to tensor<4xi1>
      return %a, %b, %c, %d : tensor<4xbf16>, tensor<4xf32>, tensor<4xi32>, tensor<4xi1>
    })mlir";
  // 2^24 + 2^16 + 1 rounds up to 2^24 + 2^17 in one rounding to bf16; through
  // f32 it would tie twice and end at 2^24.
  double tricky = 16777216.0 + 65536.0 + 1.0;
  std::vector<Tensor> out =
      run(source,
          {values({4}, {tricky, -3, 257, 0}, ElementKind::I32),
           values({4}, {1, 0, 1, 0}, ElementKind::I1)},
          Precision::F32);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].data,
            (std::vector<double>{16777216.0 + 131072.0, -3, 256, 0}));
  EXPECT_EQ(out[1].data, (std::vector<double>{1, 0, 1, 0}));
  EXPECT_EQ(out[2].data, (std::vector<double>{1, 0, 1, 0}));
  EXPECT_EQ(out[3].data, (std::vector<double>{1, 1, 1, 0}));
}

TEST_F(ElementwiseEvalTest, CastBetweenFloatsRoundsToNearestEven) {
  std::string source = R"mlir(
    func.func @f(%x: tensor<32xf32>) -> (tensor<32xbf16>, tensor<32xf16>) {
      %b = kiln.cast %x : tensor<32xf32> to tensor<32xbf16>
      %h = kiln.cast %x : tensor<32xf32> to tensor<32xf16>
      return %b, %h : tensor<32xbf16>, tensor<32xf16>
    })mlir";
  Tensor x = random({32}, -100, 100);
  for (double &v : x.data)
    v = double(float(v));
  x.data[0] = 1.0 + 1.0 / 256; // bf16 tie: to even (1.0)
  x.data[1] = 1.0 + 3.0 / 256; // bf16 tie: to even (1 + 4/256)
  x.data[2] = 70000.0;         // f16 overflow: inf
  x.data[3] = kNaN;
  std::vector<Tensor> f32 = run(source, {x}, Precision::F32);
  ASSERT_EQ(f32.size(), 2u);
  for (size_t i = 0; i < 32; ++i) {
    if (i == 3) {
      EXPECT_TRUE(std::isnan(f32[0].data[i]) && std::isnan(f32[1].data[i]));
      continue;
    }
    EXPECT_EQ(f32[0].data[i], toBf16(x.data[i])) << x.data[i];
    EXPECT_EQ(f32[1].data[i], toHalfType(x.data[i], llvm::APFloat::IEEEhalf()))
        << x.data[i];
  }
  EXPECT_EQ(f32[0].data[0], 1.0);
  EXPECT_EQ(f32[0].data[1], 1.0 + 4.0 / 256);
  EXPECT_EQ(f32[1].data[2], kInf);
  // The f64 oracle keeps float values exact.
  std::vector<Tensor> f64 = run(source, {x}, Precision::F64);
  ASSERT_EQ(f64.size(), 2u);
  EXPECT_EQ(f64[0].data[5], x.data[5]);
}

//===----------------------------------------------------------------------===//
// Constants, iota, randomness
//===----------------------------------------------------------------------===//

TEST_F(ElementwiseEvalTest, ConstantAndIota) {
  std::string source = R"mlir(
    func.func @f() -> (tensor<2x3xf32>, tensor<3x4x2xi32>, tensor<2x300xbf16>, tensor<5x2xf16>) {
      %c = kiln.constant dense<[[1.5, -2.0, 3.25], [0.0, 7.0, -0.125]]> : tensor<2x3xf32>
      %i = kiln.iota dim = 1 : tensor<3x4x2xi32>
      %b = kiln.iota dim = 1 : tensor<2x300xbf16>
      %h = kiln.iota dim = 0 : tensor<5x2xf16>
      return %c, %i, %b, %h : tensor<2x3xf32>, tensor<3x4x2xi32>, tensor<2x300xbf16>, tensor<5x2xf16>
    })mlir";
  for (Precision precision : {Precision::F64, Precision::F32}) {
    std::vector<Tensor> out = run(source, {}, precision);
    ASSERT_EQ(out.size(), 4u);
    EXPECT_EQ(out[0].data,
              (std::vector<double>{1.5, -2.0, 3.25, 0.0, 7.0, -0.125}));
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 4; ++j)
        for (int k = 0; k < 2; ++k)
          EXPECT_EQ(out[1].data[(i * 4 + j) * 2 + k], j);
    for (int r = 0; r < 2; ++r)
      for (int j = 0; j < 300; ++j)
        EXPECT_EQ(out[2].data[r * 300 + j], toBf16(j)) << j;
    EXPECT_EQ(out[2].data[257], 256); // tie to even
    EXPECT_EQ(out[2].data[259], 260); // tie to even
    EXPECT_EQ(out[2].data[299], 300); // 299 -> nearest bf16 is 300
    EXPECT_EQ(out[3].data, (std::vector<double>{0, 0, 1, 1, 2, 2, 3, 3, 4, 4}));
  }
}

/// The uniform mapping of the op description, in f32 from the Philox word.
double uniformReference(uint32_t word, double low, double high) {
  float lo = float(low), hi = float(high);
  float f = float(word >> 8) / 16777216.0f;
  float diff = hi - lo;
  float prod = diff * f;
  float r = lo + prod;
  if (r >= hi)
    r = std::nextafter(hi, -INFINITY);
  return r;
}

TEST_F(ElementwiseEvalTest, RandomUniformKnownValuesAndPhilox) {
  std::string source = R"mlir(
    func.func @f() -> tensor<3x7xf32> {
      %r = kiln.random_uniform seed = 0 stream = 0 : tensor<3x7xf32>
      return %r : tensor<3x7xf32>
    })mlir";
  std::vector<Tensor> out = run(source, {});
  ASSERT_EQ(out.size(), 1u);
  // The example of the op description.
  const double scale = 1.0 / 16777216.0;
  EXPECT_EQ(out[0].data[0], 6694888 * scale);
  EXPECT_EQ(out[0].data[1], 14772677 * scale);
  EXPECT_EQ(out[0].data[2], 12343212 * scale);
  EXPECT_EQ(out[0].data[3], 10158299 * scale);
  // The known-answer Philox block: element i of block 0 is lane i.
  EXPECT_EQ(out[0].data[0], (0x6627E8D5u >> 8) * scale);
  EXPECT_EQ(out[0].data[3], (0x9B00DBD8u >> 8) * scale);
  ::kiln::RandomStream stream{0, 0, 0};
  for (size_t i = 0; i < 21; ++i)
    EXPECT_EQ(out[0].data[i], stream.Uniform(i)) << i;
}

TEST_F(ElementwiseEvalTest, RandomUniformBoundsSeedStreamOffset) {
  std::string source = R"mlir(
    func.func @f(%step: tensor<i32>) -> (tensor<5x13xf32>, tensor<5x13xf32>, tensor<5x13xf32>, tensor<5x13xf32>, tensor<5x13xf32>, tensor<5x13xbf16>) {
      %a = kiln.random_uniform seed = 42 stream = 3 offset = %step low = -1.5 high = 2.25 : tensor<5x13xf32>
      %b = kiln.random_uniform seed = 42 stream = 3 offset = %step low = -1.5 high = 2.25 : tensor<5x13xf32>
      %c = kiln.random_uniform seed = 43 stream = 3 offset = %step low = -1.5 high = 2.25 : tensor<5x13xf32>
      %d = kiln.random_uniform seed = 42 stream = 4 offset = %step low = -1.5 high = 2.25 : tensor<5x13xf32>
      %e = kiln.random_uniform seed = -7 stream = 4294967295 low = -1.5 high = 2.25 : tensor<5x13xf32>
      %f = kiln.random_uniform seed = 42 stream = 3 offset = %step low = -1.5 high = 2.25 : tensor<5x13xbf16>
      return %a, %b, %c, %d, %e, %f : tensor<5x13xf32>, tensor<5x13xf32>, tensor<5x13xf32>, tensor<5x13xf32>, tensor<5x13xf32>, tensor<5x13xbf16>
    })mlir";
  std::uniform_int_distribution<int32_t> steps(-1000000, 1000000);
  int32_t step = steps(rng);
  std::vector<Tensor> out =
      run(source, {values({}, {double(step)}, ElementKind::I32)});
  ASSERT_EQ(out.size(), 6u);
  ::kiln::RandomStream a{42, 3, uint32_t(step)}, c{43, 3, uint32_t(step)},
      d{42, 4, uint32_t(step)}, e{uint64_t(int64_t(-7)), 0xFFFFFFFFu, 0};
  for (size_t i = 0; i < 65; ++i) {
    EXPECT_EQ(out[0].data[i], uniformReference(a.Word(i), -1.5, 2.25)) << i;
    EXPECT_EQ(out[1].data[i], out[0].data[i]) << "not deterministic at " << i;
    EXPECT_EQ(out[2].data[i], uniformReference(c.Word(i), -1.5, 2.25)) << i;
    EXPECT_EQ(out[3].data[i], uniformReference(d.Word(i), -1.5, 2.25)) << i;
    EXPECT_EQ(out[4].data[i], uniformReference(e.Word(i), -1.5, 2.25)) << i;
    EXPECT_EQ(out[5].data[i], toBf16(uniformReference(a.Word(i), -1.5, 2.25)))
        << i;
    EXPECT_GE(out[0].data[i], -1.5);
    EXPECT_LT(out[0].data[i], 2.25);
  }
  // Seed, stream and offset each select other numbers.
  auto differences = [&](const Tensor &x, const Tensor &y) {
    int count = 0;
    for (size_t i = 0; i < x.data.size(); ++i)
      count += x.data[i] != y.data[i];
    return count;
  };
  EXPECT_GT(differences(out[0], out[2]), 60);
  EXPECT_GT(differences(out[0], out[3]), 60);
  std::vector<Tensor> next =
      run(source, {values({}, {double(step + 1)}, ElementKind::I32)});
  ASSERT_EQ(next.size(), 6u);
  EXPECT_GT(differences(out[0], next[0]), 60);
  EXPECT_EQ(differences(out[4], next[4]), 0); // %e has no offset
}

TEST_F(ElementwiseEvalTest, RandomUniformClampsBelowHigh) {
  // high is the f32 right above low: rounding would reach high for about half
  // the elements, which the mapping moves to the largest f32 below high.
  std::string source = R"mlir(
    func.func @f() -> tensor<64xf32> {
      %r = kiln.random_uniform seed = 5 stream = 1 low = 1.0 high = 1.00000011920928955078125 : tensor<64xf32>
      return %r : tensor<64xf32>
    })mlir";
  std::vector<Tensor> out = run(source, {});
  ASSERT_EQ(out.size(), 1u);
  ::kiln::RandomStream stream{5, 1, 0};
  int highFractions = 0;
  for (size_t i = 0; i < 64; ++i) {
    EXPECT_EQ(out[0].data[i], 1.0) << i;
    highFractions += stream.Uniform(i) > 0.5;
  }
  EXPECT_GT(highFractions, 5); // the clamp was exercised
}

TEST_F(ElementwiseEvalTest, RandomNormalMatchesPhilox) {
  std::string source = R"mlir(
    func.func @f(%step: tensor<i32>) -> (tensor<7x9xf32>, tensor<7x9xf32>, tensor<7x9xbf16>, tensor<7x9xf32>, tensor<7x9xf32>, tensor<7x9xf16>) {
      %a = kiln.random_normal seed = 1234 stream = 2 offset = %step : tensor<7x9xf32>
      %b = kiln.random_normal seed = 1234 stream = 2 offset = %step mean = 0.5 std = 3.0 : tensor<7x9xf32>
      %c = kiln.random_normal seed = 1234 stream = 2 offset = %step mean = -1.0 std = 0.02 : tensor<7x9xbf16>
      %d = kiln.random_normal seed = 1234 stream = 2 mean = 2.5 std = 0.0 : tensor<7x9xf32>
      %e = kiln.random_normal seed = 1234 stream = 2 offset = %step : tensor<7x9xf32>
      %f = kiln.random_normal seed = 99 stream = 0 mean = 1.0 std = 2.0 : tensor<7x9xf16>
      return %a, %b, %c, %d, %e, %f : tensor<7x9xf32>, tensor<7x9xf32>, tensor<7x9xbf16>, tensor<7x9xf32>, tensor<7x9xf32>, tensor<7x9xf16>
    })mlir";
  int32_t step = std::uniform_int_distribution<int32_t>(0, 1 << 30)(rng);
  std::vector<Tensor> out =
      run(source, {values({}, {double(step)}, ElementKind::I32)});
  ASSERT_EQ(out.size(), 6u);
  ::kiln::RandomStream stream{1234, 2, uint32_t(step)}, other{99, 0, 0};
  for (size_t i = 0; i < 63; ++i) {
    double z = stream.Normal(i);
    EXPECT_EQ(out[0].data[i], double(float(z))) << i;
    EXPECT_EQ(out[1].data[i], double(float(0.5 + 3.0 * z))) << i;
    EXPECT_EQ(out[2].data[i], toBf16(-1.0 + 0.02 * z)) << i;
    EXPECT_EQ(out[3].data[i], 2.5) << i;
    EXPECT_EQ(out[4].data[i], out[0].data[i]) << "not deterministic at " << i;
    EXPECT_EQ(out[5].data[i], toHalfType(1.0 + 2.0 * other.Normal(i),
                                         llvm::APFloat::IEEEhalf()))
        << i;
  }
  // Box-Muller by hand for the first block: lanes 0/1 share (x0, x1).
  ::kiln::PhiloxBlock block =
      ::kiln::Philox4x32_10({0, 2, uint32_t(step), 0}, {1234, 0});
  double u1 = ((block[0] >> 8) + 1) / 16777216.0,
         u2 = (block[1] >> 8) / 16777216.0;
  double r = std::sqrt(-2 * std::log(u1));
  EXPECT_EQ(out[0].data[0], double(float(r * std::cos(2 * M_PI * u2))));
  EXPECT_EQ(out[0].data[1], double(float(r * std::sin(2 * M_PI * u2))));
  // The values are those of the element type already: F32 mode agrees.
  std::vector<Tensor> stored = run(
      source, {values({}, {double(step)}, ElementKind::I32)}, Precision::F32);
  ASSERT_EQ(stored.size(), 6u);
  for (size_t k = 0; k < 6; ++k)
    EXPECT_EQ(stored[k].data, out[k].data) << "result " << k;
  // Different offsets give different numbers.
  std::vector<Tensor> next =
      run(source, {values({}, {double(step + 1)}, ElementKind::I32)});
  ASSERT_EQ(next.size(), 6u);
  int same = 0;
  for (size_t i = 0; i < 63; ++i)
    same += next[0].data[i] == out[0].data[i];
  EXPECT_LT(same, 3);
}

TEST_F(ElementwiseEvalTest, RandomNormalMoments) {
  std::string source = R"mlir(
    func.func @f() -> tensor<256x257xf32> {
      %a = kiln.random_normal seed = 77 stream = 5 mean = 1.0 std = 2.0 : tensor<256x257xf32>
      return %a : tensor<256x257xf32>
    })mlir";
  std::vector<Tensor> out = run(source, {});
  ASSERT_EQ(out.size(), 1u);
  double sum = 0, sumSq = 0;
  for (double x : out[0].data) {
    sum += x;
    sumSq += x * x;
  }
  double n = double(out[0].data.size()), mean = sum / n;
  EXPECT_NEAR(mean, 1.0, 0.03);
  EXPECT_NEAR(sumSq / n - mean * mean, 4.0, 0.1);
}

} // namespace
} // namespace mlir::kiln::ref
