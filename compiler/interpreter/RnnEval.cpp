//===- RnnEval.cpp - evaluators of kiln.rnn and kiln.rnn_backward ---------===//
//
// The recurrence runs per batch row and step: the recurrent products R_g h of
// every gate are formed for all heads at once, then each (head, unit) element
// goes through its cell's pointwise equations. The backward op walks the
// steps in reverse, recomputing each step's gates from the stored states
// before it, and applies the chain rule to the same equations.
//
//===----------------------------------------------------------------------===//

#include "compiler/interpreter/SequenceEval.h"

#include "dialects/kiln/IR/KilnDialect.h"

#include <algorithm>
#include <cmath>

namespace mlir::kiln::ref {
namespace {

double sigmoid(double x) {
  if (x >= 0)
    return 1.0 / (1.0 + std::exp(-x));
  double e = std::exp(x);
  return e / (1.0 + e);
}

/// log σ(x) = -log(1 + exp(-x)), without overflow for large |x|.
double logSigmoid(double x) {
  return x >= 0 ? -std::log1p(std::exp(-x)) : x - std::log1p(std::exp(x));
}

/// Most gates, biases and states a cell has (slstm's 4).
constexpr int kMaxGates = 4;

/// The inputs of one (head, unit) element of one step: the input projection
/// of each Wx gate, the recurrent product of each R gate, the bias of each
/// bias gate and the states before the step.
struct CellInputs {
  double x[kMaxGates], rh[kMaxGates], bias[kMaxGates], prev[kMaxGates];
};

/// The gradients a cell's backward gives for one element: of each Wx gate, of
/// each recurrent product R_g h, of each bias gate and of the states before
/// the step (not counting the path through R_g h, which the caller adds).
struct CellGrads {
  double x[kMaxGates], rh[kMaxGates], bias[kMaxGates], prev[kMaxGates];
};

/// The states after the step (h, c, n, m as the function has them).
void cellForward(RnnFunction function, const CellInputs &in, double *next) {
  switch (function) {
  case RnnFunction::lstm: {
    double gi = sigmoid(in.x[0] + in.rh[0] + in.bias[0]);
    double gf = sigmoid(in.x[1] + in.rh[1] + in.bias[1]);
    double gz = std::tanh(in.x[2] + in.rh[2] + in.bias[2]);
    double go = sigmoid(in.x[3] + in.rh[3] + in.bias[3]);
    double c = gf * in.prev[1] + gi * gz;
    next[0] = go * std::tanh(c);
    next[1] = c;
    return;
  }
  case RnnFunction::slstm: {
    double iTilde = in.x[0] + in.rh[0] + in.bias[0];
    double logF = logSigmoid(in.x[1] + in.rh[1] + in.bias[1]);
    double gz = std::tanh(in.x[2] + in.rh[2] + in.bias[2]);
    double go = sigmoid(in.x[3] + in.rh[3] + in.bias[3]);
    double m = std::max(iTilde, logF + in.prev[3]);
    double gi = std::exp(iTilde - m);
    double gf = std::exp(logF + in.prev[3] - m);
    double c = gf * in.prev[1] + gi * gz;
    double n = gf * in.prev[2] + gi;
    next[0] = go * c / n;
    next[1] = c;
    next[2] = n;
    next[3] = m;
    return;
  }
  case RnnFunction::gru: {
    double g0 = in.rh[0] + in.bias[0];
    double r = sigmoid(in.x[0] + in.rh[1] + in.bias[1]);
    double z = sigmoid(in.x[1] + in.rh[2] + in.bias[2]);
    double candidate = std::tanh(in.x[2] + in.bias[3] + r * g0);
    next[0] = z * in.prev[0] + (1 - z) * candidate;
    return;
  }
  case RnnFunction::elman:
    next[0] = std::tanh(in.x[0] + in.rh[0] + in.bias[0]);
    return;
  }
}

/// Chain rule through one element of one step, given `dNext`, the gradient
/// of the states after it.
void cellBackward(RnnFunction function, const CellInputs &in,
                  const double *dNext, CellGrads &out) {
  // In lstm, slstm and elman every gate's pre-activation is x + rh + bias,
  // so the three gradients of a gate are one value; gru sets its own.
  auto setGate = [&](int g, double grad) {
    out.x[g] = out.rh[g] = out.bias[g] = grad;
  };
  switch (function) {
  case RnnFunction::lstm: {
    double gi = sigmoid(in.x[0] + in.rh[0] + in.bias[0]);
    double gf = sigmoid(in.x[1] + in.rh[1] + in.bias[1]);
    double gz = std::tanh(in.x[2] + in.rh[2] + in.bias[2]);
    double go = sigmoid(in.x[3] + in.rh[3] + in.bias[3]);
    double c = gf * in.prev[1] + gi * gz;
    double tc = std::tanh(c);
    double dc = dNext[1] + dNext[0] * go * (1 - tc * tc);
    setGate(0, dc * gz * gi * (1 - gi));
    setGate(1, dc * in.prev[1] * gf * (1 - gf));
    setGate(2, dc * gi * (1 - gz * gz));
    setGate(3, dNext[0] * tc * go * (1 - go));
    out.prev[0] = 0;
    out.prev[1] = dc * gf;
    return;
  }
  case RnnFunction::slstm: {
    double iTilde = in.x[0] + in.rh[0] + in.bias[0];
    double fTilde = in.x[1] + in.rh[1] + in.bias[1];
    double logF = logSigmoid(fTilde);
    double gz = std::tanh(in.x[2] + in.rh[2] + in.bias[2]);
    double go = sigmoid(in.x[3] + in.rh[3] + in.bias[3]);
    double mPrev = in.prev[3];
    bool inputWins = iTilde >= logF + mPrev;
    double m = inputWins ? iTilde : logF + mPrev;
    double gi = std::exp(iTilde - m);
    double gf = std::exp(logF + mPrev - m);
    double c = gf * in.prev[1] + gi * gz;
    double n = gf * in.prev[2] + gi;
    double dh = dNext[0];
    double dc = dNext[1] + dh * go / n;
    double dn = dNext[2] - dh * go * c / (n * n);
    double dGateI = dc * gz + dn; // dL/di for i = exp(ĩ - m')
    double dGateF = dc * in.prev[1] + dn * in.prev[2];
    // m' enters through i and f (d exp(a - m')/dm' = -exp(a - m')) and as a
    // state of its own; it is the larger of ĩ and log σ(f̃) + m.
    double dm = dNext[3] - dGateI * gi - dGateF * gf;
    double dITilde = dGateI * gi + (inputWins ? dm : 0);
    double dLogF = dGateF * gf + (inputWins ? 0 : dm);
    setGate(0, dITilde);
    setGate(1, dLogF * (1 - sigmoid(fTilde)));
    setGate(2, dc * gi * (1 - gz * gz));
    setGate(3, dh * (c / n) * go * (1 - go));
    out.prev[0] = 0;
    out.prev[1] = dc * gf;
    out.prev[2] = dn * gf;
    out.prev[3] = dLogF;
    return;
  }
  case RnnFunction::gru: {
    double g0 = in.rh[0] + in.bias[0];
    double r = sigmoid(in.x[0] + in.rh[1] + in.bias[1]);
    double z = sigmoid(in.x[1] + in.rh[2] + in.bias[2]);
    double candidate = std::tanh(in.x[2] + in.bias[3] + r * g0);
    double dh = dNext[0];
    double dCandidate = dh * (1 - z) * (1 - candidate * candidate);
    double dZ = dh * (in.prev[0] - candidate) * z * (1 - z);
    double dR = dCandidate * g0 * r * (1 - r);
    double dG0 = dCandidate * r;
    out.x[0] = dR;
    out.x[1] = dZ;
    out.x[2] = dCandidate;
    out.rh[0] = dG0;
    out.rh[1] = dR;
    out.rh[2] = dZ;
    out.bias[0] = dG0;
    out.bias[1] = dR;
    out.bias[2] = dZ;
    out.bias[3] = dCandidate;
    out.prev[0] = dh * z;
    return;
  }
  case RnnFunction::elman: {
    double h = std::tanh(in.x[0] + in.rh[0] + in.bias[0]);
    setGate(0, dNext[0] * (1 - h * h));
    out.prev[0] = 0;
    return;
  }
  }
}

/// Sizes and operand views shared by the forward and backward evaluators.
struct RnnLayout {
  RnnFunction function;
  int64_t b, t, nh, d, hd; // hd = NH * D, the size of one state of one row
  RnnOp::Sizes sizes;
  const Tensor &input, &recurrent, &bias, &states0;

  RnnLayout(RnnFunction function, llvm::ArrayRef<const Tensor *> operands)
      : function(function), b(operands[0]->shape[0]), t(operands[0]->shape[1]),
        nh(operands[0]->shape[3]), d(operands[0]->shape[4]),
        hd(operands[0]->shape[3] * operands[0]->shape[4]),
        sizes(RnnOp::sizesOf(function)), input(*operands[0]),
        recurrent(*operands[1]), bias(*operands[2]), states0(*operands[3]) {}

  /// Offset of state `s` of row `row` at step `step` in `[S, B, T, NH, D]`.
  int64_t allOffset(int64_t s, int64_t row, int64_t step) const {
    return ((s * b + row) * t + step) * hd;
  }
  /// Offset of state `s` of row `row` in `[S, B, NH, D]`.
  int64_t lastOffset(int64_t s, int64_t row) const {
    return (s * b + row) * hd;
  }

  /// Copies the states of `row` before step `step` into `prev` ([S][NH*D]).
  void statesBefore(const Tensor &all, int64_t row, int64_t step,
                    std::vector<double> &prev) const {
    for (int64_t s = 0; s < sizes.s; ++s) {
      const double *from = step == 0
                               ? states0.data.data() + lastOffset(s, row)
                               : all.data.data() + allOffset(s, row, step - 1);
      std::copy(from, from + hd, prev.begin() + s * hd);
    }
  }

  /// rh[g * hd + n * D + d] = sum_p R[g, n, d, p] * h[n * D + p].
  void recurrentProducts(const double *h, std::vector<double> &rh) const {
    const double *r = recurrent.data.data();
    for (int64_t g = 0; g < sizes.gr; ++g)
      for (int64_t n = 0; n < nh; ++n)
        for (int64_t i = 0; i < d; ++i) {
          const double *row = r + ((g * nh + n) * d + i) * d;
          const double *hn = h + n * d;
          double sum = 0;
          for (int64_t p = 0; p < d; ++p)
            sum += row[p] * hn[p];
          rh[g * hd + n * d + i] = sum;
        }
  }

  /// Gathers the cell inputs of element `e` (= n * D + d) of `row` at `step`.
  void cellInputs(int64_t row, int64_t step, int64_t e,
                  const std::vector<double> &rh,
                  const std::vector<double> &prev, CellInputs &in) const {
    const double *x = input.data.data() + (row * t + step) * sizes.gw * hd;
    for (int64_t g = 0; g < sizes.gw; ++g)
      in.x[g] = x[g * hd + e];
    for (int64_t g = 0; g < sizes.gr; ++g)
      in.rh[g] = rh[g * hd + e];
    for (int64_t g = 0; g < sizes.gb; ++g)
      in.bias[g] = bias.data[g * hd + e];
    for (int64_t s = 0; s < sizes.s; ++s)
      in.prev[s] = prev[s * hd + e];
  }
};

} // namespace

static LogicalResult evalRnn(Operation *op,
                             llvm::ArrayRef<const Tensor *> operands,
                             llvm::MutableArrayRef<Tensor> results,
                             EvalContext &) {
  RnnLayout layout(cast<RnnOp>(op).getFunction(), operands);
  int64_t hd = layout.hd, numStates = layout.sizes.s;
  Tensor &all = results[0], &last = results[1];
  std::vector<double> prev(numStates * hd), rh(layout.sizes.gr * hd);
  CellInputs in{};
  double next[kMaxGates];
  for (int64_t row = 0; row < layout.b; ++row)
    for (int64_t step = 0; step < layout.t; ++step) {
      layout.statesBefore(all, row, step, prev);
      layout.recurrentProducts(prev.data(), rh);
      for (int64_t e = 0; e < hd; ++e) {
        layout.cellInputs(row, step, e, rh, prev, in);
        cellForward(layout.function, in, next);
        for (int64_t s = 0; s < numStates; ++s)
          all.data[layout.allOffset(s, row, step) + e] = next[s];
      }
    }
  for (int64_t s = 0; s < numStates; ++s)
    for (int64_t row = 0; row < layout.b; ++row) {
      const double *from =
          all.data.data() + layout.allOffset(s, row, layout.t - 1);
      std::copy(from, from + hd, last.data.begin() + layout.lastOffset(s, row));
    }
  return success();
}

static LogicalResult evalRnnBackward(Operation *op,
                                     llvm::ArrayRef<const Tensor *> operands,
                                     llvm::MutableArrayRef<Tensor> results,
                                     EvalContext &) {
  RnnLayout layout(cast<RnnBackwardOp>(op).getFunction(), operands);
  const Tensor &all = *operands[4], &dAll = *operands[5], &dLast = *operands[6];
  Tensor &dInput = results[0], &dRecurrent = results[1], &dBias = results[2],
         &dStates0 = results[3];
  int64_t hd = layout.hd, nh = layout.nh, d = layout.d;
  int64_t numStates = layout.sizes.s, gw = layout.sizes.gw,
          gr = layout.sizes.gr, gb = layout.sizes.gb;
  const double *r = layout.recurrent.data.data();
  std::vector<double> prev(numStates * hd), rh(gr * hd);
  // dNext: gradient of the states after the current step; dRh: of the
  // recurrent products R_g h of the current step.
  std::vector<double> dNext(numStates * hd), dRh(gr * hd);
  CellInputs in{};
  CellGrads grads{};
  double dNextElement[kMaxGates];
  for (int64_t row = 0; row < layout.b; ++row) {
    // Nothing flows back from beyond the last step but d_last_states.
    for (int64_t s = 0; s < numStates; ++s)
      std::copy_n(dLast.data.begin() + layout.lastOffset(s, row), hd,
                  dNext.begin() + s * hd);
    for (int64_t step = layout.t; step-- > 0;) {
      for (int64_t s = 0; s < numStates; ++s) {
        const double *from = dAll.data.data() + layout.allOffset(s, row, step);
        for (int64_t e = 0; e < hd; ++e)
          dNext[s * hd + e] += from[e];
      }
      layout.statesBefore(all, row, step, prev);
      layout.recurrentProducts(prev.data(), rh);
      double *dx = dInput.data.data() + (row * layout.t + step) * gw * hd;
      for (int64_t e = 0; e < hd; ++e) {
        layout.cellInputs(row, step, e, rh, prev, in);
        for (int64_t s = 0; s < numStates; ++s)
          dNextElement[s] = dNext[s * hd + e];
        cellBackward(layout.function, in, dNextElement, grads);
        for (int64_t g = 0; g < gw; ++g)
          dx[g * hd + e] = grads.x[g];
        for (int64_t g = 0; g < gr; ++g)
          dRh[g * hd + e] = grads.rh[g];
        for (int64_t g = 0; g < gb; ++g)
          dBias.data[g * hd + e] += grads.bias[g];
        // The gradient of the states before the step, still without the
        // path through R_g h (added below).
        for (int64_t s = 0; s < numStates; ++s)
          dNext[s * hd + e] = grads.prev[s];
      }
      // rh = R_g h_prev: dR += dRh ⊗ h_prev and dh_prev += R_g^T dRh.
      for (int64_t g = 0; g < gr; ++g)
        for (int64_t n = 0; n < nh; ++n) {
          const double *hn = prev.data() + n * d;
          double *dhn = dNext.data() + n * d;
          for (int64_t i = 0; i < d; ++i) {
            double a = dRh[g * hd + n * d + i];
            int64_t offset = ((g * nh + n) * d + i) * d;
            const double *rRow = r + offset;
            double *dRRow = dRecurrent.data.data() + offset;
            for (int64_t p = 0; p < d; ++p) {
              dRRow[p] += a * hn[p];
              dhn[p] += a * rRow[p];
            }
          }
        }
    }
    for (int64_t s = 0; s < numStates; ++s)
      std::copy_n(dNext.begin() + s * hd, hd,
                  dStates0.data.begin() + layout.lastOffset(s, row));
  }
  return success();
}

void registerRnnEvaluators(EvaluatorRegistry &registry) {
  registry.add<RnnOp>(evalRnn);
  registry.add<RnnBackwardOp>(evalRnnBackward);
}

} // namespace mlir::kiln::ref
