//===- NNEval.cpp - evaluators of neural-network ops and losses -----------===//
//
// Softmax, the norms, embedding, rope, dropout and the losses, with the
// backward ops of the norms, embedding and losses. Convolution and pooling
// are in NNConvEval.cpp. Every loop walks memory contiguously and computes
// per-slice constants (inverse sums, rsqrt) once per slice.
//
//===----------------------------------------------------------------------===//

#include "compiler/interpreter/EvalUtils.h"
#include "runtime/random/philox.h"

#include "dialects/kiln/IR/KilnDialect.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

namespace mlir::kiln::ref {

void registerNNConvEvaluators(EvaluatorRegistry &registry);
void registerResizeEvaluators(EvaluatorRegistry &registry);
void registerGroupNormEvaluators(EvaluatorRegistry &registry);

namespace {

/// A tensor viewed as [outer, size, inner] around one dimension.
struct Slices {
  int64_t outer = 1, size = 1, inner = 1;
};

Slices slicesAround(llvm::ArrayRef<int64_t> shape, int64_t dim) {
  Slices s;
  for (int64_t d = 0; d < dim; ++d)
    s.outer *= shape[d];
  s.size = shape[dim];
  for (int64_t d = dim + 1, e = shape.size(); d < e; ++d)
    s.inner *= shape[d];
  return s;
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

//===----------------------------------------------------------------------===//
// Softmax
//===----------------------------------------------------------------------===//

/// softmax or log_softmax along `dim`: slices are strided by `inner`, so the
/// loops keep per-column maxima and sums and sweep rows contiguously.
template <bool Log>
LogicalResult
evalSoftmax(Operation *op, llvm::ArrayRef<const Tensor *> operands,
            llvm::MutableArrayRef<Tensor> results, EvalContext &) {
  int64_t dim = Log ? cast<LogSoftmaxOp>(op).getDimAttr().getInt()
                    : cast<SoftmaxOp>(op).getDimAttr().getInt();
  const Tensor &x = *operands[0];
  Tensor &y = results[0];
  Slices s = slicesAround(x.shape, dim);
  std::vector<double> maxima(s.inner), sums(s.inner);
  for (int64_t o = 0; o < s.outer; ++o) {
    const double *in = x.data.data() + o * s.size * s.inner;
    double *out = y.data.data() + o * s.size * s.inner;
    std::fill(maxima.begin(), maxima.end(),
              -std::numeric_limits<double>::infinity());
    std::fill(sums.begin(), sums.end(), 0.0);
    for (int64_t d = 0; d < s.size; ++d)
      for (int64_t i = 0; i < s.inner; ++i)
        maxima[i] = std::max(maxima[i], in[d * s.inner + i]);
    for (int64_t d = 0; d < s.size; ++d)
      for (int64_t i = 0; i < s.inner; ++i) {
        double e = std::exp(in[d * s.inner + i] - maxima[i]);
        sums[i] += e;
        if (!Log)
          out[d * s.inner + i] = e;
      }
    if (Log) {
      // x - max - log(sum): the log is taken once per slice.
      for (int64_t i = 0; i < s.inner; ++i)
        maxima[i] += std::log(sums[i]);
      for (int64_t d = 0; d < s.size; ++d)
        for (int64_t i = 0; i < s.inner; ++i)
          out[d * s.inner + i] = in[d * s.inner + i] - maxima[i];
    } else {
      for (int64_t i = 0; i < s.inner; ++i)
        sums[i] = 1.0 / sums[i];
      for (int64_t d = 0; d < s.size; ++d)
        for (int64_t i = 0; i < s.inner; ++i)
          out[d * s.inner + i] *= sums[i];
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Normalisation
//===----------------------------------------------------------------------===//

LogicalResult evalLayerNorm(Operation *op,
                            llvm::ArrayRef<const Tensor *> operands,
                            llvm::MutableArrayRef<Tensor> results,
                            EvalContext &) {
  auto norm = cast<LayerNormOp>(op);
  const Tensor &x = *operands[0];
  const Tensor *weight = norm.getWeight() ? operands[1] : nullptr;
  const Tensor *bias = norm.getBias() ? operands[2] : nullptr;
  int64_t count = numElements(
      llvm::ArrayRef<int64_t>(x.shape).take_back(norm.getNumNormalizedDims()));
  double eps = norm.getEps().convertToDouble();
  Tensor &y = results[0];
  for (int64_t row = 0, rows = count ? x.size() / count : 0; row < rows;
       ++row) {
    const double *in = x.data.data() + row * count;
    double *out = y.data.data() + row * count;
    auto [mean, rstd] = meanAndRstd(in, count, eps);
    for (int64_t j = 0; j < count; ++j) {
      double v = (in[j] - mean) * rstd;
      if (weight)
        v *= weight->data[j];
      if (bias)
        v += bias->data[j];
      out[j] = v;
    }
  }
  return success();
}

LogicalResult evalLayerNormBackward(Operation *op,
                                    llvm::ArrayRef<const Tensor *> operands,
                                    llvm::MutableArrayRef<Tensor> results,
                                    EvalContext &) {
  auto norm = cast<LayerNormBackwardOp>(op);
  const Tensor &g = *operands[0], &x = *operands[1];
  const Tensor *weight = norm.getWeight() ? operands[2] : nullptr;
  Tensor &dx = results[0], &dw = results[1], &db = results[2];
  int64_t count = dw.size();
  double eps = norm.getEps().convertToDouble();
  std::vector<double> xh(count), gy(count);
  for (int64_t row = 0, rows = count ? x.size() / count : 0; row < rows;
       ++row) {
    const double *in = x.data.data() + row * count;
    const double *grad = g.data.data() + row * count;
    double *out = dx.data.data() + row * count;
    auto [mean, rstd] = meanAndRstd(in, count, eps);
    double sumGy = 0, sumGyXh = 0;
    for (int64_t j = 0; j < count; ++j) {
      xh[j] = (in[j] - mean) * rstd;
      gy[j] = weight ? grad[j] * weight->data[j] : grad[j];
      sumGy += gy[j];
      sumGyXh += gy[j] * xh[j];
      dw.data[j] += grad[j] * xh[j];
      db.data[j] += grad[j];
    }
    double meanGy = sumGy / count, meanGyXh = sumGyXh / count;
    for (int64_t j = 0; j < count; ++j)
      out[j] = rstd * (gy[j] - meanGy - xh[j] * meanGyXh);
  }
  return success();
}

/// 1/sqrt(mean(x^2) + eps) of `count` contiguous values.
double rmsRstd(const double *x, int64_t count, double eps) {
  double sq = 0;
  for (int64_t j = 0; j < count; ++j)
    sq += x[j] * x[j];
  return 1.0 / std::sqrt(sq / count + eps);
}

LogicalResult evalRmsNorm(Operation *op,
                          llvm::ArrayRef<const Tensor *> operands,
                          llvm::MutableArrayRef<Tensor> results,
                          EvalContext &) {
  auto norm = cast<RmsNormOp>(op);
  const Tensor &x = *operands[0];
  const Tensor *weight = norm.getWeight() ? operands[1] : nullptr;
  int64_t count = x.shape.back();
  double eps = norm.getEps().convertToDouble();
  for (int64_t row = 0, rows = count ? x.size() / count : 0; row < rows;
       ++row) {
    const double *in = x.data.data() + row * count;
    double *out = results[0].data.data() + row * count;
    double rstd = rmsRstd(in, count, eps);
    for (int64_t j = 0; j < count; ++j)
      out[j] = weight ? in[j] * rstd * weight->data[j] : in[j] * rstd;
  }
  return success();
}

LogicalResult evalRmsNormBackward(Operation *op,
                                  llvm::ArrayRef<const Tensor *> operands,
                                  llvm::MutableArrayRef<Tensor> results,
                                  EvalContext &) {
  auto norm = cast<RmsNormBackwardOp>(op);
  const Tensor &g = *operands[0], &x = *operands[1];
  const Tensor *weight = norm.getWeight() ? operands[2] : nullptr;
  Tensor &dx = results[0], &dw = results[1];
  int64_t count = x.shape.back();
  double eps = norm.getEps().convertToDouble();
  for (int64_t row = 0, rows = count ? x.size() / count : 0; row < rows;
       ++row) {
    const double *in = x.data.data() + row * count;
    const double *grad = g.data.data() + row * count;
    double *out = dx.data.data() + row * count;
    double rstd = rmsRstd(in, count, eps);
    double sumGyXh = 0;
    for (int64_t j = 0; j < count; ++j) {
      double xh = in[j] * rstd;
      double gy = weight ? grad[j] * weight->data[j] : grad[j];
      sumGyXh += gy * xh;
      dw.data[j] += grad[j] * xh;
    }
    double meanGyXh = sumGyXh / count;
    for (int64_t j = 0; j < count; ++j) {
      double gy = weight ? grad[j] * weight->data[j] : grad[j];
      out[j] = rstd * (gy - in[j] * rstd * meanGyXh);
    }
  }
  return success();
}

/// Per-channel mean and 1/sqrt(var + eps) over [outer, C, inner] (two passes
/// for a stable variance); `variance` receives the biased variance.
void channelStats(const Tensor &x, const Slices &s, double eps,
                  std::vector<double> &mean, std::vector<double> &variance,
                  std::vector<double> &rstd) {
  mean.assign(s.size, 0.0);
  variance.assign(s.size, 0.0);
  rstd.assign(s.size, 0.0);
  const double *in = x.data.data();
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t c = 0; c < s.size; ++c, in += s.inner)
      for (int64_t i = 0; i < s.inner; ++i)
        mean[c] += in[i];
  double count = double(s.outer * s.inner);
  for (double &m : mean)
    m /= count;
  in = x.data.data();
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t c = 0; c < s.size; ++c, in += s.inner)
      for (int64_t i = 0; i < s.inner; ++i)
        variance[c] += (in[i] - mean[c]) * (in[i] - mean[c]);
  for (int64_t c = 0; c < s.size; ++c) {
    variance[c] /= count;
    rstd[c] = 1.0 / std::sqrt(variance[c] + eps);
  }
}

LogicalResult evalBatchNorm(Operation *op,
                            llvm::ArrayRef<const Tensor *> operands,
                            llvm::MutableArrayRef<Tensor> results,
                            EvalContext &) {
  auto norm = cast<BatchNormOp>(op);
  const Tensor &x = *operands[0], &gamma = *operands[1], &beta = *operands[2];
  Slices s = slicesAround(x.shape, norm.getDimAttr().getInt());
  double eps = norm.getEps().convertToDouble();
  std::vector<double> mean, variance, rstd;
  bool running = norm.hasRunningStats();
  if (norm.getEval()) {
    // Normalised with the running statistics, which are also the mean and
    // variance results; nothing is updated.
    mean = operands[3]->data;
    variance = operands[4]->data;
    for (double v : variance)
      rstd.push_back(1.0 / std::sqrt(v + eps));
  } else {
    channelStats(x, s, eps, mean, variance, rstd);
  }
  const double *in = x.data.data();
  double *out = results[0].data.data();
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t c = 0; c < s.size; ++c, in += s.inner, out += s.inner) {
      double scale = rstd[c] * gamma.data[c];
      for (int64_t i = 0; i < s.inner; ++i)
        out[i] = (in[i] - mean[c]) * scale + beta.data[c];
    }
  results[1].data = mean;
  results[2].data = variance;
  if (!running)
    return success();
  if (norm.getEval()) {
    results[3].data = operands[3]->data;
    results[4].data = operands[4]->data;
    return success();
  }
  // PyTorch's update: the running variance follows the unbiased variance.
  double momentum = norm.getMomentumValue();
  double count = double(s.outer * s.inner);
  for (int64_t c = 0; c < s.size; ++c) {
    results[3].data[c] =
        (1 - momentum) * operands[3]->data[c] + momentum * mean[c];
    results[4].data[c] = (1 - momentum) * operands[4]->data[c] +
                         momentum * variance[c] * count / (count - 1);
  }
  return success();
}

LogicalResult evalBatchNormBackward(Operation *op,
                                    llvm::ArrayRef<const Tensor *> operands,
                                    llvm::MutableArrayRef<Tensor> results,
                                    EvalContext &) {
  auto norm = cast<BatchNormBackwardOp>(op);
  const Tensor &g = *operands[0], &x = *operands[1], &gamma = *operands[2];
  Slices s = slicesAround(x.shape, norm.getDimAttr().getInt());
  std::vector<double> mean, variance, rstd;
  channelStats(x, s, norm.getEps().convertToDouble(), mean, variance, rstd);
  std::vector<double> &sumG = results[2].data, &sumGXh = results[1].data;
  const double *in = x.data.data(), *grad = g.data.data();
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t c = 0; c < s.size; ++c, in += s.inner, grad += s.inner)
      for (int64_t i = 0; i < s.inner; ++i) {
        sumG[c] += grad[i];
        sumGXh[c] += grad[i] * (in[i] - mean[c]) * rstd[c];
      }
  double count = double(s.outer * s.inner);
  in = x.data.data();
  grad = g.data.data();
  double *out = results[0].data.data();
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t c = 0; c < s.size;
         ++c, in += s.inner, grad += s.inner, out += s.inner) {
      double meanG = sumG[c] / count, meanGXh = sumGXh[c] / count;
      double scale = gamma.data[c] * rstd[c];
      for (int64_t i = 0; i < s.inner; ++i) {
        double xh = (in[i] - mean[c]) * rstd[c];
        out[i] = scale * (grad[i] - meanG - xh * meanGXh);
      }
    }
  return success();
}

//===----------------------------------------------------------------------===//
// Embedding and rope
//===----------------------------------------------------------------------===//

/// Fails with an error naming the op and the element when an index of an
/// embedding is not a row of its table.
LogicalResult checkRows(Operation *op, const Tensor &indices, int64_t rows) {
  for (size_t i = 0, e = indices.data.size(); i < e; ++i) {
    double index = indices.data[i];
    if (!(index >= 0 && index < double(rows)))
      return op->emitOpError()
             << "index " << int64_t(index) << " at element "
             << formatShape(unflatIndex(indices.shape, int64_t(i)))
             << " of 'indices' is outside the " << rows << " rows of the table";
  }
  return success();
}

LogicalResult evalEmbedding(Operation *op,
                            llvm::ArrayRef<const Tensor *> operands,
                            llvm::MutableArrayRef<Tensor> results,
                            EvalContext &) {
  const Tensor &table = *operands[0], &indices = *operands[1];
  int64_t rows = table.shape[0], width = table.shape[1];
  if (failed(checkRows(op, indices, rows)))
    return failure();
  double *out = results[0].data.data();
  for (double index : indices.data) {
    const double *row = table.data.data() + int64_t(index) * width;
    std::copy(row, row + width, out);
    out += width;
  }
  return success();
}

LogicalResult evalEmbeddingBackward(Operation *op,
                                    llvm::ArrayRef<const Tensor *> operands,
                                    llvm::MutableArrayRef<Tensor> results,
                                    EvalContext &) {
  const Tensor &g = *operands[0], &indices = *operands[1];
  Tensor &table = results[0];
  int64_t rows = table.shape[0], width = table.shape[1];
  if (failed(checkRows(op, indices, rows)))
    return failure();
  const double *grad = g.data.data();
  for (double index : indices.data) {
    double *row = table.data.data() + int64_t(index) * width;
    for (int64_t j = 0; j < width; ++j)
      row[j] += grad[j];
    grad += width;
  }
  return success();
}

LogicalResult evalRope(Operation *op, llvm::ArrayRef<const Tensor *> operands,
                       llvm::MutableArrayRef<Tensor> results, EvalContext &) {
  auto rope = cast<RopeOp>(op);
  const Tensor &x = *operands[0];
  int64_t batch = x.shape[0], positions = x.shape[1], heads = x.shape[2],
          width = x.shape[3], half = width / 2;
  double theta = rope.getTheta().convertToDouble();
  int64_t offset = rope.getPositionOffsetAttr().getInt();
  // cos and sin of a = p * theta^(-2i/D) (-a for the inverse), once per
  // (position, i).
  double sign = rope.getInverse() ? -1.0 : 1.0;
  std::vector<double> cosines(positions * half), sines(positions * half);
  for (int64_t i = 0; i < half; ++i) {
    double frequency = std::pow(theta, -2.0 * double(i) / double(width));
    for (int64_t t = 0; t < positions; ++t) {
      double angle = double(t + offset) * frequency;
      cosines[t * half + i] = std::cos(angle);
      sines[t * half + i] = sign * std::sin(angle);
    }
  }
  const double *in = x.data.data();
  double *out = results[0].data.data();
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t t = 0; t < positions; ++t) {
      const double *c = cosines.data() + t * half,
                   *sn = sines.data() + t * half;
      for (int64_t h = 0; h < heads; ++h, in += width, out += width)
        for (int64_t i = 0; i < half; ++i) {
          double lo = in[i], hi = in[i + half];
          out[i] = lo * c[i] - hi * sn[i];
          out[i + half] = hi * c[i] + lo * sn[i];
        }
    }
  return success();
}

//===----------------------------------------------------------------------===//
// Dropout
//===----------------------------------------------------------------------===//

LogicalResult evalDropout(Operation *op,
                          llvm::ArrayRef<const Tensor *> operands,
                          llvm::MutableArrayRef<Tensor> results,
                          EvalContext &) {
  auto dropout = cast<DropoutOp>(op);
  ::kiln::RandomStream stream;
  // Two's complement: a negative seed is read as an unsigned 64-bit word and
  // the i32 offset as an unsigned 32-bit word.
  stream.seed = static_cast<uint64_t>(dropout.getSeedAttr().getInt());
  stream.stream = static_cast<uint32_t>(dropout.getStreamAttr().getInt());
  if (dropout.getOffset())
    stream.offset = static_cast<uint32_t>(
        static_cast<int32_t>(static_cast<int64_t>(operands[1]->data[0])));
  double rate = dropout.getRate().convertToDouble();
  double scale = 1.0 / (1.0 - rate);
  const std::vector<double> &in = operands[0]->data;
  std::vector<double> &out = results[0].data;
  for (size_t i = 0, e = in.size(); i < e; ++i)
    out[i] = stream.Uniform(i) >= rate ? in[i] * scale : 0.0;
  return success();
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

double reductionScale(Reduction reduction, int64_t count) {
  return reduction == Reduction::mean ? 1.0 / double(count) : 1.0;
}

LogicalResult evalMseLoss(Operation *op,
                          llvm::ArrayRef<const Tensor *> operands,
                          llvm::MutableArrayRef<Tensor> results,
                          EvalContext &) {
  const std::vector<double> &p = operands[0]->data, &t = operands[1]->data;
  double sum = 0;
  for (size_t i = 0, e = p.size(); i < e; ++i)
    sum += (p[i] - t[i]) * (p[i] - t[i]);
  // The mean divides (a single division, exact like the description).
  if (cast<MseLossOp>(op).getReduction() == Reduction::mean)
    sum /= double(p.size());
  results[0].data[0] = sum;
  return success();
}

/// max + log(sum exp(x - max)) of one row.
double logSumExp(const double *x, int64_t count) {
  double maximum = -std::numeric_limits<double>::infinity();
  for (int64_t c = 0; c < count; ++c)
    maximum = std::max(maximum, x[c]);
  double sum = 0;
  for (int64_t c = 0; c < count; ++c)
    sum += std::exp(x[c] - maximum);
  return maximum + std::log(sum);
}

/// The rows of a cross entropy's labels that count: those whose label is
/// not `ignore`. A label that is neither a class nor `ignore` is an error
/// naming the op and the row.
FailureOr<std::vector<bool>> countedRows(Operation *op, const Tensor &labels,
                                         int64_t classes,
                                         std::optional<int64_t> ignore) {
  std::vector<bool> counted(labels.data.size());
  for (size_t n = 0; n < counted.size(); ++n) {
    double label = labels.data[n];
    if (ignore && label == double(*ignore))
      continue;
    if (!(label >= 0 && label < double(classes))) {
      InFlightDiagnostic error = op->emitOpError()
                                 << "label " << int64_t(label) << " of row "
                                 << n << " is outside the " << classes
                                 << " classes [0, " << classes << ")";
      if (ignore)
        error << " and is not ignore_index " << *ignore;
      return failure();
    }
    counted[n] = true;
  }
  return counted;
}

/// 1 / the counted rows for `mean` (as PyTorch: NaN when none counts in the
/// loss, where the gradient is 0 anyway), 1 for `sum`.
double countedScale(Reduction reduction, const std::vector<bool> &counted) {
  return reductionScale(reduction,
                        std::count(counted.begin(), counted.end(), true));
}

LogicalResult evalCrossEntropy(Operation *op,
                               llvm::ArrayRef<const Tensor *> operands,
                               llvm::MutableArrayRef<Tensor> results,
                               EvalContext &) {
  auto loss = cast<CrossEntropyOp>(op);
  const Tensor &logits = *operands[0], &labels = *operands[1];
  int64_t rows = logits.shape[0], classes = logits.shape[1];
  FailureOr<std::vector<bool>> counted =
      countedRows(op, labels, classes, loss.getIgnoreIndex());
  if (failed(counted))
    return failure();
  double eps = loss.getLabelSmoothing().convertToDouble();
  double total = 0;
  for (int64_t n = 0; n < rows; ++n) {
    if (!(*counted)[n])
      continue;
    const double *x = logits.data.data() + n * classes;
    double lse = logSumExp(x, classes);
    double picked = x[int64_t(labels.data[n])] - lse;
    double sum = 0;
    for (int64_t c = 0; c < classes; ++c)
      sum += x[c] - lse;
    double row = -(1 - eps) * picked;
    if (eps != 0)
      row -= eps / double(classes) * sum;
    total += row;
  }
  // The mean divides (0 / 0 when every row is ignored, as PyTorch's).
  if (loss.getReduction() == Reduction::mean)
    total /= double(std::count(counted->begin(), counted->end(), true));
  results[0].data[0] = total;
  return success();
}

LogicalResult evalCrossEntropyBackward(Operation *op,
                                       llvm::ArrayRef<const Tensor *> operands,
                                       llvm::MutableArrayRef<Tensor> results,
                                       EvalContext &) {
  auto loss = cast<CrossEntropyBackwardOp>(op);
  const Tensor &logits = *operands[1], &labels = *operands[2];
  int64_t rows = logits.shape[0], classes = logits.shape[1];
  FailureOr<std::vector<bool>> counted =
      countedRows(op, labels, classes, loss.getIgnoreIndex());
  if (failed(counted))
    return failure();
  double eps = loss.getLabelSmoothing().convertToDouble();
  double scale =
      operands[0]->data[0] * countedScale(loss.getReduction(), *counted);
  double uniform = eps / double(classes);
  // Ignored rows keep the results' zeros.
  for (int64_t n = 0; n < rows; ++n) {
    if (!(*counted)[n])
      continue;
    const double *x = logits.data.data() + n * classes;
    double *out = results[0].data.data() + n * classes;
    double lse = logSumExp(x, classes);
    for (int64_t c = 0; c < classes; ++c)
      out[c] = scale * (std::exp(x[c] - lse) - uniform);
    out[int64_t(labels.data[n])] -= scale * (1 - eps);
  }
  return success();
}

LogicalResult evalBinaryCrossEntropy(Operation *op,
                                     llvm::ArrayRef<const Tensor *> operands,
                                     llvm::MutableArrayRef<Tensor> results,
                                     EvalContext &) {
  const std::vector<double> &x = operands[0]->data, &t = operands[1]->data;
  double sum = 0;
  for (size_t i = 0, e = x.size(); i < e; ++i)
    sum += std::max(x[i], 0.0) - x[i] * t[i] +
           std::log1p(std::exp(-std::abs(x[i])));
  if (cast<BinaryCrossEntropyOp>(op).getReduction() == Reduction::mean)
    sum /= double(x.size());
  results[0].data[0] = sum;
  return success();
}

LogicalResult evalBinaryCrossEntropyBackward(
    Operation *op, llvm::ArrayRef<const Tensor *> operands,
    llvm::MutableArrayRef<Tensor> results, EvalContext &) {
  const std::vector<double> &x = operands[1]->data, &t = operands[2]->data;
  double scale =
      operands[0]->data[0] *
      reductionScale(cast<BinaryCrossEntropyBackwardOp>(op).getReduction(),
                     x.size());
  std::vector<double> &out = results[0].data;
  for (size_t i = 0, e = x.size(); i < e; ++i) {
    // sigmoid without overflow: exp of a non-positive number only.
    double z = std::exp(-std::abs(x[i]));
    double sigmoid = x[i] >= 0 ? 1.0 / (1.0 + z) : z / (1.0 + z);
    out[i] = scale * (sigmoid - t[i]);
  }
  return success();
}

} // namespace

void registerNNEvaluators(EvaluatorRegistry &registry) {
  registry.add<SoftmaxOp>(evalSoftmax<false>);
  registry.add<LogSoftmaxOp>(evalSoftmax<true>);
  registry.add<LayerNormOp>(evalLayerNorm);
  registry.add<LayerNormBackwardOp>(evalLayerNormBackward);
  registry.add<RmsNormOp>(evalRmsNorm);
  registry.add<RmsNormBackwardOp>(evalRmsNormBackward);
  registry.add<BatchNormOp>(evalBatchNorm);
  registry.add<BatchNormBackwardOp>(evalBatchNormBackward);
  registry.add<EmbeddingOp>(evalEmbedding);
  registry.add<EmbeddingBackwardOp>(evalEmbeddingBackward);
  registry.add<RopeOp>(evalRope);
  registry.add<DropoutOp>(evalDropout);
  registry.add<MseLossOp>(evalMseLoss);
  registry.add<CrossEntropyOp>(evalCrossEntropy);
  registry.add<CrossEntropyBackwardOp>(evalCrossEntropyBackward);
  registry.add<BinaryCrossEntropyOp>(evalBinaryCrossEntropy);
  registry.add<BinaryCrossEntropyBackwardOp>(evalBinaryCrossEntropyBackward);
  registerNNConvEvaluators(registry);
  registerResizeEvaluators(registry);
  registerGroupNormEvaluators(registry);
}

} // namespace mlir::kiln::ref
