//===- ResizeEval.cpp - evaluators of kiln.resize and its gradient --------===//
//
// Which input elements an output reads, and with which weights, comes from
// kernels/resize_layout.cuh, the functions the GPU kernels call: the CPU
// reference picks the same elements bit for bit. The forward blends the
// taps of each resized dim in turn (the first resized dim outermost), as
// the kernels do; the gradient scatters each output's gradient onto the
// elements it read, in output order (the kernels gather the same sums).
//
//===----------------------------------------------------------------------===//

#include "compiler/interpreter/EvalUtils.h"

#include "dialects/kiln/IR/KilnDialect.h"

#include "kiln/resize_layout.cuh"

namespace mlir::kiln::ref {
namespace {

/// One resized dim's reads of one output index: up to two (index, weight)
/// taps.
struct Taps {
  int64_t index[2];
  double weight[2];
  int count;
};

/// The resized dims of an op between `input` and `output` shapes.
struct ResizeGeometry {
  llvm::SmallVector<int64_t> dims;
  llvm::SmallVector<::kiln::resize::axis> axes;

  template <typename OpTy>
  ResizeGeometry(OpTy op, llvm::ArrayRef<int64_t> input,
                 llvm::ArrayRef<int64_t> output)
      : dims(op.getResizedDims()) {
    for (int64_t d : dims)
      axes.push_back({input[d], output[d], op.getScales()[d],
                      static_cast<int>(op.getMode()),
                      static_cast<int>(op.getCoordinates()),
                      static_cast<int>(op.getRounding())});
  }

  Taps taps(size_t k, int64_t o) const {
    const ::kiln::resize::axis &a = axes[k];
    if (a.mode == ::kiln::resize::nearest)
      return {{::kiln::resize::nearest_index(a.coords, a.round, o, a.in, a.out,
                                             a.scale),
               0},
              {1.0, 0.0},
              1};
    ::kiln::resize::linear_tap t =
        ::kiln::resize::linear_taps(a.coords, o, a.in, a.out, a.scale);
    return {{t.i0, t.i1}, {1.0 - t.w1, t.w1}, 2};
  }
};

/// Calls f(input flat index, weight) for every input element output `o`
/// (coordinates `at`, changed and restored) reads, dim `k` onwards.
template <typename F>
void forEachRead(const ResizeGeometry &g, size_t k, Shape &at,
                 const Shape &inStrides, double weight, F &&f) {
  if (k == g.dims.size()) {
    int64_t flat = 0;
    for (size_t d = 0; d < at.size(); ++d)
      flat += at[d] * inStrides[d];
    f(flat, weight);
    return;
  }
  int64_t d = g.dims[k], o = at[d];
  Taps t = g.taps(k, o);
  for (int i = 0; i < t.count; ++i) {
    at[d] = t.index[i];
    forEachRead(g, k + 1, at, inStrides, weight * t.weight[i], f);
  }
  at[d] = o;
}

/// The blend of output `at`'s reads from dim `k` on: each resized dim's taps
/// weighted in turn, as the kernels nest them.
double blend(const ResizeGeometry &g, size_t k, Shape &at,
             const Shape &inStrides, const std::vector<double> &x) {
  if (k == g.dims.size()) {
    int64_t flat = 0;
    for (size_t d = 0; d < at.size(); ++d)
      flat += at[d] * inStrides[d];
    return x[flat];
  }
  int64_t d = g.dims[k], o = at[d];
  Taps t = g.taps(k, o);
  double value = 0;
  for (int i = 0; i < t.count; ++i) {
    at[d] = t.index[i];
    value += t.weight[i] * blend(g, k + 1, at, inStrides, x);
  }
  at[d] = o;
  return value;
}

/// Row-major coordinates of flat index `i` in `shape`.
void decode(int64_t i, llvm::ArrayRef<int64_t> shape, Shape &at) {
  for (size_t d = shape.size(); d-- > 0;) {
    at[d] = i % shape[d];
    i /= shape[d];
  }
}

LogicalResult evalResize(Operation *op, llvm::ArrayRef<const Tensor *> operands,
                         llvm::MutableArrayRef<Tensor> results,
                         EvalContext &) {
  const Tensor &x = *operands[0];
  Tensor &y = results[0];
  ResizeGeometry g(cast<ResizeOp>(op), x.shape, y.shape);
  Shape inStrides = x.strides(), at(y.shape.size(), 0);
  for (int64_t i = 0; i < y.size(); ++i) {
    decode(i, y.shape, at);
    y.data[i] = blend(g, 0, at, inStrides, x.data);
  }
  return success();
}

LogicalResult evalResizeBackward(Operation *op,
                                 llvm::ArrayRef<const Tensor *> operands,
                                 llvm::MutableArrayRef<Tensor> results,
                                 EvalContext &) {
  const Tensor &grad = *operands[0];
  Tensor &dx = results[0];
  ResizeGeometry g(cast<ResizeBackwardOp>(op), dx.shape, grad.shape);
  Shape inStrides = dx.strides(), at(grad.shape.size(), 0);
  for (int64_t i = 0; i < grad.size(); ++i) {
    decode(i, grad.shape, at);
    forEachRead(g, 0, at, inStrides, 1.0, [&](int64_t flat, double w) {
      dx.data[flat] += w * grad.data[i];
    });
  }
  return success();
}

} // namespace

void registerResizeEvaluators(EvaluatorRegistry &registry) {
  registry.add<ResizeOp>(evalResize);
  registry.add<ResizeBackwardOp>(evalResizeBackward);
}

} // namespace mlir::kiln::ref
