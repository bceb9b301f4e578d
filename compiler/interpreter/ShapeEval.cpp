//===- ShapeEval.cpp - evaluators of shape ops, reductions and matmul -----===//
//
// Layout ops (reshape, broadcast_to, transpose, slice, concat, pad, flip) are
// strided copies: each builds the input strides that read the result in
// row-major order and walks them with forEachStrided. Reductions fold with
// reduceOver. matmul packs its operands into row-major [M, K] and [K, N]
// matrices and runs an i-k-j loop whose inner loop is contiguous.
//
//===----------------------------------------------------------------------===//

#include "compiler/interpreter/EvalUtils.h"

#include "dialects/kiln/IR/KilnDialect.h"

#include <cmath>
#include <limits>

namespace mlir::kiln::ref {

/// Reshape is a copy of the row-major data under another shape.
static LogicalResult evalReshape(Operation *,
                                 llvm::ArrayRef<const Tensor *> operands,
                                 llvm::MutableArrayRef<Tensor> results,
                                 EvalContext &) {
  results[0].data = operands[0]->data;
  return success();
}

/// Copies `in` into `out` reading element `offset + sum_d j_d * strides[d]`
/// for result index `j`.
static void stridedCopy(const Tensor &in, Tensor &out, int64_t offset,
                        const Shape &strides) {
  std::array<Shape, 1> inStrides = {strides};
  const double *src = in.data.data() + offset;
  double *dst = out.data.data();
  forEachStrided<1>(out.shape, inStrides,
                    [&](int64_t i, const std::array<int64_t, 1> &from) {
                      dst[i] = src[from[0]];
                    });
}

static LogicalResult evalBroadcastTo(Operation *,
                                     llvm::ArrayRef<const Tensor *> operands,
                                     llvm::MutableArrayRef<Tensor> results,
                                     EvalContext &) {
  const Tensor &in = *operands[0];
  stridedCopy(in, results[0], 0, broadcastStrides(in.shape, results[0].shape));
  return success();
}

/// Result dimension k walks input dimension perm[k].
static LogicalResult evalTranspose(Operation *op,
                                   llvm::ArrayRef<const Tensor *> operands,
                                   llvm::MutableArrayRef<Tensor> results,
                                   EvalContext &) {
  const Tensor &in = *operands[0];
  llvm::ArrayRef<int64_t> perm = cast<TransposeOp>(op).getPerm();
  Shape own = in.strides(), strides(perm.size());
  for (size_t k = 0; k < perm.size(); ++k)
    strides[k] = own[perm[k]];
  stridedCopy(in, results[0], 0, strides);
  return success();
}

/// Result index j reads input index start + j * step.
static LogicalResult evalSlice(Operation *op,
                               llvm::ArrayRef<const Tensor *> operands,
                               llvm::MutableArrayRef<Tensor> results,
                               EvalContext &) {
  auto slice = cast<SliceOp>(op);
  const Tensor &in = *operands[0];
  llvm::ArrayRef<int64_t> start = slice.getStart(), step = slice.getStep();
  Shape strides = in.strides();
  int64_t offset = 0;
  for (size_t d = 0; d < strides.size(); ++d) {
    offset += start[d] * strides[d];
    strides[d] *= step[d];
  }
  if (results[0].size() > 0)
    stridedCopy(in, results[0], offset, strides);
  return success();
}

/// A flipped dimension starts at its last index and walks backwards.
static LogicalResult evalFlip(Operation *op,
                              llvm::ArrayRef<const Tensor *> operands,
                              llvm::MutableArrayRef<Tensor> results,
                              EvalContext &) {
  const Tensor &in = *operands[0];
  Shape strides = in.strides();
  int64_t offset = 0;
  for (int64_t d : cast<FlipOp>(op).getDims()) {
    if (in.shape[d] == 0)
      return success();
    offset += (in.shape[d] - 1) * strides[d];
    strides[d] = -strides[d];
  }
  stridedCopy(in, results[0], offset, strides);
  return success();
}

/// Views a tensor of `shape` as [outer, size(dim), inner] around `dim`.
static void splitAround(llvm::ArrayRef<int64_t> shape, int64_t dim,
                        int64_t &outer, int64_t &inner) {
  outer = numElements(shape.take_front(dim));
  inner = numElements(shape.drop_front(dim + 1));
}

/// Each input fills a [size_n * inner] block of every outer row.
static LogicalResult evalConcat(Operation *op,
                                llvm::ArrayRef<const Tensor *> operands,
                                llvm::MutableArrayRef<Tensor> results,
                                EvalContext &) {
  Tensor &out = results[0];
  int64_t dim = cast<ConcatOp>(op).getDim(), outer, inner;
  splitAround(out.shape, dim, outer, inner);
  int64_t outRow = out.shape[dim] * inner, column = 0;
  for (const Tensor *in : operands) {
    int64_t inRow = in->shape[dim] * inner;
    for (int64_t o = 0; o < outer; ++o) {
      const double *src = in->data.data() + o * inRow;
      double *dst = out.data.data() + o * outRow + column;
      std::copy(src, src + inRow, dst);
    }
    column += inRow;
  }
  return success();
}

/// Fills the result with `value` (converted to the element type, as the op
/// documents) and copies the input to offset `low`.
static LogicalResult evalPad(Operation *op,
                             llvm::ArrayRef<const Tensor *> operands,
                             llvm::MutableArrayRef<Tensor> results,
                             EvalContext &) {
  auto pad = cast<PadOp>(op);
  const Tensor &in = *operands[0];
  Tensor &out = results[0];
  double value = roundToStorage(pad.getValue().convertToDouble(), out.kind,
                                Precision::F32);
  std::fill(out.data.begin(), out.data.end(), value);
  if (in.size() == 0)
    return success();
  Shape outStrides = out.strides();
  int64_t offset = 0;
  for (size_t d = 0; d < outStrides.size(); ++d)
    offset += pad.getLow()[d] * outStrides[d];
  // Walk the input in row-major order; its index maps to out strides.
  std::array<Shape, 1> strides = {outStrides};
  double *dst = out.data.data() + offset;
  const double *src = in.data.data();
  forEachStrided<1>(in.shape, strides,
                    [&](int64_t i, const std::array<int64_t, 1> &to) {
                      dst[to[0]] = src[i];
                    });
  return success();
}

/// Keeps result[..., i, j] where keep(j - i), else 0.
template <typename Keep>
static LogicalResult evalTriangular(llvm::ArrayRef<const Tensor *> operands,
                                    llvm::MutableArrayRef<Tensor> results,
                                    Keep keep) {
  const Tensor &in = *operands[0];
  Tensor &out = results[0];
  int64_t rows = in.shape[in.rank() - 2], cols = in.shape[in.rank() - 1];
  int64_t matrices = rows * cols == 0 ? 0 : in.size() / (rows * cols);
  for (int64_t b = 0; b < matrices; ++b)
    for (int64_t i = 0; i < rows; ++i) {
      int64_t base = (b * rows + i) * cols;
      for (int64_t j = 0; j < cols; ++j)
        out.data[base + j] = keep(j - i) ? in.data[base + j] : 0.0;
    }
  return success();
}

/// max/min folding that makes any NaN in the group the result.
template <typename Pick> static auto nanPropagating(Pick pick) {
  return [pick](double acc, double x) {
    if (std::isnan(acc) || std::isnan(x))
      return std::numeric_limits<double>::quiet_NaN();
    return pick(acc, x);
  };
}

/// Index of the largest element along `dim`: first index on ties, the first
/// NaN beats every number.
static LogicalResult evalArgmax(Operation *op,
                                llvm::ArrayRef<const Tensor *> operands,
                                llvm::MutableArrayRef<Tensor> results,
                                EvalContext &) {
  const Tensor &in = *operands[0];
  Tensor &out = results[0];
  int64_t dim = cast<ArgmaxOp>(op).getDim(), outer, inner;
  splitAround(in.shape, dim, outer, inner);
  int64_t size = in.shape[dim];
  if (size == 0)
    return success();
  // Scan the reduced dimension in the outer loop so that the inner loop over
  // the kept trailing elements is contiguous.
  std::vector<double> best(inner);
  for (int64_t o = 0; o < outer; ++o) {
    const double *row = in.data.data() + o * size * inner;
    double *index = out.data.data() + o * inner;
    std::copy(row, row + inner, best.begin());
    std::fill(index, index + inner, 0.0);
    for (int64_t k = 1; k < size; ++k) {
      const double *x = row + k * inner;
      for (int64_t i = 0; i < inner; ++i) {
        if (std::isnan(best[i]))
          continue;
        if (x[i] > best[i] || std::isnan(x[i])) {
          best[i] = x[i];
          index[i] = static_cast<double>(k);
        }
      }
    }
  }
  return success();
}

/// C[M, N] += A[M, K] B[K, N], all row-major: i-k-j order, so the inner
/// loop streams a row of B into a row of C (contiguous, vectorizable). The
/// kernel dominates the interpreter's training steps, so it is compiled
/// optimized even in unoptimized builds (GCC's optimize attribute).
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("O3")))
#endif
static void
multiplyAccumulate(const double *__restrict a, const double *__restrict b,
                   double *__restrict c, int64_t m, int64_t k, int64_t n) {
  for (int64_t i = 0; i < m; ++i) {
    double *cRow = c + i * n;
    const double *aRow = a + i * k;
    for (int64_t p = 0; p < k; ++p) {
      double scale = aRow[p];
      const double *bRow = b + p * n;
      for (int64_t j = 0; j < n; ++j)
        cRow[j] += scale * bRow[j];
    }
  }
}

/// Batched matmul. Each batch element of the result reads the lhs and rhs
/// matrices at its broadcast batch position; the operand matrices are packed
/// into row-major A [M, K] and B [K, N] (transposes resolved, reused while
/// the same matrix is read again), then
///   C[i, :] += A[i, k] * B[k, :]
/// with a contiguous inner loop. Accumulation is in double; the driver
/// rounds the result once to the element type in f32 mode.
static LogicalResult evalMatmul(Operation *op,
                                llvm::ArrayRef<const Tensor *> operands,
                                llvm::MutableArrayRef<Tensor> results,
                                EvalContext &) {
  auto matmul = cast<MatmulOp>(op);
  const Tensor &lhs = *operands[0], &rhs = *operands[1];
  Tensor &out = results[0];
  bool transposeLhs = matmul.getTransposeLhs();
  bool transposeRhs = matmul.getTransposeRhs();
  int64_t lr = lhs.rank(), orank = out.rank();
  int64_t m = out.shape[orank - 2], n = out.shape[orank - 1];
  int64_t k = transposeLhs ? lhs.shape[lr - 2] : lhs.shape[lr - 1];
  if (out.size() == 0)
    return success();

  // Batch positions, counted in matrices.
  llvm::ArrayRef<int64_t> outBatch =
      llvm::ArrayRef<int64_t>(out.shape).drop_back(2);
  std::array<Shape, 2> batchStrides = {
      broadcastStrides(llvm::ArrayRef<int64_t>(lhs.shape).drop_back(2),
                       outBatch),
      broadcastStrides(llvm::ArrayRef<int64_t>(rhs.shape).drop_back(2),
                       outBatch)};

  std::vector<double> packedA, packedB;
  int64_t packedAIndex = -1, packedBIndex = -1;
  forEachStrided<2>(outBatch, batchStrides,
                    [&](int64_t batch, const std::array<int64_t, 2> &from) {
                      const double *a = lhs.data.data() + from[0] * m * k;
                      if (transposeLhs) { // stored [K, M]
                        if (packedAIndex != from[0]) {
                          packedA.resize(m * k);
                          for (int64_t p = 0; p < k; ++p)
                            for (int64_t i = 0; i < m; ++i)
                              packedA[i * k + p] = a[p * m + i];
                          packedAIndex = from[0];
                        }
                        a = packedA.data();
                      }
                      const double *b = rhs.data.data() + from[1] * k * n;
                      if (transposeRhs) { // stored [N, K]
                        if (packedBIndex != from[1]) {
                          packedB.resize(k * n);
                          for (int64_t j = 0; j < n; ++j)
                            for (int64_t p = 0; p < k; ++p)
                              packedB[p * n + j] = b[j * k + p];
                          packedBIndex = from[1];
                        }
                        b = packedB.data();
                      }
                      multiplyAccumulate(a, b, out.data.data() + batch * m * n,
                                         m, k, n);
                    });
  return success();
}

void registerShapeEvaluators(EvaluatorRegistry &registry) {
  registry.add<ReshapeOp>(evalReshape);
  registry.add<BroadcastToOp>(evalBroadcastTo);
  registry.add<TransposeOp>(evalTranspose);
  registry.add<SliceOp>(evalSlice);
  registry.add<ConcatOp>(evalConcat);
  registry.add<PadOp>(evalPad);
  registry.add<FlipOp>(evalFlip);
  registry.add<TriuOp>(
      [](Operation *op, llvm::ArrayRef<const Tensor *> operands,
         llvm::MutableArrayRef<Tensor> results, EvalContext &) {
        int64_t diagonal = cast<TriuOp>(op).getDiagonal();
        return evalTriangular(operands, results,
                              [diagonal](int64_t d) { return d >= diagonal; });
      });
  registry.add<TrilOp>(
      [](Operation *op, llvm::ArrayRef<const Tensor *> operands,
         llvm::MutableArrayRef<Tensor> results, EvalContext &) {
        int64_t diagonal = cast<TrilOp>(op).getDiagonal();
        return evalTriangular(operands, results,
                              [diagonal](int64_t d) { return d <= diagonal; });
      });
  registry.add<ReduceSumOp>(
      [](Operation *op, llvm::ArrayRef<const Tensor *> operands,
         llvm::MutableArrayRef<Tensor> results, EvalContext &) {
        reduceOver(
            *operands[0], cast<ReduceSumOp>(op).getDims(), results[0], 0.0,
            [](double acc, double x) { return acc + x; },
            [](double acc, int64_t) { return acc; });
        return success();
      });
  registry.add<ReduceMeanOp>(
      [](Operation *op, llvm::ArrayRef<const Tensor *> operands,
         llvm::MutableArrayRef<Tensor> results, EvalContext &) {
        reduceOver(
            *operands[0], cast<ReduceMeanOp>(op).getDims(), results[0], 0.0,
            [](double acc, double x) { return acc + x; },
            [](double acc, int64_t size) { return acc / double(size); });
        return success();
      });
  registry.add<ReduceMaxOp>(
      [](Operation *op, llvm::ArrayRef<const Tensor *> operands,
         llvm::MutableArrayRef<Tensor> results, EvalContext &) {
        reduceOver(
            *operands[0], cast<ReduceMaxOp>(op).getDims(), results[0],
            -std::numeric_limits<double>::infinity(),
            nanPropagating([](double a, double b) { return std::max(a, b); }),
            [](double acc, int64_t) { return acc; });
        return success();
      });
  registry.add<ReduceMinOp>(
      [](Operation *op, llvm::ArrayRef<const Tensor *> operands,
         llvm::MutableArrayRef<Tensor> results, EvalContext &) {
        reduceOver(
            *operands[0], cast<ReduceMinOp>(op).getDims(), results[0],
            std::numeric_limits<double>::infinity(),
            nanPropagating([](double a, double b) { return std::min(a, b); }),
            [](double acc, int64_t) { return acc; });
        return success();
      });
  registry.add<ArgmaxOp>(evalArgmax);
  registry.add<MatmulOp>(evalMatmul);
}

} // namespace mlir::kiln::ref
