#include "runtime/random/philox.h"

#include <cmath>

namespace kiln {

namespace {
constexpr uint32_t kMultiplier0 = 0xD2511F53;
constexpr uint32_t kMultiplier1 = 0xCD9E8D57;
constexpr uint32_t kWeyl0 = 0x9E3779B9;
constexpr uint32_t kWeyl1 = 0xBB67AE85;
constexpr double kTwoPow24Inv = 1.0 / 16777216.0;
}  // namespace

PhiloxBlock Philox4x32_10(PhiloxBlock counter, std::array<uint32_t, 2> key) {
  for (int round = 0; round < 10; ++round) {
    uint64_t product0 = uint64_t(kMultiplier0) * counter[0];
    uint64_t product1 = uint64_t(kMultiplier1) * counter[2];
    uint32_t hi0 = uint32_t(product0 >> 32), lo0 = uint32_t(product0);
    uint32_t hi1 = uint32_t(product1 >> 32), lo1 = uint32_t(product1);
    counter = {hi1 ^ counter[1] ^ key[0], lo1, hi0 ^ counter[3] ^ key[1], lo0};
    key[0] += kWeyl0;
    key[1] += kWeyl1;
  }
  return counter;
}

static PhiloxBlock BlockOf(const RandomStream &s, uint64_t index) {
  PhiloxBlock counter = {uint32_t(index / 4), s.stream, s.offset,
                         uint32_t((index / 4) >> 32)};
  return Philox4x32_10(counter, {uint32_t(s.seed), uint32_t(s.seed >> 32)});
}

uint32_t RandomStream::Word(uint64_t index) const {
  return BlockOf(*this, index)[index % 4];
}

double RandomStream::Uniform(uint64_t index) const {
  return double(Word(index) >> 8) * kTwoPow24Inv;
}

double RandomStream::Normal(uint64_t index) const {
  PhiloxBlock block = BlockOf(*this, index);
  unsigned pair = (index % 4) / 2;
  double u1 = double((block[2 * pair] >> 8) + 1) * kTwoPow24Inv;
  double u2 = double(block[2 * pair + 1] >> 8) * kTwoPow24Inv;
  double radius = std::sqrt(-2.0 * std::log(u1));
  double angle = 2.0 * M_PI * u2;
  return index % 2 == 0 ? radius * std::cos(angle) : radius * std::sin(angle);
}

}  // namespace kiln
