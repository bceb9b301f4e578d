// The row kernels of the one-pass attention backward (attention_dq_accum.cuh)
// run thread for thread on the CPU (emulation/host_cuda.h), launched as
// AttentionPlanner.cpp launches them (a warp per row, eight per block), on
// interleaved [B, T, H, D] bf16 tensors with a query count that ends inside
// a 64-row tile: delta must be the f64 row sum of dO * O within f32
// rounding, the log-sum-exp the forward's in the log2 domain (+inf past the
// queries and for a row that saw no key), every accumulator row zeroed,
// and dQ the accumulator times the scale rounded to bf16.

#include "kiln/attention_dq_accum.cuh"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace kiln::attention {
namespace {

namespace emu = ::kiln::emulation;

constexpr int kBatch = 2, kHeads = 3, kTq = 70, kD = 64, kStatsRows = 128;
constexpr int kStride = kD + 4;
constexpr float kScale = 0.125f;

struct Cfg {
  typedef __nv_bfloat16 elem_t;
  typedef int idx_t;
  static constexpr int tq = kTq, d = kD, dv = kD;
  static constexpr float scale = kScale;
  static constexpr int batch_heads = kBatch * kHeads, stats_rows = kStatsRows;
  static constexpr int dq_stride = kStride;
  static constexpr bool has_row_lse = true;
  // [B, T, H, D]: heads interleaved within each row.
  typedef strided<int, kHeads, kTq * kHeads * kD, kD, kHeads * kD> out_layout;
  typedef out_layout d_out_layout;
  typedef out_layout d_query_layout;
};

constexpr int kElements = kBatch * kTq * kHeads * kD;

size_t at(int bh, int q, int e) {
  const int b = bh / kHeads, h = bh % kHeads;
  return size_t(((b * kTq + q) * kHeads + h) * kD + e);
}

void runRows(long long rows, const std::function<void()> &kernel) {
  emu::launch(unsigned((rows + 7) / 8), 256, kernel);
}

TEST(AttentionDqAccumTest, PrepareRowsAndFinishDq) {
  std::mt19937 rng(20261205);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  std::vector<__nv_bfloat16> out(kElements), dOut(kElements);
  for (int i = 0; i < kElements; ++i) {
    out[size_t(i)] = __float2bfloat16_rn(uniform(rng));
    dOut[size_t(i)] = __float2bfloat16_rn(uniform(rng));
  }
  std::vector<float> given(size_t(kBatch * kHeads * kTq));
  for (float &v : given)
    v = 4.f * uniform(rng);
  given[5] = -INFINITY; // a row that sees no key
  const size_t statsRows = size_t(kBatch * kHeads * kStatsRows);
  std::vector<float> lse(statsRows, -1.f), delta(statsRows, -1.f);
  std::vector<float> accum(statsRows * kStride, 7.f);
  runRows(kBatch * kHeads * kStatsRows, [&] {
    backward_prep<Cfg>(this_launch(), out.data(), dOut.data(), given.data(),
                       lse.data(), delta.data(), accum.data());
  });
  for (int bh = 0; bh < kBatch * kHeads; ++bh)
    for (int q = 0; q < kStatsRows; ++q) {
      const size_t row = size_t(bh * kStatsRows + q);
      if (q >= kTq) {
        EXPECT_EQ(lse[row], INFINITY) << bh << " " << q;
        EXPECT_EQ(delta[row], 0.f) << bh << " " << q;
        continue;
      }
      double sum = 0, magnitude = 0;
      for (int e = 0; e < kD; ++e) {
        const double p = double(__bfloat162float(out[at(bh, q, e)])) *
                         __bfloat162float(dOut[at(bh, q, e)]);
        sum += p;
        magnitude += std::abs(p);
      }
      EXPECT_NEAR(delta[row], sum, 1e-6 * magnitude + 1e-7) << bh << " " << q;
      const float g = given[size_t(bh * kTq + q)];
      if (std::isinf(g))
        EXPECT_EQ(lse[row], INFINITY);
      else
        EXPECT_FLOAT_EQ(lse[row], g * 1.4426950408889634f) << bh << " " << q;
    }
  for (float v : accum)
    ASSERT_EQ(v, 0.f);

  // The one-pass kernel's sums, then the conversion.
  for (float &v : accum)
    v = 50.f * uniform(rng);
  std::vector<__nv_bfloat16> dq(kElements, __float2bfloat16_rn(-3.f));
  runRows(kBatch * kHeads * kTq, [&] {
    backward_dq_finish<Cfg>(this_launch(), accum.data(), dq.data());
  });
  for (int bh = 0; bh < kBatch * kHeads; ++bh)
    for (int q = 0; q < kTq; ++q)
      for (int e = 0; e < kD; ++e) {
        const float want = __bfloat162float(__float2bfloat16_rn(
            accum[size_t(bh * kStatsRows + q) * kStride + size_t(e)] * kScale));
        ASSERT_EQ(__bfloat162float(dq[at(bh, q, e)]), want)
            << bh << " " << q << " " << e;
      }
}

} // namespace
} // namespace kiln::attention
