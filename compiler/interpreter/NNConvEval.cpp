//===- NNConvEval.cpp - evaluators of convolution and pooling -------------===//
//
// conv2d, max_pool2d, avg_pool2d and their backward ops. Every kernel works
// on NCHW data: NHWC operands are transposed into NCHW scratch buffers first
// and results transposed back, which costs O(size) next to the O(size *
// window) loops. The convolution loops run over (n, o, c, kh, kw, oh) and an
// innermost contiguous run of output columns whose bounds are computed once
// per (kw) so the inner loop has no branches or divisions.
//
//===----------------------------------------------------------------------===//

#include "compiler/interpreter/EvalUtils.h"

#include "dialects/kiln/IR/KilnDialect.h"

#include <algorithm>
#include <limits>

namespace mlir::kiln::ref {
namespace {

/// [a, b, c, d] -> [a, d, b, c]: NHWC activations and [O, KH, KW, C] filters
/// to NCHW and [O, C, KH, KW].
std::vector<double> toChannelsFirst(const std::vector<double> &in,
                                    llvm::ArrayRef<int64_t> shape) {
  int64_t a = shape[0], b = shape[1], c = shape[2], d = shape[3];
  std::vector<double> out(in.size());
  const double *src = in.data();
  for (int64_t i = 0; i < a; ++i) {
    double *dst = out.data() + i * b * c * d;
    for (int64_t j = 0; j < b; ++j)
      for (int64_t k = 0; k < c; ++k, src += d)
        for (int64_t l = 0; l < d; ++l)
          dst[(l * b + j) * c + k] = src[l];
  }
  return out;
}

/// The inverse of toChannelsFirst: `in` is [a, d, b, c] for a tensor whose
/// own (channels-last) shape is `shape` = [a, b, c, d].
void fromChannelsFirst(const std::vector<double> &in,
                       llvm::ArrayRef<int64_t> shape,
                       std::vector<double> &out) {
  int64_t a = shape[0], b = shape[1], c = shape[2], d = shape[3];
  double *dst = out.data();
  for (int64_t i = 0; i < a; ++i) {
    const double *src = in.data() + i * b * c * d;
    for (int64_t j = 0; j < b; ++j)
      for (int64_t k = 0; k < c; ++k, dst += d)
        for (int64_t l = 0; l < d; ++l)
          dst[l] = src[(l * b + j) * c + k];
  }
}

/// Data of a 4-D operand in channels-first order.
std::vector<double> channelsFirst(const Tensor &t, bool nhwc) {
  return nhwc ? toChannelsFirst(t.data, t.shape) : t.data;
}

/// Stores channels-first `data` into `t` in its own layout.
void storeChannelsFirst(std::vector<double> &&data, Tensor &t, bool nhwc) {
  if (nhwc)
    fromChannelsFirst(data, t.shape, t.data);
  else
    t.data = std::move(data);
}

/// Sizes of one convolution or pooling, channels-first.
struct Geometry {
  int64_t n, c, h, w; // input
  int64_t o, oh, ow;  // output
  int64_t kh, kw;     // window
  int64_t sh, sw, top, left, dh, dw, groups;

  /// Dims of an activation shape in `layout` as (n, c, h, w).
  static std::array<int64_t, 4> nchw(llvm::ArrayRef<int64_t> shape, bool nhwc) {
    return nhwc
               ? std::array<int64_t, 4>{shape[0], shape[3], shape[1], shape[2]}
               : std::array<int64_t, 4>{shape[0], shape[1], shape[2], shape[3]};
  }

  Geometry(llvm::ArrayRef<int64_t> input, llvm::ArrayRef<int64_t> output,
           bool nhwc, int64_t kh, int64_t kw, llvm::ArrayRef<int64_t> stride,
           llvm::ArrayRef<int64_t> padding, llvm::ArrayRef<int64_t> dilation,
           int64_t groups)
      : kh(kh), kw(kw), sh(stride[0]), sw(stride[1]), top(padding[0]),
        left(padding[2]), dh(dilation[0]), dw(dilation[1]), groups(groups) {
    auto in = nchw(input, nhwc), out = nchw(output, nhwc);
    n = in[0], c = in[1], h = in[2], w = in[3];
    o = out[1], oh = out[2], ow = out[3];
  }

  /// Output columns [lo, hi) whose input column ow*sw - left + j*dw lies
  /// inside the input, for window column j.
  std::pair<int64_t, int64_t> columns(int64_t j) const {
    int64_t shift = j * dw - left; // input column = ow * sw + shift
    auto ceilDiv = [](int64_t a, int64_t b) {
      return a >= 0 ? (a + b - 1) / b : -((-a) / b);
    };
    int64_t lo = std::max<int64_t>(0, ceilDiv(-shift, sw));
    int64_t hi = std::min<int64_t>(ow, ceilDiv(w - shift, sw));
    return {lo, std::max(lo, hi)};
  }
};

enum class ConvMode { Forward, BackwardInput, BackwardFilter };

/// The one loop nest of conv2d and both its gradients, on channels-first
/// buffers: `x` input [N, C, H, W], `f` filter [O, C/groups, KH, KW], `y`
/// output [N, O, OH, OW]. Forward accumulates into y, BackwardInput into x
/// (from y = grad), BackwardFilter into f.
template <ConvMode Mode>
void convLoops(const Geometry &g, double *x, double *f, double *y) {
  int64_t cg = g.c / g.groups, og = g.o / g.groups;
  std::vector<std::pair<int64_t, int64_t>> columns(g.kw);
  for (int64_t j = 0; j < g.kw; ++j)
    columns[j] = g.columns(j);
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t o = 0; o < g.o; ++o) {
      int64_t group = o / og;
      double *yPlane = y + (n * g.o + o) * g.oh * g.ow;
      for (int64_t ci = 0; ci < cg; ++ci) {
        double *xPlane = x + (n * g.c + group * cg + ci) * g.h * g.w;
        double *fTaps = f + (o * cg + ci) * g.kh * g.kw;
        for (int64_t i = 0; i < g.kh; ++i)
          for (int64_t j = 0; j < g.kw; ++j) {
            auto [lo, hi] = columns[j];
            if (lo >= hi)
              continue;
            double tap = fTaps[i * g.kw + j], acc = 0;
            int64_t shift = j * g.dw - g.left;
            for (int64_t r = 0; r < g.oh; ++r) {
              int64_t ih = r * g.sh - g.top + i * g.dh;
              if (ih < 0 || ih >= g.h)
                continue;
              // Input column of output column `col`: col * sw + shift, in
              // bounds for col in [lo, hi).
              double *xRow = xPlane + ih * g.w;
              double *yRow = yPlane + r * g.ow;
              int64_t first = lo * g.sw + shift, step = g.sw;
              if (Mode == ConvMode::Forward) {
                for (int64_t col = lo, ix = first; col < hi; ++col, ix += step)
                  yRow[col] += tap * xRow[ix];
              } else if (Mode == ConvMode::BackwardInput) {
                for (int64_t col = lo, ix = first; col < hi; ++col, ix += step)
                  xRow[ix] += tap * yRow[col];
              } else {
                for (int64_t col = lo, ix = first; col < hi; ++col, ix += step)
                  acc += yRow[col] * xRow[ix];
              }
            }
            if (Mode == ConvMode::BackwardFilter)
              fTaps[i * g.kw + j] += acc;
          }
      }
    }
}

/// Filter window size of a filter shape in `layout`.
std::pair<int64_t, int64_t> filterWindow(llvm::ArrayRef<int64_t> filter,
                                         bool nhwc) {
  return nhwc ? std::make_pair(filter[1], filter[2])
              : std::make_pair(filter[2], filter[3]);
}

LogicalResult evalConv2d(Operation *op, llvm::ArrayRef<const Tensor *> operands,
                         llvm::MutableArrayRef<Tensor> results, EvalContext &) {
  auto conv = cast<Conv2dOp>(op);
  bool nhwc = conv.getLayout() == ConvLayout::nhwc;
  const Tensor &input = *operands[0], &filter = *operands[1];
  Tensor &result = results[0];
  auto [kh, kw] = filterWindow(filter.shape, nhwc);
  Geometry g(input.shape, result.shape, nhwc, kh, kw, conv.getStride(),
             conv.getPadding(), conv.getDilation(),
             conv.getGroupsAttr().getInt());
  std::vector<double> x = channelsFirst(input, nhwc);
  std::vector<double> f = channelsFirst(filter, nhwc);
  std::vector<double> y(result.data.size(), 0.0);
  if (conv.getBias()) {
    const std::vector<double> &bias = operands[2]->data;
    int64_t plane = g.oh * g.ow;
    for (int64_t n = 0; n < g.n; ++n)
      for (int64_t o = 0; o < g.o; ++o)
        std::fill_n(y.begin() + (n * g.o + o) * plane, plane, bias[o]);
  }
  convLoops<ConvMode::Forward>(g, x.data(), f.data(), y.data());
  storeChannelsFirst(std::move(y), result, nhwc);
  return success();
}

LogicalResult evalConv2dBackwardInput(Operation *op,
                                      llvm::ArrayRef<const Tensor *> operands,
                                      llvm::MutableArrayRef<Tensor> results,
                                      EvalContext &) {
  auto conv = cast<Conv2dBackwardInputOp>(op);
  bool nhwc = conv.getLayout() == ConvLayout::nhwc;
  const Tensor &grad = *operands[0], &filter = *operands[1];
  Tensor &result = results[0];
  auto [kh, kw] = filterWindow(filter.shape, nhwc);
  Geometry g(result.shape, grad.shape, nhwc, kh, kw, conv.getStride(),
             conv.getPadding(), conv.getDilation(),
             conv.getGroupsAttr().getInt());
  std::vector<double> y = channelsFirst(grad, nhwc);
  std::vector<double> f = channelsFirst(filter, nhwc);
  std::vector<double> x(result.data.size(), 0.0);
  convLoops<ConvMode::BackwardInput>(g, x.data(), f.data(), y.data());
  storeChannelsFirst(std::move(x), result, nhwc);
  return success();
}

LogicalResult evalConv2dBackwardFilter(Operation *op,
                                       llvm::ArrayRef<const Tensor *> operands,
                                       llvm::MutableArrayRef<Tensor> results,
                                       EvalContext &) {
  auto conv = cast<Conv2dBackwardFilterOp>(op);
  bool nhwc = conv.getLayout() == ConvLayout::nhwc;
  const Tensor &grad = *operands[0], &input = *operands[1];
  Tensor &result = results[0];
  auto [kh, kw] = filterWindow(result.shape, nhwc);
  Geometry g(input.shape, grad.shape, nhwc, kh, kw, conv.getStride(),
             conv.getPadding(), conv.getDilation(),
             conv.getGroupsAttr().getInt());
  std::vector<double> y = channelsFirst(grad, nhwc);
  std::vector<double> x = channelsFirst(input, nhwc);
  std::vector<double> f(result.data.size(), 0.0);
  convLoops<ConvMode::BackwardFilter>(g, x.data(), f.data(), y.data());
  storeChannelsFirst(std::move(f), result, nhwc);
  return success();
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

/// Calls `body(plane, r, col, rowLo, rowHi, colLo, colHi)` for every output
/// element of every (n, c) plane, with the window's in-bounds input rows
/// [rowLo, rowHi) and columns [colLo, colHi).
template <typename Body> void forEachWindow(const Geometry &g, Body body) {
  for (int64_t plane = 0; plane < g.n * g.c; ++plane)
    for (int64_t r = 0; r < g.oh; ++r) {
      int64_t rowStart = r * g.sh - g.top;
      int64_t rowLo = std::max<int64_t>(rowStart, 0);
      int64_t rowHi = std::min<int64_t>(rowStart + g.kh, g.h);
      for (int64_t col = 0; col < g.ow; ++col) {
        int64_t colStart = col * g.sw - g.left;
        int64_t colLo = std::max<int64_t>(colStart, 0);
        int64_t colHi = std::min<int64_t>(colStart + g.kw, g.w);
        body(plane, r, col, rowLo, rowHi, colLo, colHi);
      }
    }
}

/// Geometry of a pooling op between `input` and `output` shapes.
template <typename OpTy>
Geometry poolGeometry(OpTy pool, llvm::ArrayRef<int64_t> input,
                      llvm::ArrayRef<int64_t> output) {
  int64_t dilation[] = {1, 1};
  return Geometry(input, output, pool.getLayout() == ConvLayout::nhwc,
                  pool.getKernel()[0], pool.getKernel()[1], pool.getStride(),
                  pool.getPadding(), dilation, 1);
}

/// Flat index (within a plane) of the first maximum of a window; padding
/// never wins (the verifier guarantees each window overlaps the input).
int64_t argmaxOf(const double *plane, int64_t width, int64_t rowLo,
                 int64_t rowHi, int64_t colLo, int64_t colHi) {
  int64_t best = rowLo * width + colLo;
  double bestValue = plane[best];
  for (int64_t ih = rowLo; ih < rowHi; ++ih)
    for (int64_t iw = colLo; iw < colHi; ++iw) {
      double v = plane[ih * width + iw];
      // A NaN wins (and stays), so it propagates like a maximum should.
      if (v > bestValue || (std::isnan(v) && !std::isnan(bestValue))) {
        bestValue = v;
        best = ih * width + iw;
      }
    }
  return best;
}

LogicalResult evalMaxPool2d(Operation *op,
                            llvm::ArrayRef<const Tensor *> operands,
                            llvm::MutableArrayRef<Tensor> results,
                            EvalContext &) {
  auto pool = cast<MaxPool2dOp>(op);
  bool nhwc = pool.getLayout() == ConvLayout::nhwc;
  Geometry g = poolGeometry(pool, operands[0]->shape, results[0].shape);
  std::vector<double> x = channelsFirst(*operands[0], nhwc);
  std::vector<double> y(results[0].data.size());
  forEachWindow(g, [&](int64_t plane, int64_t r, int64_t col, int64_t rowLo,
                       int64_t rowHi, int64_t colLo, int64_t colHi) {
    const double *in = x.data() + plane * g.h * g.w;
    y[(plane * g.oh + r) * g.ow + col] =
        in[argmaxOf(in, g.w, rowLo, rowHi, colLo, colHi)];
  });
  storeChannelsFirst(std::move(y), results[0], nhwc);
  return success();
}

LogicalResult evalMaxPool2dBackward(Operation *op,
                                    llvm::ArrayRef<const Tensor *> operands,
                                    llvm::MutableArrayRef<Tensor> results,
                                    EvalContext &) {
  auto pool = cast<MaxPool2dBackwardOp>(op);
  bool nhwc = pool.getLayout() == ConvLayout::nhwc;
  Geometry g = poolGeometry(pool, operands[1]->shape, operands[0]->shape);
  std::vector<double> dy = channelsFirst(*operands[0], nhwc);
  std::vector<double> x = channelsFirst(*operands[1], nhwc);
  std::vector<double> dx(x.size(), 0.0);
  forEachWindow(g, [&](int64_t plane, int64_t r, int64_t col, int64_t rowLo,
                       int64_t rowHi, int64_t colLo, int64_t colHi) {
    int64_t offset = plane * g.h * g.w;
    dx[offset + argmaxOf(x.data() + offset, g.w, rowLo, rowHi, colLo, colHi)] +=
        dy[(plane * g.oh + r) * g.ow + col];
  });
  storeChannelsFirst(std::move(dx), results[0], nhwc);
  return success();
}

LogicalResult evalAvgPool2d(Operation *op,
                            llvm::ArrayRef<const Tensor *> operands,
                            llvm::MutableArrayRef<Tensor> results,
                            EvalContext &) {
  auto pool = cast<AvgPool2dOp>(op);
  bool nhwc = pool.getLayout() == ConvLayout::nhwc;
  bool includePad = pool.getCountIncludePad();
  Geometry g = poolGeometry(pool, operands[0]->shape, results[0].shape);
  std::vector<double> x = channelsFirst(*operands[0], nhwc);
  std::vector<double> y(results[0].data.size());
  forEachWindow(g, [&](int64_t plane, int64_t r, int64_t col, int64_t rowLo,
                       int64_t rowHi, int64_t colLo, int64_t colHi) {
    const double *in = x.data() + plane * g.h * g.w;
    double sum = 0;
    for (int64_t ih = rowLo; ih < rowHi; ++ih)
      for (int64_t iw = colLo; iw < colHi; ++iw)
        sum += in[ih * g.w + iw];
    int64_t divisor =
        includePad ? g.kh * g.kw : (rowHi - rowLo) * (colHi - colLo);
    y[(plane * g.oh + r) * g.ow + col] = sum / double(divisor);
  });
  storeChannelsFirst(std::move(y), results[0], nhwc);
  return success();
}

LogicalResult evalAvgPool2dBackward(Operation *op,
                                    llvm::ArrayRef<const Tensor *> operands,
                                    llvm::MutableArrayRef<Tensor> results,
                                    EvalContext &) {
  auto pool = cast<AvgPool2dBackwardOp>(op);
  bool nhwc = pool.getLayout() == ConvLayout::nhwc;
  bool includePad = pool.getCountIncludePad();
  Geometry g = poolGeometry(pool, results[0].shape, operands[0]->shape);
  std::vector<double> dy = channelsFirst(*operands[0], nhwc);
  std::vector<double> dx(results[0].data.size(), 0.0);
  forEachWindow(g, [&](int64_t plane, int64_t r, int64_t col, int64_t rowLo,
                       int64_t rowHi, int64_t colLo, int64_t colHi) {
    int64_t divisor =
        includePad ? g.kh * g.kw : (rowHi - rowLo) * (colHi - colLo);
    double share = dy[(plane * g.oh + r) * g.ow + col] / double(divisor);
    double *out = dx.data() + plane * g.h * g.w;
    for (int64_t ih = rowLo; ih < rowHi; ++ih)
      for (int64_t iw = colLo; iw < colHi; ++iw)
        out[ih * g.w + iw] += share;
  });
  storeChannelsFirst(std::move(dx), results[0], nhwc);
  return success();
}

} // namespace

void registerNNConvEvaluators(EvaluatorRegistry &registry) {
  registry.add<Conv2dOp>(evalConv2d);
  registry.add<Conv2dBackwardInputOp>(evalConv2dBackwardInput);
  registry.add<Conv2dBackwardFilterOp>(evalConv2dBackwardFilter);
  registry.add<MaxPool2dOp>(evalMaxPool2d);
  registry.add<MaxPool2dBackwardOp>(evalMaxPool2dBackward);
  registry.add<AvgPool2dOp>(evalAvgPool2d);
  registry.add<AvgPool2dBackwardOp>(evalAvgPool2dBackward);
}

} // namespace mlir::kiln::ref
