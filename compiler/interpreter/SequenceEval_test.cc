// Tests of the attention, rnn and fusion evaluators against straightforward
// implementations written here: explicit loops over plain index arithmetic,
// one formula per line as the op descriptions give them.

#include "compiler/interpreter/Interpreter.h"

#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

namespace mlir::kiln::ref {
namespace {

class SequenceEvalTest : public ::testing::Test {
protected:
  SequenceEvalTest() {
    context.loadDialect<KilnDialect, func::FuncDialect>();
    context.getDiagEngine().registerHandler([this](Diagnostic &diag) {
      diagnostics += diag.str() + "\n";
      return success();
    });
  }

  func::FuncOp parse(const std::string &source) {
    module = parseSourceString<ModuleOp>(source, &context);
    EXPECT_TRUE(module) << diagnostics;
    return module ? *module->getOps<func::FuncOp>().begin() : func::FuncOp();
  }

  Tensor random(llvm::ArrayRef<int64_t> shape, double low = -2.0,
                double high = 2.0, ElementKind kind = ElementKind::F32) {
    Tensor t(shape, kind);
    std::uniform_real_distribution<double> dist(low, high);
    for (double &x : t.data)
      x = dist(rng);
    return t;
  }

  std::vector<Tensor> run(func::FuncOp f, llvm::ArrayRef<Tensor> inputs,
                          Precision precision = Precision::F64) {
    Interpreter interpreter(precision);
    auto results = interpreter.run(f, inputs);
    EXPECT_TRUE(succeeded(results)) << diagnostics;
    return succeeded(results) ? *results : std::vector<Tensor>();
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  std::string diagnostics;
  std::mt19937_64 rng{std::random_device{}()};
};

std::string typeOf(llvm::ArrayRef<int64_t> shape, const char *element = "f32") {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s + element + ">";
}

void expectClose(const std::vector<double> &actual,
                 const std::vector<double> &expected, double tolerance,
                 const char *what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (size_t i = 0; i < actual.size(); ++i)
    ASSERT_NEAR(actual[i], expected[i],
                tolerance * std::max(1.0, std::abs(expected[i])))
        << what << " element " << i;
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

struct AttentionCase {
  int64_t b, h, tq, tk, d, dv;
  bool causal;
  double scale; // 0: default
};

/// softmax(q k^T * scale + mask) v with the full score matrix of each head
/// and a mask of -infinity, as the description states it.
std::vector<double> referenceAttention(const AttentionCase &c, const Tensor &q,
                                       const Tensor &k, const Tensor &v) {
  double scale = c.scale > 0 ? c.scale : 1.0 / std::sqrt(double(c.d));
  std::vector<double> out(c.b * c.h * c.tq * c.dv, 0.0);
  for (int64_t bh = 0; bh < c.b * c.h; ++bh) {
    std::vector<std::vector<double>> s(c.tq, std::vector<double>(c.tk));
    for (int64_t i = 0; i < c.tq; ++i)
      for (int64_t j = 0; j < c.tk; ++j) {
        double dot = 0;
        for (int64_t e = 0; e < c.d; ++e)
          dot += q.data[(bh * c.tq + i) * c.d + e] *
                 k.data[(bh * c.tk + j) * c.d + e];
        bool masked = c.causal && j > i + (c.tk - c.tq);
        s[i][j] = masked ? -INFINITY : dot * scale;
      }
    for (int64_t i = 0; i < c.tq; ++i) {
      double max = -INFINITY, sum = 0;
      for (double x : s[i])
        max = std::max(max, x);
      for (double &x : s[i]) {
        x = std::exp(x - max);
        sum += x;
      }
      for (int64_t j = 0; j < c.tk; ++j)
        for (int64_t e = 0; e < c.dv; ++e)
          out[(bh * c.tq + i) * c.dv + e] +=
              s[i][j] / sum * v.data[(bh * c.tk + j) * c.dv + e];
    }
  }
  return out;
}

TEST_F(SequenceEvalTest, AttentionMatchesReference) {
  AttentionCase cases[] = {
      {2, 3, 5, 5, 4, 6, false, 0},   // multi-head, default scale
      {2, 3, 5, 5, 4, 6, true, 0},    // causal lower triangle
      {1, 2, 3, 7, 5, 2, true, 0.3},  // Tq < Tk: ends aligned, custom scale
      {3, 1, 4, 2, 3, 3, false, 0.7}, // Tq > Tk
      {2, 2, 1, 6, 4, 3, true, 0},    // one query sees the whole cache
      {1, 1, 1, 1, 2, 2, true, 0},    // a single key
  };
  for (const AttentionCase &c : cases) {
    std::vector<int64_t> qs = {c.b, c.h, c.tq, c.d}, ks = {c.b, c.h, c.tk, c.d},
                         vs = {c.b, c.h, c.tk, c.dv},
                         os = {c.b, c.h, c.tq, c.dv};
    std::string attrs = c.causal ? " causal" : "";
    if (c.scale > 0)
      attrs += " scale = " + std::to_string(c.scale);
    func::FuncOp f =
        parse("func.func @f(%q: " + typeOf(qs) + ", %k: " + typeOf(ks) +
              ", %v: " + typeOf(vs) + ") -> " + typeOf(os) +
              " {\n  %0 = kiln.attention %q, %k, %v" + attrs + " : " +
              typeOf(qs) + ", " + typeOf(ks) + ", " + typeOf(vs) +
              "\n  return %0 : " + typeOf(os) + "\n}");
    ASSERT_TRUE(f);
    Tensor q = random(qs), k = random(ks), v = random(vs);
    std::vector<Tensor> out = run(f, {q, k, v});
    ASSERT_EQ(out.size(), 1u);
    expectClose(out[0].data, referenceAttention(c, q, k, v), 1e-12,
                "attention");
  }
}

TEST_F(SequenceEvalTest, AttentionRowLseAndTheBackwardThatReadsIt) {
  // The forward's row log-sum-exp against the scores summed here, and the
  // backward given it against the one without (the same exact softmax).
  for (bool causal : {false, true}) {
    AttentionCase c{2, 2, 3, 5, 4, 3, causal, 0.6};
    std::vector<int64_t> qs = {c.b, c.h, c.tq, c.d}, ks = {c.b, c.h, c.tk, c.d},
                         vs = {c.b, c.h, c.tk, c.dv},
                         os = {c.b, c.h, c.tq, c.dv}, ls = {c.b, c.h, c.tq};
    std::string mask = causal ? " causal" : "";
    std::string operands = typeOf(qs) + ", " + typeOf(ks) + ", " + typeOf(vs);
    std::string grads = operands + ", " + typeOf(os);
    func::FuncOp f = parse(
        "func.func @f(%q: " + typeOf(qs) + ", %k: " + typeOf(ks) +
        ", %v: " + typeOf(vs) + ", %do: " + typeOf(os) + ") -> (" +
        typeOf(ls) + ", " + operands + ", " + operands + ") {\n" +
        "  %o, %lse = kiln.attention %q, %k, %v" + mask +
        " scale = 0.6 with_row_lse : " + operands + "\n" +
        "  %a:3 = kiln.attention_backward %q, %k, %v, %o, %do" + mask +
        " scale = 0.6 row_lse(%lse : " + typeOf(ls) + ") : " + grads + "\n" +
        "  %b:3 = kiln.attention_backward %q, %k, %v, %o, %do" + mask +
        " scale = 0.6 : " + grads + "\n" +
        "  return %lse, %a#0, %a#1, %a#2, %b#0, %b#1, %b#2 : " + typeOf(ls) +
        ", " + operands + ", " + operands + "\n}");
    ASSERT_TRUE(f);
    Tensor q = random(qs), k = random(ks), v = random(vs), dOut = random(os);
    std::vector<Tensor> out = run(f, {q, k, v, dOut});
    ASSERT_EQ(out.size(), 7u);
    std::vector<double> lse;
    for (int64_t bh = 0; bh < c.b * c.h; ++bh)
      for (int64_t i = 0; i < c.tq; ++i) {
        double sum = 0;
        for (int64_t j = 0; j < c.tk; ++j) {
          if (causal && j > i + (c.tk - c.tq))
            continue;
          double dot = 0;
          for (int64_t e = 0; e < c.d; ++e)
            dot += q.data[(bh * c.tq + i) * c.d + e] *
                   k.data[(bh * c.tk + j) * c.d + e];
          sum += std::exp(dot * c.scale);
        }
        lse.push_back(std::log(sum));
      }
    expectClose(out[0].data, lse, 1e-12, "row_lse");
    for (int g = 0; g < 3; ++g)
      EXPECT_EQ(out[1 + g].data, out[4 + g].data) << "gradient " << g;
  }
}

TEST_F(SequenceEvalTest, AttentionIsStableForLargeScores) {
  // Scores near 1e4 overflow exp() unless the row maximum is subtracted.
  func::FuncOp f = parse(R"mlir(
    func.func @f(%q: tensor<1x1x2x1xf32>, %k: tensor<1x1x3x1xf32>, %v: tensor<1x1x3x1xf32>) -> tensor<1x1x2x1xf32> {
      %0 = kiln.attention %q, %k, %v scale = 1.0 : tensor<1x1x2x1xf32>, tensor<1x1x3x1xf32>, tensor<1x1x3x1xf32>
      return %0 : tensor<1x1x2x1xf32>
    })mlir");
  Tensor q({1, 1, 2, 1}, ElementKind::F32), k({1, 1, 3, 1}, ElementKind::F32),
      v({1, 1, 3, 1}, ElementKind::F32);
  q.data = {100.0, -100.0};
  k.data = {100.0, 99.0, -100.0};
  v.data = {1.0, 2.0, 3.0};
  std::vector<Tensor> out = run(f, {q, k, v});
  ASSERT_EQ(out.size(), 1u);
  // Row 0: scores 1e4, 9900, -1e4: weights 1/(1+e^-100) and e^-100/(...).
  EXPECT_NEAR(out[0].data[0], 1.0, 1e-12);
  // Row 1: scores -1e4, -9900, 1e4: all weight on key 2.
  EXPECT_NEAR(out[0].data[1], 3.0, 1e-12);
  for (double x : out[0].data)
    EXPECT_TRUE(std::isfinite(x));
}

TEST_F(SequenceEvalTest, AttentionRoundsBf16InF32Mode) {
  func::FuncOp f = parse(R"mlir(
    func.func @f(%q: tensor<1x2x3x4xbf16>, %k: tensor<1x2x3x4xbf16>, %v: tensor<1x2x3x4xbf16>) -> tensor<1x2x3x4xbf16> {
      %0 = kiln.attention %q, %k, %v causal : tensor<1x2x3x4xbf16>, tensor<1x2x3x4xbf16>, tensor<1x2x3x4xbf16>
      return %0 : tensor<1x2x3x4xbf16>
    })mlir");
  Tensor q = random({1, 2, 3, 4}, -2, 2, ElementKind::BF16),
         k = random({1, 2, 3, 4}, -2, 2, ElementKind::BF16),
         v = random({1, 2, 3, 4}, -2, 2, ElementKind::BF16);
  for (Tensor *t : {&q, &k, &v})
    for (double &x : t->data)
      x = roundToStorage(x, ElementKind::BF16, Precision::F32);
  std::vector<Tensor> exact = run(f, {q, k, v}, Precision::F64);
  std::vector<Tensor> rounded = run(f, {q, k, v}, Precision::F32);
  ASSERT_EQ(rounded.size(), 1u);
  for (size_t i = 0; i < exact[0].data.size(); ++i)
    EXPECT_EQ(
        rounded[0].data[i],
        roundToStorage(exact[0].data[i], ElementKind::BF16, Precision::F32));
}

//===----------------------------------------------------------------------===//
// Recurrent op
//===----------------------------------------------------------------------===//

double sigmoidRef(double x) { return 1.0 / (1.0 + std::exp(-x)); }

struct RnnCase {
  const char *function;
  int64_t b, t, nh, d;
};

struct RnnSizes {
  int64_t gw, gr, gb, s;
};

RnnSizes sizesOf(const std::string &function) {
  if (function == "lstm")
    return {4, 4, 4, 2};
  if (function == "slstm")
    return {4, 4, 4, 4};
  if (function == "gru")
    return {3, 3, 4, 1};
  return {1, 1, 1, 1};
}

/// Plain per-step recurrence over nested arrays, written from the equations of
/// kiln.rnn's description. Returns all states [S, B, T, NH, D] (flattened).
std::vector<double> referenceRnn(const RnnCase &c, const Tensor &wx,
                                 const Tensor &r, const Tensor &bias,
                                 const Tensor &s0) {
  std::string fn = c.function;
  RnnSizes z = sizesOf(fn);
  int64_t B = c.b, T = c.t, NH = c.nh, D = c.d;
  auto WX = [&](int64_t b, int64_t t, int64_t g, int64_t n, int64_t d) {
    return wx.data[(((b * T + t) * z.gw + g) * NH + n) * D + d];
  };
  auto R = [&](int64_t g, int64_t n, int64_t d, int64_t p) {
    return r.data[((g * NH + n) * D + d) * D + p];
  };
  auto BIAS = [&](int64_t g, int64_t n, int64_t d) {
    return bias.data[(g * NH + n) * D + d];
  };
  std::vector<double> all(z.s * B * T * NH * D);
  for (int64_t b = 0; b < B; ++b) {
    // state[s][n][d]
    std::vector<std::vector<std::vector<double>>> state(
        z.s, std::vector<std::vector<double>>(NH, std::vector<double>(D)));
    for (int64_t s = 0; s < z.s; ++s)
      for (int64_t n = 0; n < NH; ++n)
        for (int64_t d = 0; d < D; ++d)
          state[s][n][d] = s0.data[((s * B + b) * NH + n) * D + d];
    for (int64_t t = 0; t < T; ++t) {
      auto next = state;
      for (int64_t n = 0; n < NH; ++n)
        for (int64_t d = 0; d < D; ++d) {
          // Rh[g] = sum_p R[g, n, d, p] * h[n, p]
          double Rh[4] = {0, 0, 0, 0};
          for (int64_t g = 0; g < z.gr; ++g)
            for (int64_t p = 0; p < D; ++p)
              Rh[g] += R(g, n, d, p) * state[0][n][p];
          if (fn == "lstm") {
            double i = sigmoidRef(Rh[0] + WX(b, t, 0, n, d) + BIAS(0, n, d));
            double f = sigmoidRef(Rh[1] + WX(b, t, 1, n, d) + BIAS(1, n, d));
            double zz = std::tanh(Rh[2] + WX(b, t, 2, n, d) + BIAS(2, n, d));
            double o = sigmoidRef(Rh[3] + WX(b, t, 3, n, d) + BIAS(3, n, d));
            double cNew = f * state[1][n][d] + i * zz;
            next[1][n][d] = cNew;
            next[0][n][d] = o * std::tanh(cNew);
          } else if (fn == "slstm") {
            double it = Rh[0] + WX(b, t, 0, n, d) + BIAS(0, n, d);
            double ft = Rh[1] + WX(b, t, 1, n, d) + BIAS(1, n, d);
            double zz = std::tanh(Rh[2] + WX(b, t, 2, n, d) + BIAS(2, n, d));
            double o = sigmoidRef(Rh[3] + WX(b, t, 3, n, d) + BIAS(3, n, d));
            double logF = std::log(sigmoidRef(ft));
            double m = state[3][n][d];
            double mNew = std::max(it, logF + m);
            double i = std::exp(it - mNew);
            double f = std::exp(logF + m - mNew);
            double cNew = f * state[1][n][d] + i * zz;
            double nNew = f * state[2][n][d] + i;
            next[0][n][d] = o * cNew / nNew;
            next[1][n][d] = cNew;
            next[2][n][d] = nNew;
            next[3][n][d] = mNew;
          } else if (fn == "gru") {
            double g0 = Rh[0] + BIAS(0, n, d);
            double rr = sigmoidRef(WX(b, t, 0, n, d) + Rh[1] + BIAS(1, n, d));
            double zz = sigmoidRef(WX(b, t, 1, n, d) + Rh[2] + BIAS(2, n, d));
            double nn = WX(b, t, 2, n, d) + BIAS(3, n, d);
            next[0][n][d] =
                zz * state[0][n][d] + (1 - zz) * std::tanh(nn + rr * g0);
          } else {
            next[0][n][d] =
                std::tanh(Rh[0] + WX(b, t, 0, n, d) + BIAS(0, n, d));
          }
        }
      state = next;
      for (int64_t s = 0; s < z.s; ++s)
        for (int64_t n = 0; n < NH; ++n)
          for (int64_t d = 0; d < D; ++d)
            all[(((s * B + b) * T + t) * NH + n) * D + d] = state[s][n][d];
    }
  }
  return all;
}

class RnnEvalTest : public SequenceEvalTest {
protected:
  void check(const RnnCase &c) {
    SCOPED_TRACE(std::string(c.function) + " B=" + std::to_string(c.b) +
                 " T=" + std::to_string(c.t) + " NH=" + std::to_string(c.nh) +
                 " D=" + std::to_string(c.d));
    RnnSizes z = sizesOf(c.function);
    std::vector<int64_t> xs = {c.b, c.t, z.gw, c.nh, c.d},
                         rs = {z.gr, c.nh, c.d, c.d}, bs = {z.gb, c.nh, c.d},
                         ss = {z.s, c.b, c.nh, c.d},
                         as = {z.s, c.b, c.t, c.nh, c.d};
    std::string operandTypes =
        typeOf(xs) + ", " + typeOf(rs) + ", " + typeOf(bs) + ", " + typeOf(ss);
    func::FuncOp f =
        parse("func.func @f(%x: " + typeOf(xs) + ", %r: " + typeOf(rs) +
              ", %b: " + typeOf(bs) + ", %s: " + typeOf(ss) + ") -> (" +
              typeOf(as) + ", " + typeOf(ss) +
              ") {\n  %all, %last = kiln.rnn %x, %r, %b, %s function = " +
              c.function + " : " + operandTypes + "\n  return %all, %last : " +
              typeOf(as) + ", " + typeOf(ss) + "\n}");
    ASSERT_TRUE(f);
    Tensor x = random(xs), r = random(rs, -0.8, 0.8), b = random(bs),
           s0 = random(ss);
    if (std::string(c.function) == "slstm")
      // n (state 2) must stay away from 0 so that h = c / n is tame; m
      // (state 3) may be anything.
      for (int64_t i = 2 * c.b * c.nh * c.d; i < 3 * c.b * c.nh * c.d; ++i)
        s0.data[i] = std::abs(s0.data[i]) + 0.5;
    std::vector<Tensor> out = run(f, {x, r, b, s0});
    ASSERT_EQ(out.size(), 2u);
    std::vector<double> expected = referenceRnn(c, x, r, b, s0);
    expectClose(out[0].data, expected, 1e-12, "all states");
    // The last states are the all-states tensor at t = T - 1.
    std::vector<double> last;
    int64_t hd = c.nh * c.d;
    for (int64_t s = 0; s < z.s; ++s)
      for (int64_t b = 0; b < c.b; ++b)
        for (int64_t e = 0; e < hd; ++e)
          last.push_back(expected[((s * c.b + b) * c.t + c.t - 1) * hd + e]);
    expectClose(out[1].data, last, 1e-12, "last states");
  }
};

TEST_F(RnnEvalTest, Lstm) {
  check({"lstm", 2, 4, 3, 5});
  check({"lstm", 3, 1, 1, 2}); // T = 1
  check({"lstm", 1, 6, 2, 1}); // D = 1
}

TEST_F(RnnEvalTest, Gru) {
  check({"gru", 2, 4, 3, 5});
  check({"gru", 3, 1, 2, 3});
  check({"gru", 1, 5, 1, 4});
}

TEST_F(RnnEvalTest, Elman) {
  check({"elman", 2, 4, 3, 5});
  check({"elman", 3, 1, 2, 3});
  check({"elman", 2, 7, 1, 1});
}

TEST_F(RnnEvalTest, Slstm) {
  check({"slstm", 2, 4, 3, 5});
  check({"slstm", 3, 1, 2, 3});
  check({"slstm", 1, 6, 2, 2});
}

TEST_F(SequenceEvalTest, SlstmStabiliserTakesEitherBranch) {
  // One unit, NH = D = 1, R = 0, b = 0: the gates are exactly Wx. Step 0 has
  // ĩ = 2 > log σ(f̃) + m = log σ(0) + 0, step 1 has ĩ = -3 below it.
  func::FuncOp f = parse(R"mlir(
    func.func @f(%x: tensor<1x2x4x1x1xf32>, %r: tensor<4x1x1x1xf32>, %b: tensor<4x1x1xf32>, %s: tensor<4x1x1x1xf32>) -> tensor<4x1x2x1x1xf32> {
      %all, %last = kiln.rnn %x, %r, %b, %s function = slstm : tensor<1x2x4x1x1xf32>, tensor<4x1x1x1xf32>, tensor<4x1x1xf32>, tensor<4x1x1x1xf32>
      return %all : tensor<4x1x2x1x1xf32>
    })mlir");
  Tensor x({1, 2, 4, 1, 1}, ElementKind::F32),
      r({4, 1, 1, 1}, ElementKind::F32), b({4, 1, 1}, ElementKind::F32),
      s0({4, 1, 1, 1}, ElementKind::F32);
  x.data = {2.0, 0.0, 0.5, 1.0, /*step 1*/ -3.0, 1.0, -0.25, -1.0};
  s0.data = {0.0, 0.3, 1.0, 0.0}; // h, c, n, m
  std::vector<Tensor> out = run(f, {x, r, b, s0});
  ASSERT_EQ(out.size(), 1u);
  // Step 0: m' = 2, i = 1, f = σ(0) e^-2.
  double f0 = 0.5 * std::exp(-2.0);
  double c1 = f0 * 0.3 + std::tanh(0.5), n1 = f0 * 1.0 + 1.0;
  // Step 1: log σ(1) + 2 > -3, so m' = log σ(1) + 2 and f = 1.
  double m2 = std::log(sigmoidRef(1.0)) + 2.0, i2 = std::exp(-3.0 - m2);
  double c2 = c1 + i2 * std::tanh(-0.25), n2 = n1 + i2;
  std::vector<double> expected = {sigmoidRef(1.0) * c1 / n1,
                                  sigmoidRef(-1.0) * c2 / n2,
                                  c1,
                                  c2,
                                  n1,
                                  n2,
                                  2.0,
                                  m2};
  expectClose(out[0].data, expected, 1e-14, "slstm states");
}

//===----------------------------------------------------------------------===//
// Fusion
//===----------------------------------------------------------------------===//

TEST_F(SequenceEvalTest, FusionEvaluatesItsRegion) {
  func::FuncOp f = parse(R"mlir(
    func.func @f(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
      %r:2 = kiln.fusion "pointwise" (%a, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
      ^bb0(%x: tensor<2x3xf32>, %y: tensor<3xf32>):
        %s = kiln.add %x, %y : tensor<2x3xf32>, tensor<3xf32>
        %e = kiln.exp %s : tensor<2x3xf32>
        kiln.yield %e, %s : tensor<2x3xf32>, tensor<2x3xf32>
      }
      return %r#0, %r#1 : tensor<2x3xf32>, tensor<2x3xf32>
    })mlir");
  ASSERT_TRUE(f);
  Tensor a = random({2, 3}), b = random({3});
  std::vector<Tensor> out = run(f, {a, b});
  ASSERT_EQ(out.size(), 2u);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) {
      double s = a.data[i * 3 + j] + b.data[j];
      EXPECT_DOUBLE_EQ(out[0].data[i * 3 + j], std::exp(s));
      EXPECT_DOUBLE_EQ(out[1].data[i * 3 + j], s);
    }
}

TEST_F(SequenceEvalTest, FusionOfAttentionAndRnn) {
  // A fusion body may hold any kiln ops, including the family's own.
  func::FuncOp f = parse(R"mlir(
    func.func @f(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x5x4xf32>, %v: tensor<1x2x5x4xf32>) -> tensor<1x2x3x4xf32> {
      %r = kiln.fusion "attention" (%q, %k, %v) : (tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>) -> tensor<1x2x3x4xf32> {
      ^bb0(%a: tensor<1x2x3x4xf32>, %b: tensor<1x2x5x4xf32>, %c: tensor<1x2x5x4xf32>):
        %o = kiln.attention %a, %b, %c causal : tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>
        kiln.yield %o : tensor<1x2x3x4xf32>
      }
      return %r : tensor<1x2x3x4xf32>
    })mlir");
  ASSERT_TRUE(f);
  Tensor q = random({1, 2, 3, 4}), k = random({1, 2, 5, 4}),
         v = random({1, 2, 5, 4});
  std::vector<Tensor> out = run(f, {q, k, v});
  ASSERT_EQ(out.size(), 1u);
  expectClose(out[0].data,
              referenceAttention({1, 2, 3, 5, 4, 4, true, 0}, q, k, v), 1e-12,
              "fused attention");
}

} // namespace
} // namespace mlir::kiln::ref
