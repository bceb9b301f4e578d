//===- Initializers.cpp - parameter initial values ------------------------===//

#include "compiler/interpreter/Initializers.h"

#include "compiler/interpreter/Philox.h"

#include <cmath>

namespace mlir::kiln::ref {

std::pair<int64_t, int64_t> fans(llvm::ArrayRef<int64_t> shape) {
  if (shape.size() <= 1) {
    int64_t n = numElements(shape);
    return {n, n};
  }
  if (shape.size() == 2)
    return {shape[0], shape[1]};
  int64_t receptive = numElements(shape.drop_front(2));
  return {shape[1] * receptive, shape[0] * receptive};
}

std::vector<double> initialValues(InitAttr init, llvm::ArrayRef<int64_t> shape,
                                  uint64_t seed, uint32_t stream) {
  size_t n = static_cast<size_t>(numElements(shape));
  std::vector<double> values(n);
  RandomStream random{seed, stream, 0};
  double first = init.getFirstValue(), second = init.getSecondValue();
  auto [fanIn, fanOut] = fans(shape);
  switch (init.getKind()) {
  case InitKind::zeros:
    break;
  case InitKind::ones:
    std::fill(values.begin(), values.end(), 1.0);
    break;
  case InitKind::constant:
    std::fill(values.begin(), values.end(), first);
    break;
  case InitKind::normal:
    for (size_t i = 0; i < n; ++i)
      values[i] = first + second * random.normal(i);
    break;
  case InitKind::uniform:
    for (size_t i = 0; i < n; ++i)
      values[i] = first + (second - first) * random.uniform(i);
    break;
  case InitKind::xavier: {
    double bound = first * std::sqrt(6.0 / double(fanIn + fanOut));
    for (size_t i = 0; i < n; ++i)
      values[i] = bound * (2.0 * random.uniform(i) - 1.0);
    break;
  }
  case InitKind::kaiming: {
    double std = first / std::sqrt(double(fanIn));
    for (size_t i = 0; i < n; ++i)
      values[i] = std * random.normal(i);
    break;
  }
  }
  return values;
}

} // namespace mlir::kiln::ref
