//===- batch_norm.cuh - batch_norm and batch_norm_backward ----------------===//
//
// Per-channel statistics over [outer, C, inner] (batch_norm_layout.cuh for
// the two modes), computed deterministically in two levels: every block of
// the partial kernel reduces its share with a fixed tree into one partial
// per column or channel (scratch), then one thread per channel combines the
// channel's partials in split order. No atomics: results are the same run
// to run.
//
// The mean and variance come from Welford's update within a thread and
// Chan's combination of (count, mean, sum of squared deviations) above it,
// over the channel's values shifted by its first element (so that the
// running mean stays small and precise in f32 even when the data's mean is
// large against its spread): no cancellation, as in the CPU reference's two
// passes.
//
// batch_norm:          stats_partial, stats_final (or eval_final), normalize
// batch_norm_backward: stats_partial, stats_final (mean, rstd), grad_partial,
//                      grad_final, input_grad
//
// The configuration (a struct derived from `config`) adds the constants
// eps, momentum and unbias (n / (n - 1)) as static constexpr floats.
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/batch_norm_layout.cuh"
#include "kiln/reduce_common.cuh"

namespace kiln {
namespace bn {

template <class Idx, long long Outer, long long C, long long Inner,
          long long Chunk>
struct config {
  using idx_t = Idx;
  static constexpr long long outer = Outer, channels = C, inner = Inner,
                             chunk = Chunk;
  static constexpr bool columns = column_mode(Inner);
  static constexpr long long width = C * Inner;
  static constexpr long long cols = columns ? column_tile(width) : 1;
  static constexpr long long lanes = kThreads / cols;
  static constexpr long long length = split_length(Outer, Inner);
  static constexpr long long splits = splits_of(Outer, C, Inner, Chunk);
  static constexpr long long per_split = partials_per_split(C, Inner);
  // Partials of one channel within a split: its columns, or itself.
  static constexpr long long sub = columns ? Inner : 1;
  // Elements per channel, and in all.
  static constexpr long long count = Outer * Inner;
  static constexpr long long elements = Outer * C * Inner;
  static constexpr float countf = (float)count;
};

// Count, mean and sum of squared deviations of the elements seen so far.
struct welford {
  float n, mean, m2;
  __device__ __forceinline__ void init() { n = 0.f, mean = 0.f, m2 = 0.f; }
  __device__ __forceinline__ void add(float x) {
    n += 1.f;
    const float d = x - mean;
    mean += d / n;
    // d and x - mean have one sign: m2 never decreases.
    m2 += d * (x - mean);
  }
  __device__ __forceinline__ void merge(const welford &b) {
    if (b.n == 0.f)
      return;
    if (n == 0.f) {
      *this = b;
      return;
    }
    const float t = n + b.n, d = b.mean - mean, w = b.n / t;
    mean += d * w;
    m2 += b.m2 + d * d * n * w;
    n = t;
  }
};

// Sums of grad and of grad * x-hat.
struct grad_sums {
  float g, gx;
  __device__ __forceinline__ void init() { g = 0.f, gx = 0.f; }
  __device__ __forceinline__ void merge(const grad_sums &b) {
    g += b.g;
    gx += b.gx;
  }
};

// What input_grad needs of a channel: dx = scale * (g - mg - xh * mgx),
// xh = (x - mean) * rstd.
struct dx_coef {
  float mean, rstd, scale, mg, mgx;
};

// This block's share of the reduction: each thread accumulates its
// elements (element(acc, offset, channel)), the block combines its lanes by
// a fixed tree, and lane 0 of each column stores the partial of (split,
// column or channel).
template <class Cfg, class Acc, class Element>
__device__ __forceinline__ void partial_reduce(const launch_ctx &ctx,
                                               const Element &element,
                                               Acc *__restrict__ partial) {
  using idx_t = typename Cfg::idx_t;
  constexpr int cols = (int)Cfg::cols, lanes = (int)Cfg::lanes;
  __shared__ Acc tile[lanes][cols];
  const int tx = (int)ctx.thread.x % cols, ty = (int)ctx.thread.x / cols;
  const idx_t r0 = (idx_t)ctx.block.y * (idx_t)Cfg::chunk;
  const idx_t r1 = min((idx_t)Cfg::length, r0 + (idx_t)Cfg::chunk);
  Acc acc;
  acc.init();
  bool active;
  idx_t target;
  if constexpr (Cfg::columns) {
    const idx_t j = (idx_t)ctx.block.x * cols + tx;
    active = j < (idx_t)Cfg::width;
    // Unrolled so that several rows' loads are in flight at once (the
    // accumulation order stays the rows' order).
    if (active)
#pragma unroll 8
      for (idx_t r = r0 + ty; r < r1; r += lanes)
        element(acc, r * (idx_t)Cfg::width + j, j / (idx_t)Cfg::inner);
    target = (idx_t)ctx.block.y * (idx_t)Cfg::width + j;
  } else {
    const idx_t c = (idx_t)ctx.block.x;
    constexpr idx_t inner = (idx_t)Cfg::inner;
    active = true;
#pragma unroll 8
    for (idx_t k = r0 + ty; k < r1; k += lanes)
      element(acc, (k / inner) * (idx_t)Cfg::width + c * inner + k % inner, c);
    target = (idx_t)ctx.block.y * (idx_t)Cfg::channels + c;
  }
  tile[ty][tx] = acc;
  __syncthreads();
#pragma unroll
  for (int s = lanes / 2; s > 0; s /= 2) {
    if (ty < s)
      tile[ty][tx].merge(tile[ty + s][tx]);
    __syncthreads();
  }
  if (ty == 0 && active)
    partial[target] = tile[0][tx];
}

// Channel c's partials combined in split order (and column order within a
// split).
template <class Cfg, class Acc>
__device__ __forceinline__ Acc combine_partials(typename Cfg::idx_t c,
                                                const Acc *__restrict__ partial) {
  using idx_t = typename Cfg::idx_t;
  Acc acc;
  acc.init();
  // Eight partials loaded ahead of their merges (which stay in order): one
  // load at a time, the chain of splits would wait on L2 for every one.
  constexpr int kAhead = 8;
  constexpr idx_t count = (idx_t)Cfg::splits * (idx_t)Cfg::sub;
  for (idx_t q = 0; q < count; q += kAhead) {
    Acc next[kAhead];
#pragma unroll
    for (int u = 0; u < kAhead; ++u) {
      const idx_t e = q + u, s = e / (idx_t)Cfg::sub, i = e % (idx_t)Cfg::sub;
      if (e < count)
        next[u] = partial[s * (idx_t)Cfg::per_split + c * (idx_t)Cfg::sub + i];
    }
#pragma unroll
    for (int u = 0; u < kAhead; ++u)
      if (q + u < count)
        acc.merge(next[u]);
  }
  return acc;
}

// The offset of channel c's first element, whose value shifts the channel's
// statistics.
template <class Cfg>
__device__ __forceinline__ typename Cfg::idx_t shift_offset(typename Cfg::idx_t c) {
  return c * (typename Cfg::idx_t)Cfg::inner;
}

template <class Cfg, class In>
__device__ __forceinline__ void stats_partial(const launch_ctx &ctx,
                                              const In *__restrict__ in,
                                              welford *__restrict__ partial) {
  using idx_t = typename Cfg::idx_t;
  // A thread's elements belong to one channel: its shift is read once.
  idx_t shifted = -1;
  float shift = 0.f;
  partial_reduce<Cfg, welford>(
      ctx,
      [&](welford &acc, idx_t off, idx_t c) {
        if (c != shifted) {
          shifted = c;
          shift = kiln_load(in[shift_offset<Cfg>(c)]);
        }
        acc.add(kiln_load(in[off]) - shift);
      },
      partial);
}

// The channel's statistics from the partials of `in`: `coef` gets (mean,
// gamma / sqrt(var + eps)), or (mean, 1 / sqrt(var + eps)) without gamma;
// the optional results get the batch mean, the biased variance and the
// updated running statistics. The running statistics may be updated in
// place (running_mean == new_mean): each thread reads its channel's before
// it writes them, so those pointers are not __restrict__.
template <class Cfg, class In, class Gm, class M, class V, class R>
__device__ __forceinline__ void
stats_final(const launch_ctx &ctx, const In *__restrict__ in,
            const welford *__restrict__ partial,
            const Gm *__restrict__ gamma, float2 *__restrict__ coef,
            M *__restrict__ mean_out, V *__restrict__ var_out,
            const R *running_mean, const R *running_var, R *new_mean,
            R *new_var) {
  using idx_t = typename Cfg::idx_t;
  const idx_t c = (idx_t)ctx.block.x * (idx_t)kThreads + ctx.thread.x;
  if (c >= (idx_t)Cfg::channels)
    return;
  const welford acc = combine_partials<Cfg>(c, partial);
  // Like the reference, no elements give NaN statistics.
  float mean = kiln_nan();
  if constexpr (Cfg::count > 0)
    mean = kiln_load(in[shift_offset<Cfg>(c)]) + acc.mean;
  const float var = acc.m2 / Cfg::countf;
  const float rstd = 1.f / sqrtf(var + Cfg::eps);
  coef[c] = make_float2(mean, gamma ? rstd * kiln_load(gamma[c]) : rstd);
  if (mean_out)
    kiln_store(mean_out + c, mean);
  if (var_out)
    kiln_store(var_out + c, var);
  if (new_mean)
    kiln_store(new_mean + c, (1.f - Cfg::momentum) * kiln_load(running_mean[c]) +
                                 Cfg::momentum * mean);
  if (new_var)
    kiln_store(new_var + c, (1.f - Cfg::momentum) * kiln_load(running_var[c]) +
                                Cfg::momentum * (var * Cfg::unbias));
}

// The eval form: normalisation with the running statistics, which are also
// the mean, variance and updated results.
template <class Cfg, class Gm, class M, class V, class R>
__device__ __forceinline__ void
eval_final(const launch_ctx &ctx, const Gm *__restrict__ gamma,
           float2 *__restrict__ coef, M *__restrict__ mean_out,
           V *__restrict__ var_out, const R *running_mean,
           const R *running_var, R *new_mean, R *new_var) {
  using idx_t = typename Cfg::idx_t;
  const idx_t c = (idx_t)ctx.block.x * (idx_t)kThreads + ctx.thread.x;
  if (c >= (idx_t)Cfg::channels)
    return;
  const float mean = kiln_load(running_mean[c]);
  const float var = kiln_load(running_var[c]);
  coef[c] = make_float2(mean, 1.f / sqrtf(var + Cfg::eps) * kiln_load(gamma[c]));
  if (mean_out)
    kiln_store(mean_out + c, mean);
  if (var_out)
    kiln_store(var_out + c, var);
  if (new_mean)
    kiln_store(new_mean + c, mean);
  if (new_var)
    kiln_store(new_var + c, var);
}

// The channel of element i.
template <class Cfg>
__device__ __forceinline__ typename Cfg::idx_t channel_of(typename Cfg::idx_t i) {
  using idx_t = typename Cfg::idx_t;
  return (i / (idx_t)Cfg::inner) % (idx_t)Cfg::channels;
}

// y = (x - mean) * scale + beta, grid-stride over every element.
template <class Cfg, class In, class Bs, class Out>
__device__ __forceinline__ void normalize(const launch_ctx &ctx,
                                          const In *__restrict__ in,
                                          const float2 *__restrict__ coef,
                                          const Bs *__restrict__ beta,
                                          Out *__restrict__ out) {
  using idx_t = typename Cfg::idx_t;
  const idx_t step = (idx_t)ctx.grid.x * (idx_t)kThreads;
  for (idx_t i = (idx_t)ctx.block.x * (idx_t)kThreads + ctx.thread.x;
       i < (idx_t)Cfg::elements; i += step) {
    const idx_t c = channel_of<Cfg>(i);
    const float2 k = coef[c];
    kiln_store(out + i, (kiln_load(in[i]) - k.x) * k.y + kiln_load(beta[c]));
  }
}

// Sums of grad and grad * x-hat, x-hat from the (mean, rstd) in `stats`.
template <class Cfg, class G, class In>
__device__ __forceinline__ void grad_partial(const launch_ctx &ctx,
                                             const G *__restrict__ grad,
                                             const In *__restrict__ in,
                                             const float2 *__restrict__ stats,
                                             grad_sums *__restrict__ partial) {
  using idx_t = typename Cfg::idx_t;
  partial_reduce<Cfg, grad_sums>(
      ctx,
      [&](grad_sums &acc, idx_t off, idx_t c) {
        const float2 st = stats[c];
        const float g = kiln_load(grad[off]);
        acc.g += g;
        acc.gx += g * ((kiln_load(in[off]) - st.x) * st.y);
      },
      partial);
}

// gamma_grad = sum(grad * xh), beta_grad = sum(grad) (each optional), and
// the coefficients of input_grad when `dx` is non-null.
template <class Cfg, class Gm, class DG, class DB>
__device__ __forceinline__ void
grad_final(const launch_ctx &ctx, const grad_sums *__restrict__ partial,
           const float2 *__restrict__ stats, const Gm *__restrict__ gamma,
           DG *__restrict__ gamma_grad, DB *__restrict__ beta_grad,
           dx_coef *__restrict__ dx) {
  using idx_t = typename Cfg::idx_t;
  const idx_t c = (idx_t)ctx.block.x * (idx_t)kThreads + ctx.thread.x;
  if (c >= (idx_t)Cfg::channels)
    return;
  const grad_sums acc = combine_partials<Cfg>(c, partial);
  if (gamma_grad)
    kiln_store(gamma_grad + c, acc.gx);
  if (beta_grad)
    kiln_store(beta_grad + c, acc.g);
  if (dx) {
    const float2 st = stats[c];
    dx[c] = dx_coef{st.x, st.y, kiln_load(gamma[c]) * st.y, acc.g / Cfg::countf,
                    acc.gx / Cfg::countf};
  }
}

// dx = gamma * rstd * (g - mean(g) - xh * mean(g * xh)).
template <class Cfg, class G, class In, class Out>
__device__ __forceinline__ void input_grad(const launch_ctx &ctx,
                                           const G *__restrict__ grad,
                                           const In *__restrict__ in,
                                           const dx_coef *__restrict__ coef,
                                           Out *__restrict__ out) {
  using idx_t = typename Cfg::idx_t;
  const idx_t step = (idx_t)ctx.grid.x * (idx_t)kThreads;
  for (idx_t i = (idx_t)ctx.block.x * (idx_t)kThreads + ctx.thread.x;
       i < (idx_t)Cfg::elements; i += step) {
    const dx_coef k = coef[channel_of<Cfg>(i)];
    const float xh = (kiln_load(in[i]) - k.mean) * k.rstd;
    kiln_store(out + i, k.scale * (kiln_load(grad[i]) - k.mg - xh * k.mgx));
  }
}

} // namespace bn
} // namespace kiln
