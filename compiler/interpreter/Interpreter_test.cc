#include "compiler/interpreter/Interpreter.h"

#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/APFloat.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

namespace mlir::kiln::ref {
namespace {

class InterpreterTest : public ::testing::Test {
protected:
  InterpreterTest() {
    context.loadDialect<KilnDialect, func::FuncDialect>();
    context.getDiagEngine().registerHandler([this](Diagnostic &diag) {
      diagnostics += diag.str() + "\n";
      return success();
    });
  }

  func::FuncOp parse(llvm::StringRef source) {
    module = parseSourceString<ModuleOp>(source, &context);
    EXPECT_TRUE(module) << diagnostics;
    return module ? *module->getOps<func::FuncOp>().begin() : func::FuncOp();
  }

  Tensor random(llvm::ArrayRef<int64_t> shape,
                ElementKind kind = ElementKind::F32) {
    Tensor t(shape, kind);
    std::uniform_real_distribution<double> dist(-2.0, 2.0);
    for (double &x : t.data)
      x = dist(rng);
    return t;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  std::string diagnostics;
  std::mt19937_64 rng{std::random_device{}()};
};

TEST_F(InterpreterTest, BroadcastAddExpAndReduce) {
  func::FuncOp f = parse(R"mlir(
    func.func @f(%a: tensor<3x1x4xf32>, %b: tensor<2x1xf32>) -> (tensor<3x2x4xf32>, tensor<3x1x4xf32>) {
      %0 = kiln.add %a, %b : tensor<3x1x4xf32>, tensor<2x1xf32>
      %1 = kiln.exp %0 : tensor<3x2x4xf32>
      %2 = kiln.reduce_sum %1 dims = [1] keepdim : tensor<3x2x4xf32>
      return %1, %2 : tensor<3x2x4xf32>, tensor<3x1x4xf32>
    })mlir");
  Tensor a = random({3, 1, 4}), b = random({2, 1});
  Interpreter interpreter(Precision::F64);
  auto results = interpreter.run(f, {a, b});
  ASSERT_TRUE(succeeded(results)) << diagnostics;
  const Tensor &e = (*results)[0], &s = (*results)[1];
  for (int i = 0; i < 3; ++i)
    for (int k = 0; k < 4; ++k) {
      double sum = 0;
      for (int j = 0; j < 2; ++j) {
        double expected = std::exp(a.data[i * 4 + k] + b.data[j]);
        EXPECT_DOUBLE_EQ(e.data[(i * 2 + j) * 4 + k], expected);
        sum += expected;
      }
      EXPECT_NEAR(s.data[i * 4 + k], sum, 1e-12 * std::abs(sum));
    }
}

TEST_F(InterpreterTest, F32ModeRoundsBf16Storage) {
  func::FuncOp f = parse(R"mlir(
    func.func @f(%a: tensor<64xbf16>, %b: tensor<64xbf16>) -> tensor<64xbf16> {
      %0 = kiln.add %a, %b : tensor<64xbf16>, tensor<64xbf16>
      return %0 : tensor<64xbf16>
    })mlir");
  Tensor a = random({64}, ElementKind::BF16),
         b = random({64}, ElementKind::BF16);
  for (Tensor *t : {&a, &b})
    for (double &x : t->data)
      x = roundToStorage(x, ElementKind::BF16, Precision::F32);
  Interpreter interpreter(Precision::F32);
  auto results = interpreter.run(f, {a, b});
  ASSERT_TRUE(succeeded(results)) << diagnostics;
  for (int i = 0; i < 64; ++i) {
    double exact = a.data[i] + b.data[i];
    double stored = (*results)[0].data[i];
    // bf16 keeps 8 significant bits: rounding error at most 2^-8 relative.
    EXPECT_LE(std::abs(stored - exact), std::ldexp(std::abs(exact), -8));
    EXPECT_EQ(stored,
              roundToStorage(stored, ElementKind::BF16, Precision::F32));
  }
}

TEST_F(InterpreterTest, RejectsMisshapedInput) {
  func::FuncOp f = parse(R"mlir(
    func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
      %0 = kiln.exp %a : tensor<4xf32>
      return %0 : tensor<4xf32>
    })mlir");
  Interpreter interpreter(Precision::F64);
  EXPECT_TRUE(failed(interpreter.run(f, {random({5})})));
  EXPECT_NE(
      diagnostics.find("input 0: expected 'tensor<4xf32>', got tensor<5xf32>"),
      std::string::npos)
      << diagnostics;
  diagnostics.clear();
  EXPECT_TRUE(failed(interpreter.run(f, {})));
  EXPECT_NE(diagnostics.find("expects 1 inputs, got 0"), std::string::npos)
      << diagnostics;
}

TEST(RoundToStorage, KnownValues) {
  EXPECT_EQ(roundToStorage(1.0 + 1.0 / 256, ElementKind::BF16, Precision::F32),
            1.0);
  EXPECT_EQ(roundToStorage(1.0 + 3.0 / 256, ElementKind::BF16, Precision::F32),
            1.0 + 4.0 / 256);
  EXPECT_EQ(roundToStorage(65520.0, ElementKind::F16, Precision::F32),
            INFINITY);
  EXPECT_EQ(roundToStorage(0.1, ElementKind::F32, Precision::F32),
            double(0.1f));
  EXPECT_EQ(roundToStorage(0.1, ElementKind::F32, Precision::F64), 0.1);
  EXPECT_EQ(roundToStorage(-3.7, ElementKind::I32, Precision::F64), -3.0);
  EXPECT_EQ(roundToStorage(0.5, ElementKind::I1, Precision::F64), 1.0);
}

/// bf16 storage rounding agrees with APFloat's round-to-nearest-even
/// conversion of the f32 value on random bit patterns and on the edge cases.
TEST(RoundToStorage, BF16MatchesAPFloat) {
  auto viaAPFloat = [](double value) {
    llvm::APFloat number(static_cast<float>(value));
    bool losesInfo = false;
    number.convert(llvm::APFloat::BFloat(), llvm::APFloat::rmNearestTiesToEven,
                   &losesInfo);
    number.convert(llvm::APFloat::IEEEdouble(),
                   llvm::APFloat::rmNearestTiesToEven, &losesInfo);
    return number.convertToDouble();
  };
  std::vector<double> values = {0.0,
                                -0.0,
                                INFINITY,
                                -INFINITY,
                                3.3895313892515355e38,
                                3.4028234663852886e38,
                                1.0 + 1.0 / 256,
                                1.0 + 3.0 / 256,
                                1e-40,
                                -1e-45,
                                1.1754943508222875e-38};
  std::mt19937 rng(20261130);
  for (int i = 0; i < 200000; ++i) {
    uint32_t bits = rng();
    float single;
    std::memcpy(&single, &bits, sizeof(single));
    if (!std::isnan(single))
      values.push_back(single);
  }
  for (double value : values) {
    double rounded = roundToStorage(value, ElementKind::BF16, Precision::F32);
    ASSERT_EQ(rounded, viaAPFloat(value)) << value;
    ASSERT_EQ(std::signbit(rounded), std::signbit(viaAPFloat(value))) << value;
  }
  EXPECT_TRUE(
      std::isnan(roundToStorage(NAN, ElementKind::BF16, Precision::F32)));
}

} // namespace
} // namespace mlir::kiln::ref
