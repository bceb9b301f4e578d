//===- rnn_cells.cuh - the pointwise equations of kiln.rnn's cells --------===//
//
// One (batch row, unit) element of one step, in f32, forward and backward,
// exactly as kiln.rnn and kiln.rnn_backward define them (and the CPU
// reference, compiler/interpreter/RnnEval.cpp, evaluates them): `x` is the
// input projection of each Wx gate, `rh` the recurrent product R_g h of each
// R gate, `b` the bias of each bias gate, `s` the states before the step
// (h, c, n, m as the function has them).
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/fast_math.cuh"
#include "kiln/prelude.cuh"
#include "kiln/rnn_layout.cuh"

namespace kiln {
namespace rnn {

// The cell's transcendental functions: exact to f32's last bits, or (FAST,
// for bf16 and f16 storage, whose rounding is 2^-9 and 2^-11) the hardware
// approximations, tanh.approx (2^-11 relative) and ex2.approx.
template <bool FAST> struct cell_math {
  static __device__ __forceinline__ float tanh(float x) {
    if constexpr (FAST) {
      return fast_tanh(x);
    } else {
      return tanhf(x);
    }
  }
  static __device__ __forceinline__ float sigmoid(float x) {
    if constexpr (FAST)
      return fmaf(0.5f, tanh(0.5f * x), 0.5f);
    else
      return kiln_sigmoid(x);
  }
  static __device__ __forceinline__ float exp(float x) {
    if constexpr (FAST)
      return __expf(x);
    else
      return expf(x);
  }
  // log σ(x) = min(x, 0) - log(1 + exp(-|x|)).
  static __device__ __forceinline__ float log_sigmoid(float x) {
    if constexpr (FAST)
      return fminf(x, 0.f) - __logf(1.f + __expf(-fabsf(x)));
    else
      return x >= 0.f ? -log1pf(expf(-x)) : x - log1pf(expf(x));
  }
  static __device__ __forceinline__ float divide(float a, float b) {
    if constexpr (FAST)
      return __fdividef(a, b);
    else
      return a / b;
  }
};

// The states after the step, over `s`.
template <int F, bool FAST>
__device__ __forceinline__ void cell_forward(const float *x, const float *rh,
                                             const float *b, float *s) {
  typedef cell_math<FAST> M;
  if constexpr (F == kLstm) {
    const float gi = M::sigmoid(x[0] + rh[0] + b[0]);
    const float gf = M::sigmoid(x[1] + rh[1] + b[1]);
    const float gz = M::tanh(x[2] + rh[2] + b[2]);
    const float go = M::sigmoid(x[3] + rh[3] + b[3]);
    const float c = gf * s[1] + gi * gz;
    s[0] = go * M::tanh(c);
    s[1] = c;
  } else if constexpr (F == kSlstm) {
    const float i_tilde = x[0] + rh[0] + b[0];
    const float log_f = M::log_sigmoid(x[1] + rh[1] + b[1]);
    const float gz = M::tanh(x[2] + rh[2] + b[2]);
    const float go = M::sigmoid(x[3] + rh[3] + b[3]);
    const float m = fmaxf(i_tilde, log_f + s[3]);
    const float gi = M::exp(i_tilde - m);
    const float gf = M::exp(log_f + s[3] - m);
    const float c = gf * s[1] + gi * gz;
    const float n = gf * s[2] + gi;
    s[0] = M::divide(go * c, n);
    s[1] = c;
    s[2] = n;
    s[3] = m;
  } else if constexpr (F == kGru) {
    const float g0 = rh[0] + b[0];
    const float r = M::sigmoid(x[0] + rh[1] + b[1]);
    const float z = M::sigmoid(x[1] + rh[2] + b[2]);
    const float candidate = M::tanh(x[2] + b[3] + r * g0);
    s[0] = z * s[0] + (1.f - z) * candidate;
  } else {
    s[0] = M::tanh(x[0] + rh[0] + b[0]);
  }
}

// Chain rule through the step given `d_next`, the gradient of the states
// after it: the gradients of each Wx gate (`dx`), of each recurrent product
// (`drh`) and of the states before the step without the path through R h
// (`d_prev`). The bias gradients are the ones of the terms they are added
// to: drh[g] for lstm, slstm and elman; for gru b0 -> drh[0], b1 -> dx[0],
// b2 -> dx[1], b3 -> dx[2].
template <int F, bool FAST>
__device__ __forceinline__ void
cell_backward(const float *x, const float *rh, const float *b, const float *s,
              const float *d_next, float *dx, float *drh, float *d_prev) {
  typedef cell_math<FAST> M;
  if constexpr (F == kLstm) {
    const float gi = M::sigmoid(x[0] + rh[0] + b[0]);
    const float gf = M::sigmoid(x[1] + rh[1] + b[1]);
    const float gz = M::tanh(x[2] + rh[2] + b[2]);
    const float go = M::sigmoid(x[3] + rh[3] + b[3]);
    const float c = gf * s[1] + gi * gz;
    const float tc = M::tanh(c);
    const float dc = d_next[1] + d_next[0] * go * (1.f - tc * tc);
    dx[0] = drh[0] = dc * gz * gi * (1.f - gi);
    dx[1] = drh[1] = dc * s[1] * gf * (1.f - gf);
    dx[2] = drh[2] = dc * gi * (1.f - gz * gz);
    dx[3] = drh[3] = d_next[0] * tc * go * (1.f - go);
    d_prev[0] = 0.f;
    d_prev[1] = dc * gf;
  } else if constexpr (F == kSlstm) {
    const float i_tilde = x[0] + rh[0] + b[0];
    const float f_tilde = x[1] + rh[1] + b[1];
    const float log_f = M::log_sigmoid(f_tilde);
    const float gz = M::tanh(x[2] + rh[2] + b[2]);
    const float go = M::sigmoid(x[3] + rh[3] + b[3]);
    const bool input_wins = i_tilde >= log_f + s[3];
    const float m = input_wins ? i_tilde : log_f + s[3];
    const float gi = M::exp(i_tilde - m);
    const float gf = M::exp(log_f + s[3] - m);
    const float c = gf * s[1] + gi * gz;
    const float n = gf * s[2] + gi;
    const float dh = d_next[0];
    const float dc = d_next[1] + M::divide(dh * go, n);
    const float dn = d_next[2] - M::divide(dh * go * c, n * n);
    const float d_gate_i = dc * gz + dn;
    const float d_gate_f = dc * s[1] + dn * s[2];
    const float dm = d_next[3] - d_gate_i * gi - d_gate_f * gf;
    const float d_i_tilde = d_gate_i * gi + (input_wins ? dm : 0.f);
    const float d_log_f = d_gate_f * gf + (input_wins ? 0.f : dm);
    dx[0] = drh[0] = d_i_tilde;
    dx[1] = drh[1] = d_log_f * (1.f - M::sigmoid(f_tilde));
    dx[2] = drh[2] = dc * gi * (1.f - gz * gz);
    dx[3] = drh[3] = dh * M::divide(c, n) * go * (1.f - go);
    d_prev[0] = 0.f;
    d_prev[1] = dc * gf;
    d_prev[2] = dn * gf;
    d_prev[3] = d_log_f;
  } else if constexpr (F == kGru) {
    const float g0 = rh[0] + b[0];
    const float r = M::sigmoid(x[0] + rh[1] + b[1]);
    const float z = M::sigmoid(x[1] + rh[2] + b[2]);
    const float candidate = M::tanh(x[2] + b[3] + r * g0);
    const float dh = d_next[0];
    const float d_candidate = dh * (1.f - z) * (1.f - candidate * candidate);
    const float dz = dh * (s[0] - candidate) * z * (1.f - z);
    const float dr = d_candidate * g0 * r * (1.f - r);
    dx[0] = dr;
    dx[1] = dz;
    dx[2] = d_candidate;
    drh[0] = d_candidate * r;
    drh[1] = dr;
    drh[2] = dz;
    d_prev[0] = dh * z;
  } else {
    const float h = M::tanh(x[0] + rh[0] + b[0]);
    dx[0] = drh[0] = d_next[0] * (1.f - h * h);
    d_prev[0] = 0.f;
  }
}

} // namespace rnn
} // namespace kiln
