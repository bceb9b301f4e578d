// The random numbers of kiln's random ops, dropout and initialisers. The
// generator is counter based (Salmon et al., "Parallel random numbers: as easy
// as 1, 2, 3", SC'11), so element i of a random tensor is a pure function of
// (seed, stream, offset, i): the CPU reference and the GPU kernels compute the
// same bits independently, in any order.
//
// Scheme (the GPU kernels follow it exactly):
//   key     = (seed & 0xffffffff, seed >> 32)
//   counter = (low32(i / 4), stream, offset, high32(i / 4))
//   word    = lane i % 4 of Philox4x32-10(key, counter)
//   uniform = (word >> 8) * 2^-24            in [0, 1), exact in f32
//   normal  = Box-Muller on the uniforms of lanes (2j, 2j + 1) of element
//             i's block, j = (i % 4) / 2:
//             u1 = ((w_2j >> 8) + 1) * 2^-24 (in (0, 1]),
//             u2 = (w_2j+1 >> 8) * 2^-24,
//             r = sqrt(-2 ln u1); lane 2j gets r cos(2 pi u2),
//             lane 2j + 1 gets r sin(2 pi u2).

#ifndef KILN_RUNTIME_RANDOM_PHILOX_H_
#define KILN_RUNTIME_RANDOM_PHILOX_H_

#include <array>
#include <cstdint>

namespace kiln {

using PhiloxBlock = std::array<uint32_t, 4>;

/// Ten rounds of Philox4x32 on `counter` under `key`.
PhiloxBlock Philox4x32_10(PhiloxBlock counter, std::array<uint32_t, 2> key);

/// Where a random tensor's numbers come from.
struct RandomStream {
  uint64_t seed = 0;
  uint32_t stream = 0;
  uint32_t offset = 0;

  /// The 32-bit word of flat element `index`.
  uint32_t Word(uint64_t index) const;
  /// Uniform in [0, 1) for flat element `index`.
  double Uniform(uint64_t index) const;
  /// Standard normal for flat element `index`.
  double Normal(uint64_t index) const;
};

}  // namespace kiln

#endif  // KILN_RUNTIME_RANDOM_PHILOX_H_
