#include "runtime/random/initializers.h"

#include <algorithm>
#include <cmath>

#include "runtime/random/philox.h"

namespace kiln {

namespace {
int64_t Product(std::vector<int64_t>::const_iterator begin,
                std::vector<int64_t>::const_iterator end) {
  int64_t n = 1;
  for (auto it = begin; it != end; ++it) n *= *it;
  return n;
}
}  // namespace

std::pair<int64_t, int64_t> Fans(const std::vector<int64_t>& shape) {
  if (shape.size() <= 1) {
    int64_t n = Product(shape.begin(), shape.end());
    return {n, n};
  }
  if (shape.size() == 2) return {shape[0], shape[1]};
  int64_t receptive = Product(shape.begin() + 2, shape.end());
  return {shape[1] * receptive, shape[0] * receptive};
}

std::vector<double> InitialValues(InitKind kind, double a, double b,
                                  const std::vector<int64_t>& shape,
                                  uint64_t seed, uint32_t stream) {
  const size_t n = static_cast<size_t>(Product(shape.begin(), shape.end()));
  return InitialValues(kind, a, b, shape, seed, stream, 0, n);
}

std::vector<double> InitialValues(InitKind kind, double a, double b,
                                  const std::vector<int64_t>& shape,
                                  uint64_t seed, uint32_t stream, size_t begin,
                                  size_t count) {
  std::vector<double> values(count, 0.0);
  RandomStream random{seed, stream, 0};
  auto [fan_in, fan_out] = Fans(shape);
  switch (kind) {
    case InitKind::kZeros:
      break;
    case InitKind::kOnes:
      std::fill(values.begin(), values.end(), 1.0);
      break;
    case InitKind::kConstant:
      std::fill(values.begin(), values.end(), a);
      break;
    case InitKind::kNormal:
      for (size_t i = 0; i < count; ++i)
        values[i] = a + b * random.Normal(begin + i);
      break;
    case InitKind::kUniform:
      for (size_t i = 0; i < count; ++i)
        values[i] = a + (b - a) * random.Uniform(begin + i);
      break;
    case InitKind::kXavier: {
      double bound = a * std::sqrt(6.0 / static_cast<double>(fan_in + fan_out));
      for (size_t i = 0; i < count; ++i)
        values[i] = bound * (2.0 * random.Uniform(begin + i) - 1.0);
      break;
    }
    case InitKind::kKaiming: {
      double std = a / std::sqrt(static_cast<double>(fan_in));
      for (size_t i = 0; i < count; ++i)
        values[i] = std * random.Normal(begin + i);
      break;
    }
  }
  return values;
}

}  // namespace kiln
