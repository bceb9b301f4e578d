// Gradient checks of attention and the recurrent op (through their backward
// ops) against central finite differences in f64.
//
// The losses are sum(exp(y + w)) with a random `w` that is not
// differentiated: the gradient reaching y, exp(y + w), differs per element,
// so the check is not symmetric, and it needs only ops whose gradient rules
// exist beside this family's (add, exp, reduce_sum).

#include "compiler/autodiff/GradientTestUtils.h"

#include <string>

namespace mlir::kiln {
namespace {

std::string typeOf(std::vector<int64_t> shape) {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s + "f32>";
}

std::string dims(size_t rank) {
  std::string s = "[";
  for (size_t d = 0; d < rank; ++d)
    s += (d ? ", " : "") + std::to_string(d);
  return s + "]";
}

class SequenceGradientsTest : public GradientCheckTest {
protected:
  /// loss = sum(exp(attention(q, k, v) + w)), differentiated in q, k, v.
  void checkAttention(int64_t b, int64_t h, int64_t tq, int64_t tk, int64_t d,
                      int64_t dv, const std::string &attrs) {
    SCOPED_TRACE("Tq=" + std::to_string(tq) + " Tk=" + std::to_string(tk) +
                 attrs);
    std::string q = typeOf({b, h, tq, d}), k = typeOf({b, h, tk, d}),
                v = typeOf({b, h, tk, dv}), o = typeOf({b, h, tq, dv});
    std::string source =
        "func.func @loss(%q: " + q + ", %k: " + k + ", %v: " + v +
        ", %w: " + o + ") -> tensor<f32> {\n" +
        "  %o = kiln.attention %q, %k, %v" + attrs + " : " + q + ", " + k +
        ", " + v + "\n" + "  %p = kiln.add %o, %w : " + o + ", " + o + "\n" +
        "  %e = kiln.exp %p : " + o + "\n" +
        "  %l = kiln.reduce_sum %e dims = [0, 1, 2, 3] : " + o + "\n" +
        "  return %l : tensor<f32>\n}";
    expectGradientsMatch(source, {0, 1, 2});
  }

  /// loss = sum(exp(all + w1)) + sum(exp(last + w2)) (or one of the two),
  /// differentiated
  /// in Wx, R, b and states0.
  void checkRnn(const std::string &function, int64_t b, int64_t t, int64_t nh,
                int64_t d, bool useAll, bool useLast) {
    SCOPED_TRACE(function + (useAll ? " all" : "") + (useLast ? " last" : ""));
    int64_t gw = 1, gr = 1, gb = 1, s = 1;
    if (function == "lstm")
      gw = gr = gb = 4, s = 2;
    else if (function == "slstm")
      gw = gr = gb = s = 4;
    else if (function == "gru")
      gw = gr = 3, gb = 4;
    std::string x = typeOf({b, t, gw, nh, d}), r = typeOf({gr, nh, d, d}),
                bias = typeOf({gb, nh, d}), s0 = typeOf({s, b, nh, d}),
                all = typeOf({s, b, t, nh, d});
    std::string source =
        "func.func @loss(%x: " + x + ", %r: " + r + ", %b: " + bias +
        ", %s0: " + s0 + ", %w1: " + all + ", %w2: " + s0 +
        ") -> tensor<f32> {\n" +
        "  %all, %last = kiln.rnn %x, %r, %b, %s0 function = " + function +
        " : " + x + ", " + r + ", " + bias + ", " + s0 + "\n" +
        "  %p1 = kiln.add %all, %w1 : " + all + ", " + all + "\n" +
        "  %e1 = kiln.exp %p1 : " + all + "\n" +
        "  %l1 = kiln.reduce_sum %e1 dims = " + dims(5) + " : " + all + "\n" +
        "  %p2 = kiln.add %last, %w2 : " + s0 + ", " + s0 + "\n" +
        "  %e2 = kiln.exp %p2 : " + s0 + "\n" +
        "  %l2 = kiln.reduce_sum %e2 dims = " + dims(4) + " : " + s0 + "\n";
    if (useAll && useLast)
      source += "  %l = kiln.add %l1, %l2 : tensor<f32>, tensor<f32>\n"
                "  return %l : tensor<f32>\n}";
    else
      source += std::string("  return ") + (useAll ? "%l1" : "%l2") +
                " : tensor<f32>\n}";
    InputSpec spec;
    // Modest recurrent weights keep the recurrence away from saturation.
    spec.ranges[1] = {-0.6, 0.6};
    // slstm: n (one of the states) must stay positive so h = c / n is tame;
    // all initial states of every cell are drawn from the same range here.
    if (function == "slstm")
      spec.ranges[3] = {0.2, 1.2};
    expectGradientsMatch(source, {0, 1, 2, 3}, spec);
  }
};

TEST_F(SequenceGradientsTest, AttentionNonCausal) {
  checkAttention(2, 3, 4, 4, 3, 5, "");
  checkAttention(1, 2, 3, 6, 4, 2, ""); // Tq < Tk
  checkAttention(2, 1, 5, 2, 3, 3, ""); // Tq > Tk
}

TEST_F(SequenceGradientsTest, AttentionCausal) {
  checkAttention(2, 2, 4, 4, 3, 3, " causal");
  checkAttention(1, 3, 2, 5, 4, 3, " causal"); // ends aligned
  checkAttention(2, 1, 1, 3, 2, 4, " causal"); // one query
}

TEST_F(SequenceGradientsTest, AttentionCustomScale) {
  checkAttention(1, 2, 3, 5, 4, 3, " scale = 0.7");
  checkAttention(2, 2, 4, 4, 3, 2, " causal scale = 1.3");
}

TEST_F(SequenceGradientsTest, Lstm) {
  checkRnn("lstm", 2, 3, 2, 3, true, true);
  checkRnn("lstm", 3, 4, 2, 2, true, false);
  checkRnn("lstm", 2, 3, 3, 2, false, true);
}

TEST_F(SequenceGradientsTest, Gru) {
  checkRnn("gru", 2, 3, 2, 3, true, true);
  checkRnn("gru", 3, 4, 2, 2, true, false);
  checkRnn("gru", 2, 3, 3, 2, false, true);
}

TEST_F(SequenceGradientsTest, Elman) {
  checkRnn("elman", 2, 3, 2, 3, true, true);
  checkRnn("elman", 3, 4, 2, 2, true, false);
  checkRnn("elman", 2, 3, 3, 2, false, true);
}

TEST_F(SequenceGradientsTest, Slstm) {
  checkRnn("slstm", 2, 3, 2, 3, true, true);
  checkRnn("slstm", 3, 4, 2, 2, true, false);
  checkRnn("slstm", 2, 3, 3, 2, false, true);
}

TEST_F(SequenceGradientsTest, RnnFeedingAttention) {
  // The last states of an elman rnn (S = 1, B = 2, NH = 2, D = 2) are the
  // queries of a causal attention ([1, H = 2, Tq = 2, 2]): gradients cross
  // both backward ops.
  expectGradientsMatch(R"mlir(
    func.func @loss(%x: tensor<2x3x1x2x2xf32>, %r: tensor<1x2x2x2xf32>, %b: tensor<1x2x2xf32>,
                    %s0: tensor<1x2x2x2xf32>, %k: tensor<1x2x3x2xf32>, %v: tensor<1x2x3x3xf32>,
                    %w: tensor<1x2x2x3xf32>) -> tensor<f32> {
      %all, %last = kiln.rnn %x, %r, %b, %s0 function = elman : tensor<2x3x1x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2xf32>, tensor<1x2x2x2xf32>
      %o = kiln.attention %last, %k, %v causal : tensor<1x2x2x2xf32>, tensor<1x2x3x2xf32>, tensor<1x2x3x3xf32>
      %p = kiln.add %o, %w : tensor<1x2x2x3xf32>, tensor<1x2x2x3xf32>
      %e = kiln.exp %p : tensor<1x2x2x3xf32>
      %l = kiln.reduce_sum %e dims = [0, 1, 2, 3] : tensor<1x2x2x3xf32>
      return %l : tensor<f32>
    })mlir",
                       {0, 1, 2, 3, 4, 5});
}

} // namespace
} // namespace mlir::kiln
