// The cells of rnn_cells.cuh on the CPU (emulation/host_cuda.h), with the
// exact transcendentals the f32 kernels use: each function's backward must
// be the derivative of its forward. For random inputs and a random
// gradient of the states after the step, the gradients cell_backward gives
// for every Wx gate, recurrent product, bias and state before the step are
// compared with central differences of <d_next, cell_forward(...)>. The
// bias gradients follow the mapping the bias kernel uses (gru: b0 from the
// product R_0 h, b1..b3 from the Wx gates).

#include "kiln/rnn_cells.cuh"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

namespace kiln::rnn {
namespace {

struct Inputs {
  float x[4] = {}, rh[4] = {}, b[4] = {}, s[4] = {};
};

template <int F> double objective(const Inputs &in, const float *d_next) {
  float s[4];
  std::copy(in.s, in.s + 4, s);
  cell_forward<F, false>(in.x, in.rh, in.b, s);
  double sum = 0;
  for (int i = 0; i < num_states(F); ++i)
    sum += double(d_next[i]) * s[i];
  return sum;
}

// d objective / d input i of `field` (0 x, 1 rh, 2 b, 3 s) by central
// differences.
template <int F>
double numeric(const Inputs &in, int field, int i, const float *d_next) {
  const float h = 1e-2f;
  Inputs up = in, down = in;
  auto member = [field](Inputs &v) {
    return field == 0 ? v.x : field == 1 ? v.rh : field == 2 ? v.b : v.s;
  };
  member(up)[i] += h;
  member(down)[i] -= h;
  return (objective<F>(up, d_next) - objective<F>(down, d_next)) / (2 * h);
}

template <int F> void checkCell(unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  for (int trial = 0; trial < 200; ++trial) {
    Inputs in;
    for (int g = 0; g < 4; ++g) {
      in.x[g] = normal(rng);
      in.rh[g] = normal(rng);
      in.b[g] = 0.3f * normal(rng);
      in.s[g] = normal(rng);
    }
    if (F == kSlstm) {
      // n > 0, as exponential gating keeps it; and away from the kink of
      // m' = max(ĩ, log σ(f̃) + m), where differences are not derivatives.
      in.s[2] = std::exp(0.5f * normal(rng));
      const float i_tilde = in.x[0] + in.rh[0] + in.b[0];
      const float f_tilde = in.x[1] + in.rh[1] + in.b[1];
      const float log_f = -std::log1p(std::exp(-f_tilde));
      if (std::fabs(i_tilde - (log_f + in.s[3])) < 0.1f)
        continue;
    }
    float d_next[4];
    for (float &v : d_next)
      v = normal(rng);
    float dx[4] = {}, drh[4] = {}, d_prev[4] = {};
    cell_backward<F, false>(in.x, in.rh, in.b, in.s, d_next, dx, drh, d_prev);
    // The gradient of the term each bias gate is added to.
    float db[4] = {};
    for (int g = 0; g < gates_b(F); ++g)
      db[g] = F == kGru ? (g == 0 ? drh[0] : dx[g - 1]) : drh[g];
    auto expect = [&](const char *what, int field, int i, float analytic) {
      const double fd = numeric<F>(in, field, i, d_next);
      EXPECT_NEAR(analytic, fd, 2e-3 * (1 + std::fabs(fd)))
          << "function " << F << " trial " << trial << " " << what << "[" << i
          << "]";
    };
    for (int g = 0; g < gates_w(F); ++g)
      expect("dx", 0, g, dx[g]);
    for (int g = 0; g < gates_r(F); ++g)
      expect("drh", 1, g, drh[g]);
    for (int g = 0; g < gates_b(F); ++g)
      expect("db", 2, g, db[g]);
    // The state h reaches the next step only through R h (the caller adds
    // that path), except in gru, whose update also takes h itself.
    for (int s = 0; s < num_states(F); ++s)
      expect("d_prev", 3, s, d_prev[s]);
  }
}

TEST(RnnCells, LstmBackwardIsTheDerivative) { checkCell<kLstm>(1); }
TEST(RnnCells, GruBackwardIsTheDerivative) { checkCell<kGru>(2); }
TEST(RnnCells, ElmanBackwardIsTheDerivative) { checkCell<kElman>(3); }
TEST(RnnCells, SlstmBackwardIsTheDerivative) { checkCell<kSlstm>(4); }

} // namespace
} // namespace kiln::rnn
