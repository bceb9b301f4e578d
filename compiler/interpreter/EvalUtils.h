//===- EvalUtils.h - building blocks of the op evaluators --------*- C++
//-*-===//

#ifndef KILN_COMPILER_INTERPRETER_EVALUTILS_H
#define KILN_COMPILER_INTERPRETER_EVALUTILS_H

#include "compiler/interpreter/Interpreter.h"

#include <cmath>
#include <utility>

namespace mlir::kiln::ref {

/// An evaluator applying `fn(x)` to every element of operand 0.
template <typename Fn> Evaluator unaryEvaluator(Fn fn) {
  return [fn](Operation *, llvm::ArrayRef<const Tensor *> operands,
              llvm::MutableArrayRef<Tensor> results, EvalContext &) {
    const std::vector<double> &in = operands[0]->data;
    std::vector<double> &out = results[0].data;
    for (size_t i = 0, e = out.size(); i < e; ++i)
      out[i] = fn(in[i]);
    return success();
  };
}

/// An evaluator applying `fn(a, b)` with numpy broadcasting of operands 0, 1.
template <typename Fn> Evaluator binaryEvaluator(Fn fn) {
  return [fn](Operation *, llvm::ArrayRef<const Tensor *> operands,
              llvm::MutableArrayRef<Tensor> results, EvalContext &) {
    const Tensor &a = *operands[0], &b = *operands[1];
    Tensor &out = results[0];
    if (a.shape == out.shape && b.shape == out.shape) {
      for (size_t i = 0, e = out.data.size(); i < e; ++i)
        out.data[i] = fn(a.data[i], b.data[i]);
      return success();
    }
    std::array<Shape, 2> strides = {broadcastStrides(a.shape, out.shape),
                                    broadcastStrides(b.shape, out.shape)};
    forEachStrided<2>(out.shape, strides,
                      [&](int64_t i, const std::array<int64_t, 2> &in) {
                        out.data[i] = fn(a.data[in[0]], b.data[in[1]]);
                      });
    return success();
  };
}

/// Reduces `input` over `dims` into `output` (shaped with or without the
/// reduced dims), folding each group with `combine` from `init`; `finish`
/// maps (accumulator, group size) to the stored value.
template <typename Combine, typename Finish>
void reduceOver(const Tensor &input, llvm::ArrayRef<int64_t> dims,
                Tensor &output, double init, Combine combine, Finish finish) {
  // View the output as the input's shape with reduced dims of size 1, and walk
  // the input once, accumulating into the output element it maps to.
  Shape kept(input.shape);
  int64_t groupSize = 1;
  for (int64_t d : dims) {
    groupSize *= kept[d];
    kept[d] = 1;
  }
  std::vector<double> accumulators(output.data.size(), init);
  std::array<Shape, 1> strides = {broadcastStrides(kept, input.shape)};
  forEachStrided<1>(
      input.shape, strides, [&](int64_t i, const std::array<int64_t, 1> &out) {
        accumulators[out[0]] = combine(accumulators[out[0]], input.data[i]);
      });
  for (size_t i = 0; i < accumulators.size(); ++i)
    output.data[i] = finish(accumulators[i], groupSize);
}

/// Mean and 1/sqrt(biased variance + eps) of `count` contiguous values
/// (the variance in a second pass, around the mean).
inline std::pair<double, double> meanAndRstd(const double *x, int64_t count,
                                             double eps) {
  double sum = 0;
  for (int64_t j = 0; j < count; ++j)
    sum += x[j];
  double mean = sum / count, sq = 0;
  for (int64_t j = 0; j < count; ++j)
    sq += (x[j] - mean) * (x[j] - mean);
  return {mean, 1.0 / std::sqrt(sq / count + eps)};
}

} // namespace mlir::kiln::ref

#endif // KILN_COMPILER_INTERPRETER_EVALUTILS_H
