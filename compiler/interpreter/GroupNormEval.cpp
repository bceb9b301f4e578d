//===- GroupNormEval.cpp - evaluators of kiln.group_norm and its gradient -===//
//
// [N, C, S...] is viewed as N * groups contiguous rows of (C / groups) * S
// elements (a sample's channels of one group and all their positions); the
// parameters of element j of a row are those of its channel,
// group * C / groups + j / S.
//
//===----------------------------------------------------------------------===//

#include "compiler/interpreter/EvalUtils.h"

#include "dialects/kiln/IR/KilnDialect.h"

#include <cmath>

namespace mlir::kiln::ref {
namespace {

/// The rows of a group norm of `x` in `groups` groups.
struct GroupRows {
  int64_t rows = 0, length = 0, spatial = 1, channelsPerGroup = 0, groups = 1;

  GroupRows(const Tensor &x, int64_t groups) : groups(groups) {
    for (size_t d = 2; d < x.shape.size(); ++d)
      spatial *= x.shape[d];
    channelsPerGroup = x.shape[1] / groups;
    length = channelsPerGroup * spatial;
    rows = x.shape[0] * groups;
  }
  /// The channel of element j of row `row`.
  int64_t channel(int64_t row, int64_t j) const {
    return (row % groups) * channelsPerGroup + j / spatial;
  }
};

LogicalResult evalGroupNorm(Operation *op,
                            llvm::ArrayRef<const Tensor *> operands,
                            llvm::MutableArrayRef<Tensor> results,
                            EvalContext &) {
  auto norm = cast<GroupNormOp>(op);
  const Tensor &x = *operands[0];
  const Tensor *weight = norm.getWeight() ? operands[1] : nullptr;
  const Tensor *bias = norm.getBias() ? operands[2] : nullptr;
  GroupRows g(x, norm.getGroups());
  double eps = norm.getEps().convertToDouble();
  Tensor &y = results[0];
  for (int64_t row = 0; g.length > 0 && row < g.rows; ++row) {
    const double *in = x.data.data() + row * g.length;
    double *out = y.data.data() + row * g.length;
    auto [mean, rstd] = meanAndRstd(in, g.length, eps);
    for (int64_t j = 0; j < g.length; ++j) {
      double v = (in[j] - mean) * rstd;
      int64_t c = g.channel(row, j);
      if (weight)
        v *= weight->data[c];
      if (bias)
        v += bias->data[c];
      out[j] = v;
    }
  }
  return success();
}

LogicalResult evalGroupNormBackward(Operation *op,
                                    llvm::ArrayRef<const Tensor *> operands,
                                    llvm::MutableArrayRef<Tensor> results,
                                    EvalContext &) {
  auto norm = cast<GroupNormBackwardOp>(op);
  const Tensor &grad = *operands[0], &x = *operands[1];
  const Tensor *weight = norm.getWeight() ? operands[2] : nullptr;
  Tensor &dx = results[0], &dw = results[1], &db = results[2];
  GroupRows g(x, norm.getGroups());
  double eps = norm.getEps().convertToDouble();
  std::vector<double> xh(g.length), gy(g.length);
  for (int64_t row = 0; g.length > 0 && row < g.rows; ++row) {
    const double *in = x.data.data() + row * g.length;
    const double *gr = grad.data.data() + row * g.length;
    double *out = dx.data.data() + row * g.length;
    auto [mean, rstd] = meanAndRstd(in, g.length, eps);
    double sumGy = 0, sumGyXh = 0;
    for (int64_t j = 0; j < g.length; ++j) {
      int64_t c = g.channel(row, j);
      xh[j] = (in[j] - mean) * rstd;
      gy[j] = weight ? gr[j] * weight->data[c] : gr[j];
      sumGy += gy[j];
      sumGyXh += gy[j] * xh[j];
      dw.data[c] += gr[j] * xh[j];
      db.data[c] += gr[j];
    }
    double meanGy = sumGy / g.length, meanGyXh = sumGyXh / g.length;
    for (int64_t j = 0; j < g.length; ++j)
      out[j] = rstd * (gy[j] - meanGy - xh[j] * meanGyXh);
  }
  return success();
}

} // namespace

void registerGroupNormEvaluators(EvaluatorRegistry &registry) {
  registry.add<GroupNormOp>(evalGroupNorm);
  registry.add<GroupNormBackwardOp>(evalGroupNormBackward);
}

} // namespace mlir::kiln::ref
