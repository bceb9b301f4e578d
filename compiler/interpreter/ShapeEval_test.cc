// Evaluators of the shape family checked against straightforward per-element
// computations (multi-index arithmetic, no strides) on fresh random inputs.

#include "compiler/interpreter/Interpreter.h"

#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <random>

namespace mlir::kiln::ref {
namespace {

using Index = std::vector<int64_t>;

/// Multi-index of row-major linear index `linear` in `shape`.
Index unravel(int64_t linear, const Shape &shape) {
  Index index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = linear % shape[d];
    linear /= shape[d];
  }
  return index;
}

int64_t ravel(const Index &index, const Shape &shape) {
  int64_t linear = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    linear = linear * shape[d] + index[d];
  return linear;
}

double at(const Tensor &t, const Index &index) {
  return t.data[ravel(index, t.shape)];
}

class ShapeEvalTest : public ::testing::Test {
protected:
  ShapeEvalTest() {
    context.loadDialect<KilnDialect, func::FuncDialect>();
    context.getDiagEngine().registerHandler([this](Diagnostic &diag) {
      diagnostics += diag.str() + "\n";
      return success();
    });
  }

  /// Runs the first function of `source` and returns its first result.
  Tensor run(llvm::StringRef source, std::vector<Tensor> inputs,
             Precision precision = Precision::F64) {
    module = parseSourceString<ModuleOp>(source, &context);
    EXPECT_TRUE(module) << diagnostics;
    if (!module)
      return Tensor();
    Interpreter interpreter(precision);
    auto results =
        interpreter.run(*module->getOps<func::FuncOp>().begin(), inputs);
    EXPECT_TRUE(succeeded(results)) << diagnostics;
    return succeeded(results) ? (*results)[0] : Tensor();
  }

  Tensor random(llvm::ArrayRef<int64_t> shape,
                ElementKind kind = ElementKind::F32) {
    Tensor t(shape, kind);
    std::uniform_real_distribution<double> dist(-2.0, 2.0);
    for (double &x : t.data)
      x = dist(rng);
    return t;
  }

  /// Random small integers, so that reductions see ties.
  Tensor randomInts(llvm::ArrayRef<int64_t> shape, int bound,
                    ElementKind kind = ElementKind::F32) {
    Tensor t(shape, kind);
    std::uniform_int_distribution<int> dist(-bound, bound);
    for (double &x : t.data)
      x = dist(rng);
    return t;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  std::string diagnostics;
  std::mt19937_64 rng{std::random_device{}()};
};

TEST_F(ShapeEvalTest, ReshapeAndBroadcastTo) {
  Tensor x = random({3, 1, 5});
  Tensor r = run(R"mlir(
    func.func @f(%x: tensor<3x1x5xf32>) -> tensor<5x3xf32> {
      %0 = kiln.reshape %x : tensor<3x1x5xf32> -> tensor<5x3xf32>
      return %0 : tensor<5x3xf32>
    })mlir",
                 {x});
  EXPECT_EQ(r.shape, (Shape{5, 3}));
  EXPECT_EQ(r.data, x.data);
  Tensor b = run(R"mlir(
    func.func @f(%x: tensor<3x1x5xf32>) -> tensor<2x3x4x5xf32> {
      %0 = kiln.broadcast_to %x : tensor<3x1x5xf32> -> tensor<2x3x4x5xf32>
      return %0 : tensor<2x3x4x5xf32>
    })mlir",
                 {x});
  ASSERT_EQ(b.size(), 2 * 3 * 4 * 5);
  for (int64_t i = 0; i < b.size(); ++i) {
    Index j = unravel(i, b.shape);
    EXPECT_EQ(b.data[i], at(x, {j[1], 0, j[3]}));
  }
}

TEST_F(ShapeEvalTest, Transpose) {
  Tensor x = random({2, 3, 5, 7});
  Tensor y = run(R"mlir(
    func.func @f(%x: tensor<2x3x5x7xf32>) -> tensor<5x2x7x3xf32> {
      %0 = kiln.transpose %x perm = [2, 0, 3, 1] : tensor<2x3x5x7xf32>
      return %0 : tensor<5x2x7x3xf32>
    })mlir",
                 {x});
  ASSERT_EQ(y.shape, (Shape{5, 2, 7, 3}));
  for (int64_t i = 0; i < y.size(); ++i) {
    Index j = unravel(i, y.shape);
    // result[j] = input[i] with i[perm[k]] = j[k].
    EXPECT_EQ(y.data[i], at(x, {j[1], j[3], j[0], j[2]}));
  }
}

TEST_F(ShapeEvalTest, StridedSlice) {
  Tensor x = random({5, 9, 4});
  Tensor y = run(R"mlir(
    func.func @f(%x: tensor<5x9x4xf32>) -> tensor<2x3x4xf32> {
      %0 = kiln.slice %x start = [1, 2, 0] limit = [5, 9, 4] step = [2, 3, 1] : tensor<5x9x4xf32>
      return %0 : tensor<2x3x4xf32>
    })mlir",
                 {x});
  ASSERT_EQ(y.shape, (Shape{2, 3, 4}));
  for (int64_t i = 0; i < y.size(); ++i) {
    Index j = unravel(i, y.shape);
    EXPECT_EQ(y.data[i], at(x, {1 + 2 * j[0], 2 + 3 * j[1], j[2]}));
  }
}

TEST_F(ShapeEvalTest, EmptySlice) {
  Tensor y = run(R"mlir(
    func.func @f(%x: tensor<3x4xf32>) -> tensor<3x0xf32> {
      %0 = kiln.slice %x start = [0, 2] limit = [3, 2] step = [1, 1] : tensor<3x4xf32>
      return %0 : tensor<3x0xf32>
    })mlir",
                 {random({3, 4})});
  EXPECT_EQ(y.shape, (Shape{3, 0}));
  EXPECT_EQ(y.size(), 0);
}

TEST_F(ShapeEvalTest, Concat) {
  Tensor a = random({2, 3, 5}), b = random({2, 1, 5}), c = random({2, 4, 5});
  Tensor y = run(R"mlir(
    func.func @f(%a: tensor<2x3x5xf32>, %b: tensor<2x1x5xf32>, %c: tensor<2x4x5xf32>) -> tensor<2x8x5xf32> {
      %0 = kiln.concat %a, %b, %c dim = 1 : tensor<2x3x5xf32>, tensor<2x1x5xf32>, tensor<2x4x5xf32>
      return %0 : tensor<2x8x5xf32>
    })mlir",
                 {a, b, c});
  ASSERT_EQ(y.shape, (Shape{2, 8, 5}));
  for (int64_t i = 0; i < y.size(); ++i) {
    Index j = unravel(i, y.shape);
    double expected = j[1] < 3   ? at(a, {j[0], j[1], j[2]})
                      : j[1] < 4 ? at(b, {j[0], j[1] - 3, j[2]})
                                 : at(c, {j[0], j[1] - 4, j[2]});
    EXPECT_EQ(y.data[i], expected);
  }
}

TEST_F(ShapeEvalTest, PadRoundsValueToElementType) {
  Tensor x = random({3, 2});
  Tensor y = run(R"mlir(
    func.func @f(%x: tensor<3x2xf32>) -> tensor<4x6xf32> {
      %0 = kiln.pad %x low = [1, 3] high = [0, 1] value = 0.1 : tensor<3x2xf32>
      return %0 : tensor<4x6xf32>
    })mlir",
                 {x});
  ASSERT_EQ(y.shape, (Shape{4, 6}));
  for (int64_t i = 0; i < y.size(); ++i) {
    Index j = unravel(i, y.shape);
    bool inside = j[0] >= 1 && j[1] >= 3 && j[1] < 5;
    // 0.1 is stored as the nearest f32, even in the f64 oracle.
    EXPECT_EQ(y.data[i], inside ? at(x, {j[0] - 1, j[1] - 3}) : double(0.1f));
  }
  Tensor n = randomInts({2, 3}, 9, ElementKind::I32);
  Tensor m = run(R"mlir(
    func.func @f(%x: tensor<2x3xi32>) -> tensor<2x5xi32> {
      %0 = kiln.pad %x low = [0, 2] high = [0, 0] value = -7.0 : tensor<2x3xi32>
      return %0 : tensor<2x5xi32>
    })mlir",
                 {n});
  for (int64_t i = 0; i < m.size(); ++i) {
    Index j = unravel(i, m.shape);
    EXPECT_EQ(m.data[i], j[1] < 2 ? -7.0 : at(n, {j[0], j[1] - 2}));
  }
}

TEST_F(ShapeEvalTest, Flip) {
  Tensor x = random({2, 3, 5});
  Tensor y = run(R"mlir(
    func.func @f(%x: tensor<2x3x5xf32>) -> tensor<2x3x5xf32> {
      %0 = kiln.flip %x dims = [0, 2] : tensor<2x3x5xf32>
      return %0 : tensor<2x3x5xf32>
    })mlir",
                 {x});
  for (int64_t i = 0; i < y.size(); ++i) {
    Index j = unravel(i, y.shape);
    EXPECT_EQ(y.data[i], at(x, {1 - j[0], j[1], 4 - j[2]}));
  }
  Tensor same = run(R"mlir(
    func.func @f(%x: tensor<2x3x5xf32>) -> tensor<2x3x5xf32> {
      %0 = kiln.flip %x dims = [] : tensor<2x3x5xf32>
      return %0 : tensor<2x3x5xf32>
    })mlir",
                    {x});
  EXPECT_EQ(same.data, x.data);
}

TEST_F(ShapeEvalTest, TriuAndTril) {
  Tensor x = random({3, 4, 6});
  for (int64_t diagonal : {-2, -1, 0, 1, 3}) {
    std::string attr = "diagonal = " + std::to_string(diagonal);
    Tensor u = run(R"mlir(
      func.func @f(%x: tensor<3x4x6xf32>) -> tensor<3x4x6xf32> {
        %0 = kiln.triu %x )mlir" +
                       attr + R"mlir( : tensor<3x4x6xf32>
        return %0 : tensor<3x4x6xf32>
      })mlir",
                   {x});
    Tensor l = run(R"mlir(
      func.func @f(%x: tensor<3x4x6xf32>) -> tensor<3x4x6xf32> {
        %0 = kiln.tril %x )mlir" +
                       attr + R"mlir( : tensor<3x4x6xf32>
        return %0 : tensor<3x4x6xf32>
      })mlir",
                   {x});
    for (int64_t i = 0; i < x.size(); ++i) {
      Index j = unravel(i, x.shape);
      int64_t offset = j[2] - j[1];
      EXPECT_EQ(u.data[i], offset >= diagonal ? x.data[i] : 0.0) << diagonal;
      EXPECT_EQ(l.data[i], offset <= diagonal ? x.data[i] : 0.0) << diagonal;
    }
  }
}

/// Naive reduction of a [A, B, C] tensor over dims 0 and 2.
template <typename Fold>
std::vector<double> reduce02(const Tensor &x, double init, Fold fold) {
  std::vector<double> out(x.shape[1], init);
  for (int64_t a = 0; a < x.shape[0]; ++a)
    for (int64_t b = 0; b < x.shape[1]; ++b)
      for (int64_t c = 0; c < x.shape[2]; ++c)
        out[b] = fold(out[b], at(x, {a, b, c}));
  return out;
}

TEST_F(ShapeEvalTest, ReductionsOverTwoDims) {
  Tensor x = randomInts({3, 5, 4}, 6); // small integers: ties for max/min
  // A NaN in group 2 makes its max and min NaN; the others stay numbers.
  x.data[ravel({1, 2, 3}, x.shape)] = NAN;
  auto source = [](const char *op, const char *keep, const char *type) {
    return std::string("func.func @f(%x: tensor<3x5x4xf32>) -> ") + type +
           " {\n %0 = kiln." + op + " %x dims = [0, 2]" + keep +
           " : tensor<3x5x4xf32>\n return %0 : " + type + "\n}";
  };
  Tensor sum = run(source("reduce_sum", "", "tensor<5xf32>"), {x});
  Tensor mean =
      run(source("reduce_mean", " keepdim", "tensor<1x5x1xf32>"), {x});
  Tensor max = run(source("reduce_max", "", "tensor<5xf32>"), {x});
  Tensor min = run(source("reduce_min", " keepdim", "tensor<1x5x1xf32>"), {x});
  EXPECT_EQ(mean.shape, (Shape{1, 5, 1}));
  std::vector<double> s =
      reduce02(x, 0.0, [](double a, double b) { return a + b; });
  std::vector<double> hi = reduce02(x, -INFINITY, [](double a, double b) {
    return std::isnan(a) || std::isnan(b) ? NAN : (b > a ? b : a);
  });
  std::vector<double> lo = reduce02(x, INFINITY, [](double a, double b) {
    return std::isnan(a) || std::isnan(b) ? NAN : (b < a ? b : a);
  });
  for (int b = 0; b < 5; ++b) {
    if (b == 2) {
      EXPECT_TRUE(std::isnan(sum.data[b]));
      EXPECT_TRUE(std::isnan(max.data[b]));
      EXPECT_TRUE(std::isnan(min.data[b]));
      continue;
    }
    EXPECT_DOUBLE_EQ(sum.data[b], s[b]);
    EXPECT_DOUBLE_EQ(mean.data[b], s[b] / 12);
    EXPECT_EQ(max.data[b], hi[b]);
    EXPECT_EQ(min.data[b], lo[b]);
  }
}

TEST_F(ShapeEvalTest, ReduceAllToScalarAndNegativeValues) {
  Tensor x = random({7, 3});
  for (double &v : x.data)
    v = -std::abs(v) - 1; // all negative: the max is not 0
  Tensor max = run(R"mlir(
    func.func @f(%x: tensor<7x3xf32>) -> tensor<f32> {
      %0 = kiln.reduce_max %x dims = [1, 0] : tensor<7x3xf32>
      return %0 : tensor<f32>
    })mlir",
                   {x});
  EXPECT_EQ(max.shape, Shape{});
  EXPECT_EQ(max.data[0], *std::max_element(x.data.begin(), x.data.end()));
  Tensor mean = run(R"mlir(
    func.func @f(%x: tensor<7x3xf32>) -> tensor<f32> {
      %0 = kiln.reduce_mean %x dims = [0, 1] : tensor<7x3xf32>
      return %0 : tensor<f32>
    })mlir",
                    {x});
  double total = 0;
  for (double v : x.data)
    total += v;
  EXPECT_NEAR(mean.data[0], total / 21, 1e-14);
}

TEST_F(ShapeEvalTest, ReduceMaxOfI32) {
  Tensor x = randomInts({4, 6}, 50, ElementKind::I32);
  Tensor y = run(R"mlir(
    func.func @f(%x: tensor<4x6xi32>) -> tensor<4xi32> {
      %0 = kiln.reduce_max %x dims = [1] : tensor<4x6xi32>
      return %0 : tensor<4xi32>
    })mlir",
                 {x});
  for (int r = 0; r < 4; ++r)
    EXPECT_EQ(y.data[r], *std::max_element(x.data.begin() + 6 * r,
                                           x.data.begin() + 6 * r + 6));
}

TEST_F(ShapeEvalTest, ArgmaxFirstIndexOnTiesAndNaN) {
  Tensor x = randomInts({3, 7, 5}, 2); // many ties
  // Column (0, *, 1): a NaN at 4 and another at 6: the first NaN wins.
  x.data[ravel({0, 4, 1}, x.shape)] = NAN;
  x.data[ravel({0, 6, 1}, x.shape)] = NAN;
  Tensor y = run(R"mlir(
    func.func @f(%x: tensor<3x7x5xf32>) -> tensor<3x1x5xi32> {
      %0 = kiln.argmax %x dim = 1 keepdim : tensor<3x7x5xf32>
      return %0 : tensor<3x1x5xi32>
    })mlir",
                 {x});
  ASSERT_EQ(y.shape, (Shape{3, 1, 5}));
  for (int64_t a = 0; a < 3; ++a)
    for (int64_t c = 0; c < 5; ++c) {
      int64_t best = 0;
      for (int64_t k = 0; k < 7; ++k) {
        double v = at(x, {a, k, c});
        if (std::isnan(v)) {
          best = k;
          break;
        }
        if (v > at(x, {a, best, c}))
          best = k;
      }
      EXPECT_EQ(y.data[ravel({a, 0, c}, y.shape)], double(best))
          << a << "," << c;
    }
  EXPECT_EQ(y.data[ravel({0, 0, 1}, y.shape)], 4.0);
  Tensor last = run(R"mlir(
    func.func @f(%x: tensor<3x7x5xf32>) -> tensor<3x7xi32> {
      %0 = kiln.argmax %x dim = 2 : tensor<3x7x5xf32>
      return %0 : tensor<3x7xi32>
    })mlir",
                    {x});
  for (int64_t a = 0; a < 3; ++a)
    for (int64_t b = 0; b < 7; ++b) {
      int64_t best = 0;
      for (int64_t k = 0; k < 5; ++k) {
        double v = at(x, {a, b, k});
        if (std::isnan(v)) {
          best = k;
          break;
        }
        if (v > at(x, {a, b, best}))
          best = k;
      }
      EXPECT_EQ(last.data[a * 7 + b], double(best));
    }
}

/// Naive batched matmul straight from the op's definition.
Tensor naiveMatmul(const Tensor &lhs, const Tensor &rhs, bool tl, bool tr,
                   const Shape &outShape) {
  Tensor out(outShape, lhs.kind);
  size_t rank = outShape.size();
  int64_t k = tl ? lhs.shape[lhs.rank() - 2] : lhs.shape[lhs.rank() - 1];
  for (int64_t linear = 0; linear < out.size(); ++linear) {
    Index j = unravel(linear, outShape);
    // Batch index of an operand: aligned at the right, 0 where its dim is 1.
    auto operandIndex = [&](const Tensor &t, int64_t row, int64_t col) {
      Index index(t.rank());
      size_t lead = rank - t.shape.size();
      for (size_t d = 0; d + 2 < t.shape.size(); ++d)
        index[d] = t.shape[d] == 1 ? 0 : j[lead + d];
      index[t.rank() - 2] = row;
      index[t.rank() - 1] = col;
      return index;
    };
    int64_t i = j[rank - 2], c = j[rank - 1];
    double sum = 0;
    for (int64_t p = 0; p < k; ++p)
      sum += at(lhs, tl ? operandIndex(lhs, p, i) : operandIndex(lhs, i, p)) *
             at(rhs, tr ? operandIndex(rhs, c, p) : operandIndex(rhs, p, c));
    out.data[linear] = sum;
  }
  return out;
}

std::string typeString(const Shape &shape, const char *element = "f32") {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s + element + ">";
}

TEST_F(ShapeEvalTest, MatmulEveryTransposeWithBatchBroadcast) {
  const int64_t m = 5, k = 7, n = 3;
  for (bool tl : {false, true})
    for (bool tr : {false, true}) {
      Shape lhsShape = {2, 1, tl ? k : m, tl ? m : k};
      Shape rhsShape = {3, tr ? n : k, tr ? k : n};
      Shape outShape = {2, 3, m, n};
      Tensor lhs = random(lhsShape), rhs = random(rhsShape);
      std::string flags = std::string(tl ? " transpose_lhs" : "") +
                          (tr ? " transpose_rhs" : "");
      std::string source = "func.func @f(%a: " + typeString(lhsShape) +
                           ", %b: " + typeString(rhsShape) + ") -> " +
                           typeString(outShape) +
                           " {\n %0 = kiln.matmul %a, %b" + flags + " : " +
                           typeString(lhsShape) + ", " + typeString(rhsShape) +
                           "\n return %0 : " + typeString(outShape) + "\n}";
      Tensor y = run(source, {lhs, rhs});
      Tensor expected = naiveMatmul(lhs, rhs, tl, tr, outShape);
      ASSERT_EQ(y.shape, outShape) << flags;
      for (int64_t i = 0; i < y.size(); ++i)
        EXPECT_NEAR(y.data[i], expected.data[i], 1e-12) << flags << " at " << i;
    }
}

TEST_F(ShapeEvalTest, MatmulRandomShapes) {
  // Fresh odd and even sizes, batch dims broadcast from either side.
  std::uniform_int_distribution<int64_t> size(1, 9), coin(0, 1);
  for (int trial = 0; trial < 10; ++trial) {
    int64_t m = size(rng), k = size(rng), n = size(rng), b0 = size(rng),
            b1 = size(rng);
    bool tl = coin(rng), tr = coin(rng);
    bool lhsBroadcast = coin(rng);
    Shape lhsShape = {lhsBroadcast ? 1 : b0, b1, tl ? k : m, tl ? m : k};
    Shape rhsShape = {b0, lhsBroadcast ? b1 : 1, tr ? n : k, tr ? k : n};
    Shape outShape = {b0, b1, m, n};
    Tensor lhs = random(lhsShape), rhs = random(rhsShape);
    std::string flags =
        std::string(tl ? " transpose_lhs" : "") + (tr ? " transpose_rhs" : "");
    std::string source = "func.func @f(%a: " + typeString(lhsShape) +
                         ", %b: " + typeString(rhsShape) + ") -> " +
                         typeString(outShape) + " {\n %0 = kiln.matmul %a, %b" +
                         flags + " : " + typeString(lhsShape) + ", " +
                         typeString(rhsShape) +
                         "\n return %0 : " + typeString(outShape) + "\n}";
    SCOPED_TRACE(source);
    Tensor y = run(source, {lhs, rhs});
    Tensor expected = naiveMatmul(lhs, rhs, tl, tr, outShape);
    ASSERT_EQ(y.shape, outShape);
    for (int64_t i = 0; i < y.size(); ++i)
      ASSERT_NEAR(y.data[i], expected.data[i], 1e-12) << i;
  }
}

TEST_F(ShapeEvalTest, MatmulRank2AndRhsOnlyBatch) {
  // lhs without batch dims against a batched rhs (lhs broadcast over it).
  Tensor lhs = random({4, 9}), rhs = random({2, 3, 6, 9});
  Tensor y = run(R"mlir(
    func.func @f(%a: tensor<4x9xf32>, %b: tensor<2x3x6x9xf32>) -> tensor<2x3x4x6xf32> {
      %0 = kiln.matmul %a, %b transpose_rhs : tensor<4x9xf32>, tensor<2x3x6x9xf32>
      return %0 : tensor<2x3x4x6xf32>
    })mlir",
                 {lhs, rhs});
  Tensor expected = naiveMatmul(lhs, rhs, false, true, {2, 3, 4, 6});
  ASSERT_EQ(y.shape, expected.shape);
  for (int64_t i = 0; i < y.size(); ++i)
    EXPECT_NEAR(y.data[i], expected.data[i], 1e-12);
}

TEST_F(ShapeEvalTest, MatmulBf16RoundsOnceInF32Mode) {
  Tensor lhs = random({3, 17}, ElementKind::BF16),
         rhs = random({17, 5}, ElementKind::BF16);
  for (Tensor *t : {&lhs, &rhs})
    for (double &x : t->data)
      x = roundToStorage(x, ElementKind::BF16, Precision::F32);
  Tensor y = run(R"mlir(
    func.func @f(%a: tensor<3x17xbf16>, %b: tensor<17x5xbf16>) -> tensor<3x5xbf16> {
      %0 = kiln.matmul %a, %b : tensor<3x17xbf16>, tensor<17x5xbf16>
      return %0 : tensor<3x5xbf16>
    })mlir",
                 {lhs, rhs}, Precision::F32);
  Tensor exact = naiveMatmul(lhs, rhs, false, false, {3, 5});
  for (int64_t i = 0; i < y.size(); ++i) {
    // Stored as bf16, within bf16's rounding of the exact sum.
    EXPECT_EQ(y.data[i],
              roundToStorage(y.data[i], ElementKind::BF16, Precision::F32));
    EXPECT_LE(std::abs(y.data[i] - exact.data[i]),
              std::ldexp(std::abs(exact.data[i]), -8))
        << i;
  }
}

TEST_F(ShapeEvalTest, MatmulOfTrainingSizeIsFast) {
  // The samples run thousands of these per training run: one must take
  // milliseconds, not a second (a loose bound that only catches a bad loop
  // order or per-element overhead).
  Tensor lhs = random({128, 64}), rhs = random({256, 64});
  auto begin = std::chrono::steady_clock::now();
  Tensor y;
  for (int i = 0; i < 5; ++i)
    y = run(R"mlir(
      func.func @f(%a: tensor<128x64xf32>, %b: tensor<256x64xf32>) -> tensor<128x256xf32> {
        %0 = kiln.matmul %a, %b transpose_rhs : tensor<128x64xf32>, tensor<256x64xf32>
        return %0 : tensor<128x256xf32>
      })mlir",
            {lhs, rhs});
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin)
          .count();
  EXPECT_LT(seconds, 5.0);
  // Spot-check a few elements.
  for (int64_t i : {0, 77, 127})
    for (int64_t j : {0, 130, 255}) {
      double sum = 0;
      for (int64_t p = 0; p < 64; ++p)
        sum += lhs.data[i * 64 + p] * rhs.data[j * 64 + p];
      EXPECT_NEAR(y.data[i * 256 + j], sum, 1e-12);
    }
}

} // namespace
} // namespace mlir::kiln::ref
