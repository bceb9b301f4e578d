// Initial values of parameters, shared by the runtime (which initialises the
// parameters of a loaded artifact) and the compiler's CPU reference, so both
// start from the same numbers.
//
// Random initialisers draw element i from RandomStream{seed, stream, 0}, where
// `stream` is the parameter's argument position in the loss function:
//   normal   a + b * Normal(i)                       (a = mean, b = std)
//   uniform  a + (b - a) * Uniform(i)                (a = low, b = high)
//   xavier   g * sqrt(6 / (fan_in + fan_out)) * (2 * Uniform(i) - 1)   (g = a)
//   kaiming  a / sqrt(fan_in) * Normal(i)            (a = gain)
// computed in double; callers round once to the storage type (an f32 master
// copy of a bf16 parameter rounds the same double to f32).
//
// Fans: rank <= 1: both are the element count; rank 2 [in, out]: fan_in = in,
// fan_out = out (kiln's matmul convention x @ W); rank >= 3 [O, I, k...]:
// fan_in = I * prod(k), fan_out = O * prod(k).

#ifndef KILN_RUNTIME_RANDOM_INITIALIZERS_H_
#define KILN_RUNTIME_RANDOM_INITIALIZERS_H_

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace kiln {

enum class InitKind : uint8_t {
  kZeros = 0,
  kOnes = 1,
  kConstant = 2,
  kNormal = 3,
  kUniform = 4,
  kXavier = 5,
  kKaiming = 6,
};

std::pair<int64_t, int64_t> Fans(const std::vector<int64_t>& shape);

// The unrounded initial values of a parameter of `shape`; `a` and `b` are the
// initialiser's two values as above (constant: a is the value).
std::vector<double> InitialValues(InitKind kind, double a, double b,
                                  const std::vector<int64_t>& shape,
                                  uint64_t seed, uint32_t stream);

// Elements [begin, begin + count) of the same values, for a parameter too
// large to hold as doubles at once (each element depends only on its index).
std::vector<double> InitialValues(InitKind kind, double a, double b,
                                  const std::vector<int64_t>& shape,
                                  uint64_t seed, uint32_t stream, size_t begin,
                                  size_t count);

}  // namespace kiln

#endif  // KILN_RUNTIME_RANDOM_INITIALIZERS_H_
