//===- AttentionEval.cpp - evaluators of attention and its backward -------===//
//
// Scaled dot-product attention per batch and head, one query row at a time:
// the scores of a row are formed, shifted by their maximum (so large scores
// do not overflow) and normalised, then used for the output or, in the
// backward op, for the gradients. A backward op given the forward's row
// log-sum-exp recomputes the softmax all the same: the statistic equals the
// forward's by construction and only spares the kernels a sweep, so the
// reference stays the exact f64 softmax and pairing the ops changes no
// result of the interpreter.
//
//===----------------------------------------------------------------------===//

#include "compiler/interpreter/SequenceEval.h"

#include "dialects/kiln/IR/KilnDialect.h"

#include <algorithm>
#include <cmath>

namespace mlir::kiln::ref {
namespace {

/// Sizes and options shared by the forward and backward evaluators.
struct AttentionShape {
  int64_t batchHeads, tq, tk, d, dv;
  double scale;
  bool causal;

  AttentionShape(const Tensor &query, const Tensor &value, bool causal,
                 std::optional<APFloat> scaleAttr)
      : batchHeads(query.shape[0] * query.shape[1]), tq(query.shape[2]),
        tk(value.shape[2]), d(query.shape[3]), dv(value.shape[3]),
        causal(causal) {
    scale = scaleAttr ? scaleAttr->convertToDouble()
                      : 1.0 / std::sqrt(static_cast<double>(d));
  }

  /// Number of keys query row `i` sees: keys `j <= i + (Tk - Tq)` when
  /// causal (the mask is aligned to the ends of the sequences).
  int64_t visibleKeys(int64_t i) const {
    return causal ? std::min(tk, i + (tk - tq) + 1) : tk;
  }

  /// Fills `p[0, n)` with the attention weights of query row `q` (D values)
  /// against the rows of `k` (Tk x D), n = visibleKeys(i); the rest is
  /// unused. Returns the row's log-sum-exp of its scaled scores.
  double weights(const double *q, const double *k, int64_t i,
                 std::vector<double> &p) const {
    int64_t n = visibleKeys(i);
    double max = -INFINITY;
    for (int64_t j = 0; j < n; ++j) {
      const double *kj = k + j * d;
      double s = 0;
      for (int64_t e = 0; e < d; ++e)
        s += q[e] * kj[e];
      p[j] = s * scale;
      max = std::max(max, p[j]);
    }
    double sum = 0;
    for (int64_t j = 0; j < n; ++j) {
      p[j] = std::exp(p[j] - max);
      sum += p[j];
    }
    double inverse = 1.0 / sum;
    for (int64_t j = 0; j < n; ++j)
      p[j] *= inverse;
    return max + std::log(sum);
  }

};

} // namespace

static LogicalResult evalAttention(Operation *op,
                                   llvm::ArrayRef<const Tensor *> operands,
                                   llvm::MutableArrayRef<Tensor> results,
                                   EvalContext &) {
  auto attention = cast<AttentionOp>(op);
  const Tensor &query = *operands[0], &key = *operands[1],
               &value = *operands[2];
  AttentionShape shape(query, value, attention.getCausal(),
                       attention.getScale());
  std::vector<double> p(shape.tk);
  for (int64_t bh = 0; bh < shape.batchHeads; ++bh) {
    const double *q = query.data.data() + bh * shape.tq * shape.d;
    const double *k = key.data.data() + bh * shape.tk * shape.d;
    const double *v = value.data.data() + bh * shape.tk * shape.dv;
    double *out = results[0].data.data() + bh * shape.tq * shape.dv;
    double *lse = attention.getRowLse()
                      ? results[1].data.data() + bh * shape.tq
                      : nullptr;
    for (int64_t i = 0; i < shape.tq; ++i) {
      double rowLse = shape.weights(q + i * shape.d, k, i, p);
      if (lse)
        lse[i] = rowLse;
      double *oi = out + i * shape.dv;
      for (int64_t j = 0, n = shape.visibleKeys(i); j < n; ++j) {
        const double *vj = v + j * shape.dv;
        for (int64_t e = 0; e < shape.dv; ++e)
          oi[e] += p[j] * vj[e];
      }
    }
  }
  return success();
}

static LogicalResult
evalAttentionBackward(Operation *op, llvm::ArrayRef<const Tensor *> operands,
                      llvm::MutableArrayRef<Tensor> results, EvalContext &) {
  auto backward = cast<AttentionBackwardOp>(op);
  const Tensor &query = *operands[0], &key = *operands[1],
               &value = *operands[2], &out = *operands[3], &dOut = *operands[4];
  AttentionShape shape(query, value, backward.getCausal(), backward.getScale());
  int64_t tq = shape.tq, tk = shape.tk, d = shape.d, dv = shape.dv;
  std::vector<double> p(tk);
  for (int64_t bh = 0; bh < shape.batchHeads; ++bh) {
    const double *q = query.data.data() + bh * tq * d;
    const double *k = key.data.data() + bh * tk * d;
    const double *v = value.data.data() + bh * tk * dv;
    const double *o = out.data.data() + bh * tq * dv;
    const double *dO = dOut.data.data() + bh * tq * dv;
    double *dq = results[0].data.data() + bh * tq * d;
    double *dk = results[1].data.data() + bh * tk * d;
    double *dvOut = results[2].data.data() + bh * tk * dv;
    for (int64_t i = 0; i < tq; ++i) {
      const double *qi = q + i * d, *oi = o + i * dv, *dOi = dO + i * dv;
      shape.weights(qi, k, i, p);
      // delta_i = sum_j P_ij dP_ij, read off the forward output.
      double delta = 0;
      for (int64_t e = 0; e < dv; ++e)
        delta += dOi[e] * oi[e];
      double *dqi = dq + i * d;
      for (int64_t j = 0, n = shape.visibleKeys(i); j < n; ++j) {
        const double *vj = v + j * dv;
        double *dvj = dvOut + j * dv;
        double dp = 0;
        for (int64_t e = 0; e < dv; ++e) {
          dvj[e] += p[j] * dOi[e];
          dp += dOi[e] * vj[e];
        }
        double ds = p[j] * (dp - delta) * shape.scale;
        const double *kj = k + j * d;
        double *dkj = dk + j * d;
        for (int64_t e = 0; e < d; ++e) {
          dqi[e] += ds * kj[e];
          dkj[e] += ds * qi[e];
        }
      }
    }
  }
  return success();
}

void registerAttentionEvaluators(EvaluatorRegistry &registry) {
  registry.add<AttentionOp>(evalAttention);
  registry.add<AttentionBackwardOp>(evalAttentionBackward);
}

} // namespace mlir::kiln::ref
