//===- GroupNormEval.cpp - evaluators of kiln.group_norm and its gradient -===//
//
// The input is viewed as N * groups rows of (C / groups) * S elements (a
// sample's channels of one group and all their positions). With the
// channels at dim 1 ([N, C, S...]) each row is contiguous and element j of
// it is channel group * C / groups + j / S; with the channels last
// ([N, S..., C]) element j is position j / (C / groups), channel
// group * C / groups + j % (C / groups).
//
//===----------------------------------------------------------------------===//

#include "compiler/interpreter/EvalUtils.h"

#include "dialects/kiln/IR/KilnDialect.h"

#include <cmath>
#include <vector>

namespace mlir::kiln::ref {
namespace {

/// The rows of a group norm of `x` in `groups` groups, channels at `dim`.
struct GroupRows {
  int64_t rows = 0, length = 0, spatial = 1, channels = 0,
          channelsPerGroup = 0, groups = 1;
  bool channelsLast = false;

  GroupRows(const Tensor &x, int64_t groups, int64_t dim)
      : groups(groups), channelsLast(dim != 1) {
    for (size_t d = 1; d < x.shape.size(); ++d)
      if (static_cast<int64_t>(d) != dim)
        spatial *= x.shape[d];
    channels = x.shape[dim];
    channelsPerGroup = channels / groups;
    length = channelsPerGroup * spatial;
    rows = x.shape[0] * groups;
  }
  /// The channel of element j of row `row`.
  int64_t channel(int64_t row, int64_t j) const {
    return (row % groups) * channelsPerGroup +
           (channelsLast ? j % channelsPerGroup : j / spatial);
  }
  /// The position of element j of row `row` in the tensor.
  int64_t offset(int64_t row, int64_t j) const {
    if (!channelsLast)
      return row * length + j;
    int64_t sample = row / groups;
    return sample * spatial * channels + (j / channelsPerGroup) * channels +
           channel(row, j);
  }
  /// The elements of row `row` of `t`, in row order.
  std::vector<double> gather(const Tensor &t, int64_t row) const {
    std::vector<double> values(length);
    for (int64_t j = 0; j < length; ++j)
      values[j] = t.data[offset(row, j)];
    return values;
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
  GroupRows g(x, norm.getGroups(), norm.getDim());
  double eps = norm.getEps().convertToDouble();
  Tensor &y = results[0];
  for (int64_t row = 0; g.length > 0 && row < g.rows; ++row) {
    std::vector<double> in = g.gather(x, row);
    auto [mean, rstd] = meanAndRstd(in.data(), g.length, eps);
    for (int64_t j = 0; j < g.length; ++j) {
      double v = (in[j] - mean) * rstd;
      int64_t c = g.channel(row, j);
      if (weight)
        v *= weight->data[c];
      if (bias)
        v += bias->data[c];
      y.data[g.offset(row, j)] = v;
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
  GroupRows g(x, norm.getGroups(), norm.getDim());
  double eps = norm.getEps().convertToDouble();
  std::vector<double> xh(g.length), gy(g.length);
  for (int64_t row = 0; g.length > 0 && row < g.rows; ++row) {
    std::vector<double> in = g.gather(x, row), gr = g.gather(grad, row);
    auto [mean, rstd] = meanAndRstd(in.data(), g.length, eps);
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
      dx.data[g.offset(row, j)] = rstd * (gy[j] - meanGy - xh[j] * meanGyXh);
  }
  return success();
}

} // namespace

void registerGroupNormEvaluators(EvaluatorRegistry &registry) {
  registry.add<GroupNormOp>(evalGroupNorm);
  registry.add<GroupNormBackwardOp>(evalGroupNormBackward);
}

} // namespace mlir::kiln::ref
