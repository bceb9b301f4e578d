//===- batch_norm.cuh - batch_norm and batch_norm_backward ----------------===//
//
// Per-channel statistics over [outer, C, inner] (batch_norm_layout.cuh for
// the two modes), computed deterministically in two levels: every block of
// the partial kernel reduces its share with a fixed tree into one partial
// per column or channel (scratch), then one warp per channel combines the
// channel's partials in a fixed order. No atomics: results are the same run
// to run. Accesses move 16 bytes where the layout allows
// (batch_norm_layout.cuh).
//
// The mean and variance come from Welford's update within a thread and
// Chan's combination of (count, mean, sum of squared deviations) above it,
// over the channel's values shifted by its first element (so that the
// running mean stays small and precise in f32 even when the data's mean is
// large against its spread): no cancellation, as in the CPU reference's two
// passes.
//
// batch_norm:          stats_partial, stats_final (or eval_final), normalize
// batch_norm_backward: grad_partial (statistics and gradient sums in one
//                      pass), grad_final, input_grad
//
// The configuration (a struct derived from `config`) adds the constants
// eps, momentum and unbias (n / (n - 1)) as static constexpr floats.
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/batch_norm_layout.cuh"
#include "kiln/reduce_common.cuh"
#include "kiln/welford.cuh"

namespace kiln {
namespace bn {

// Vec: the elements of one 16-byte access of the input's type (1 keeps
// every access scalar).
template <class Idx, long long Outer, long long C, long long Inner,
          long long Chunk, long long Vec = 1>
struct config {
  using idx_t = Idx;
  static constexpr long long outer = Outer, channels = C, inner = Inner,
                             chunk = Chunk;
  static constexpr bool columns = column_mode(Inner);
  static constexpr long long width = C * Inner;
  // Columns per access of the statistics kernels, elements per access of
  // the element-wise ones.
  static constexpr long long vec = columns ? column_vec(C, Inner, Vec) : 1;
  static constexpr long long evec = element_vec(Outer * C * Inner, Vec);
  static constexpr long long cols = columns ? column_tile(width, vec) : 1;
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
  // The partials are of the values shifted by their channel's first one
  // (stats_partial's); a configuration whose partials come from elsewhere
  // (a convolution's epilogue, tile_stats.cuh) sets it false.
  static constexpr bool shifted = true;
};

// V elements of T as loaded, kept in their type until used (fewer
// registers while several rows' loads are in flight).
template <int V, class T> struct raw_values { alignas(16) T x[V]; };
// V elements from p: one access of V elements (aligned to it), or a scalar
// load.
template <int V, class T>
__device__ __forceinline__ raw_values<V, T> load_raw(const T *__restrict__ p) {
  raw_values<V, T> r;
  if constexpr (V == 1)
    r.x[0] = p[0];
  else
    kiln_load_vec<V>(r.x, p);
  return r;
}
// V values from p, converted to f32.
template <int V, class T>
__device__ __forceinline__ void load_values(const T *__restrict__ p,
                                            float (&x)[V]) {
  const raw_values<V, T> r = load_raw<V>(p);
#pragma unroll
  for (int v = 0; v < V; ++v)
    x[v] = kiln_load(r.x[v]);
}
// V f32 values rounded to T and stored at p in one access.
template <int V, class T>
__device__ __forceinline__ void store_values(T *__restrict__ p,
                                             const float (&x)[V]) {
  if constexpr (V == 1) {
    kiln_store(p, x[0]);
  } else {
    alignas(16) T raw[V];
#pragma unroll
    for (int v = 0; v < V; ++v)
      kiln_store(raw + v, x[v]);
    kiln_store_vec<V>(p, raw);
  }
}

// Welford's update of V columns that have seen the same rows: one
// reciprocal of the shared count.
template <int V>
__device__ __forceinline__ void welford_add(welford (&acc)[V],
                                            const float (&x)[V]) {
  const float n = acc[0].n + 1.f, inv = 1.f / n;
#pragma unroll
  for (int v = 0; v < V; ++v) {
    acc[v].n = n;
    const float d = x[v] - acc[v].mean;
    acc[v].mean += d * inv;
    // d and x - mean have one sign: m2 never decreases.
    acc[v].m2 += d * (x[v] - acc[v].mean);
  }
}

// What batch_norm_backward reduces in one pass over (grad, x): Welford's
// statistics of x shifted by its channel's first value (x'), and the sums
// of grad and of grad * x'. sum(grad * x-hat) follows as rstd * (sum(grad *
// x') - mean(x') * sum(grad)), without cancellation: mean(x') is of the
// order of the spread, the shift being one of the values.
struct grad_sums {
  welford x;
  float g, gx;
  __device__ __forceinline__ void init() { x.init(), g = 0.f, gx = 0.f; }
  __device__ __forceinline__ grad_sums shuffle_xor(int mask) const {
    return {x.shuffle_xor(mask), __shfl_xor_sync(0xffffffffu, g, mask),
            __shfl_xor_sync(0xffffffffu, gx, mask)};
  }
  __device__ __forceinline__ void merge(const grad_sums &b) {
    x.merge(b.x);
    g += b.g;
    gx += b.gx;
  }
};


// This block's share of the reduction. The reduction `e` gives begin(c),
// called once with the thread's first channel (a thread's elements all
// belong to the same channels); load(offset), the raw values of Cfg::vec
// consecutive columns of consecutive channels from `offset` in column mode,
// one element in segment mode; add(acc, raw), their contribution; and
// `batch`, the rows each thread loads before it adds them (in row order),
// so that that many loads are in flight (kBatch for one tensor; fewer rows
// of more tensors keep the registers for two blocks per SM). The block
// combines its lanes by a fixed tree, and lane 0 of each column stores the
// partial of (split, column or channel).
constexpr int kBatch = 8;
// Adds rows first, first + step, ... below end at offset(r) to acc.
template <class Acc, int V, class Reduction, class Offset, class I>
__device__ __forceinline__ void reduce_rows(Reduction &e, Acc (&acc)[V],
                                            I first, I end, I step,
                                            const Offset &offset) {
  constexpr int B = Reduction::batch;
  I r = first;
  for (; r + (B - 1) * step < end; r += B * step) {
    decltype(e.load(0)) raw[B];
#pragma unroll
    for (int b = 0; b < B; ++b)
      raw[b] = e.load(offset(r + b * step));
#pragma unroll
    for (int b = 0; b < B; ++b)
      e.add(acc, raw[b]);
  }
  for (; r < end; r += step)
    e.add(acc, e.load(offset(r)));
}
template <class Cfg, class Acc, class Reduction>
__device__ __forceinline__ void
partial_reduce(const launch_ctx &ctx, Reduction &e, Acc *__restrict__ partial) {
  using idx_t = typename Cfg::idx_t;
  constexpr int cols = (int)Cfg::cols, lanes = (int)Cfg::lanes,
                V = (int)Cfg::vec;
  __shared__ Acc tile[lanes][cols][V];
  const int tx = (int)ctx.thread.x % cols, ty = (int)ctx.thread.x / cols;
  const idx_t r0 = (idx_t)ctx.block.y * (idx_t)Cfg::chunk;
  const idx_t r1 = min((idx_t)Cfg::length, r0 + (idx_t)Cfg::chunk);
  Acc acc[V];
#pragma unroll
  for (int v = 0; v < V; ++v)
    acc[v].init();
  bool active;
  idx_t target;
  if constexpr (Cfg::columns) {
    // The thread's first column.
    const idx_t j = ((idx_t)ctx.block.x * cols + tx) * V;
    active = j < (idx_t)Cfg::width;
    if (active) {
      e.begin(j / (idx_t)Cfg::inner);
      reduce_rows(e, acc, r0 + ty, r1, (idx_t)lanes,
                  [&](idx_t r) { return r * (idx_t)Cfg::width + j; });
    }
    target = (idx_t)ctx.block.y * (idx_t)Cfg::width + j;
  } else {
    const idx_t c = (idx_t)ctx.block.x;
    constexpr idx_t inner = (idx_t)Cfg::inner;
    active = true;
    e.begin(c);
    reduce_rows(e, acc, r0 + ty, r1, (idx_t)lanes, [&](idx_t k) {
      return (k / inner) * (idx_t)Cfg::width + c * inner + k % inner;
    });
    target = (idx_t)ctx.block.y * (idx_t)Cfg::channels + c;
  }
#pragma unroll
  for (int v = 0; v < V; ++v)
    tile[ty][tx][v] = acc[v];
  __syncthreads();
#pragma unroll
  for (int s = lanes / 2; s > 0; s /= 2) {
    if (ty < s)
#pragma unroll
      for (int v = 0; v < V; ++v)
        tile[ty][tx][v].merge(tile[ty + s][tx][v]);
    __syncthreads();
  }
  if (ty == 0 && active)
#pragma unroll
    for (int v = 0; v < V; ++v)
      partial[target + v] = tile[0][tx][v];
}

// The channel and lane of this thread in the per-channel kernels (one
// warp per channel); false past the last channel.
template <class Cfg>
__device__ __forceinline__ bool
channel_lane(const launch_ctx &ctx, typename Cfg::idx_t &c, int &lane) {
  using idx_t = typename Cfg::idx_t;
  const idx_t t = (idx_t)ctx.block.x * (idx_t)kChannelThreads + ctx.thread.x;
  c = t / (idx_t)kChannelLanes;
  lane = (int)(t % (idx_t)kChannelLanes);
  return c < (idx_t)Cfg::channels;
}

// Channel c's partials combined by the lanes of its warp (every lane
// returns the result): lane l merges partials l, l + 32, ... (split order,
// column order within a split) in order, then the lanes' results are
// merged by a fixed tree, the lower lane's first. The order depends on the
// shapes alone, so results are the same run to run.
template <class Cfg, class Acc>
__device__ __forceinline__ Acc combine_partials(
    typename Cfg::idx_t c, int lane, const Acc *__restrict__ partial) {
  using idx_t = typename Cfg::idx_t;
  constexpr idx_t lanes = (idx_t)kChannelLanes;
  Acc acc;
  acc.init();
  constexpr idx_t count = (idx_t)Cfg::splits * (idx_t)Cfg::sub;
  // Up to 16 partials per lane loaded ahead of their merges (which stay in
  // order), so that the loads overlap: a convolution's epilogue leaves a
  // partial per row tile, a thousand or more per channel.
  constexpr int kAhead = (int)reduce::min_of(
      16, reduce::max_of(1, reduce::ceil_div((long long)count, lanes)));
  for (idx_t q = lane; q < count; q += kAhead * lanes) {
    Acc next[kAhead];
#pragma unroll
    for (int u = 0; u < kAhead; ++u) {
      const idx_t e = q + u * lanes, s = e / (idx_t)Cfg::sub,
                  i = e % (idx_t)Cfg::sub;
      if (e < count)
        next[u] = partial[s * (idx_t)Cfg::per_split + c * (idx_t)Cfg::sub + i];
    }
#pragma unroll
    for (int u = 0; u < kAhead; ++u)
      if (q + u * lanes < count)
        acc.merge(next[u]);
  }
#pragma unroll
  for (int mask = (int)lanes / 2; mask > 0; mask /= 2) {
    Acc other = acc.shuffle_xor(mask);
    if (lane & mask) {
      const Acc mine = acc;
      acc = other;
      other = mine;
    }
    acc.merge(other);
  }
  return acc;
}

// The offset of channel c's first element, whose value shifts the channel's
// statistics.
template <class Cfg>
__device__ __forceinline__ typename Cfg::idx_t
shift_offset(typename Cfg::idx_t c) {
  return c * (typename Cfg::idx_t)Cfg::inner;
}

// Welford over the input's values shifted by each channel's first.
template <class Cfg, class In> struct stats_reduction {
  using idx_t = typename Cfg::idx_t;
  static constexpr int V = (int)Cfg::vec, batch = kBatch;
  const In *__restrict__ in;
  float shift[V];
  __device__ __forceinline__ void begin(idx_t c) {
#pragma unroll
    for (int v = 0; v < V; ++v)
      shift[v] = kiln_load(in[shift_offset<Cfg>(c + v)]);
  }
  __device__ __forceinline__ raw_values<V, In> load(idx_t off) const {
    return load_raw<V>(in + off);
  }
  __device__ __forceinline__ void add(welford (&acc)[V],
                                      const raw_values<V, In> &raw) const {
    float x[V];
#pragma unroll
    for (int v = 0; v < V; ++v)
      x[v] = kiln_load(raw.x[v]) - shift[v];
    welford_add<V>(acc, x);
  }
};

template <class Cfg, class In>
__device__ __forceinline__ void stats_partial(const launch_ctx &ctx,
                                              const In *__restrict__ in,
                                              welford *__restrict__ partial) {
  stats_reduction<Cfg, In> e{in, {}};
  partial_reduce<Cfg, welford>(ctx, e, partial);
}

// The channel's statistics from the partials of `in`: `coef` (norm_field)
// gets the mean and gamma / sqrt(var + eps), or 1 / sqrt(var + eps) without
// gamma;
// the optional results get the batch mean, the biased variance and the
// updated running statistics. The running statistics may be updated in
// place (running_mean == new_mean): each thread reads its channel's before
// it writes them, so those pointers are not __restrict__.
template <class Cfg, class In, class Gm, class M, class V, class R>
__device__ __forceinline__ void
stats_final(const launch_ctx &ctx, const In *__restrict__ in,
            const welford *__restrict__ partial, const Gm *__restrict__ gamma,
            float *__restrict__ coef, M *__restrict__ mean_out,
            V *__restrict__ var_out, const R *running_mean,
            const R *running_var, R *new_mean, R *new_var) {
  using idx_t = typename Cfg::idx_t;
  idx_t c;
  int lane;
  if (!channel_lane<Cfg>(ctx, c, lane))
    return;
  const welford acc = combine_partials<Cfg>(c, lane, partial);
  if (lane != 0)
    return;
  // Like the reference, no elements give NaN statistics.
  float mean = kiln_nan();
  if constexpr (Cfg::count > 0)
    mean = Cfg::shifted ? kiln_load(in[shift_offset<Cfg>(c)]) + acc.mean
                        : acc.mean;
  const float var = acc.m2 / Cfg::countf;
  const float rstd = 1.f / sqrtf(var + Cfg::eps);
  constexpr idx_t C = (idx_t)Cfg::channels;
  coef[kNormMean * C + c] = mean;
  coef[kNormScale * C + c] = gamma ? rstd * kiln_load(gamma[c]) : rstd;
  if (mean_out)
    kiln_store(mean_out + c, mean);
  if (var_out)
    kiln_store(var_out + c, var);
  if (new_mean)
    kiln_store(new_mean + c,
               (1.f - Cfg::momentum) * kiln_load(running_mean[c]) +
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
           float *__restrict__ coef, M *__restrict__ mean_out,
           V *__restrict__ var_out, const R *running_mean, const R *running_var,
           R *new_mean, R *new_var) {
  using idx_t = typename Cfg::idx_t;
  idx_t c;
  int lane;
  if (!channel_lane<Cfg>(ctx, c, lane) || lane != 0)
    return;
  const float mean = kiln_load(running_mean[c]);
  const float var = kiln_load(running_var[c]);
  constexpr idx_t C = (idx_t)Cfg::channels;
  coef[kNormMean * C + c] = mean;
  coef[kNormScale * C + c] = 1.f / sqrtf(var + Cfg::eps) * kiln_load(gamma[c]);
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
__device__ __forceinline__ typename Cfg::idx_t
channel_of(typename Cfg::idx_t i) {
  using idx_t = typename Cfg::idx_t;
  return (i / (idx_t)Cfg::inner) % (idx_t)Cfg::channels;
}

// The F fields (of coefficient arrays [F][C]) of the channels of elements
// e .. e + V - 1: channels last with whole vectors of channels (inner 1,
// C a multiple of V) they are V consecutive channels, read V at a time.
template <class Cfg, int F, int V, class T>
__device__ __forceinline__ void
channel_values(const T *__restrict__ coef, typename Cfg::idx_t e,
               float (&k)[F][V]) {
  using idx_t = typename Cfg::idx_t;
  constexpr idx_t C = (idx_t)Cfg::channels;
  if constexpr (Cfg::inner == 1 && Cfg::channels % V == 0) {
    const idx_t c0 = e % C;
#pragma unroll
    for (int f = 0; f < F; ++f)
      load_values<V>(coef + f * C + c0, k[f]);
  } else {
#pragma unroll
    for (int v = 0; v < V; ++v) {
      const idx_t c = channel_of<Cfg>(e + v);
#pragma unroll
      for (int f = 0; f < F; ++f)
        k[f][v] = kiln_load(coef[f * C + c]);
    }
  }
}

// Whether every vector of V elements a thread visits in a grid-stride walk
// of `step` vectors has the channels of its first: channels last (inner 1)
// with whole vectors of channels, and a stride of whole rows. The thread
// then reads its channels' coefficients once, not per vector.
template <class Cfg, int V>
__device__ __forceinline__ bool fixed_channels(typename Cfg::idx_t step) {
  using idx_t = typename Cfg::idx_t;
  if constexpr (Cfg::inner == 1 && Cfg::channels % V == 0)
    return (step * V) % (idx_t)Cfg::channels == 0;
  return false;
}

// y = (x - mean) * scale + beta, grid-stride over every element.
template <class Cfg, class In, class Bs, class Out>
__device__ __forceinline__ void
normalize(const launch_ctx &ctx, const In *__restrict__ in,
          const float *__restrict__ coef, const Bs *__restrict__ beta,
          Out *__restrict__ out) {
  using idx_t = typename Cfg::idx_t;
  constexpr int V = (int)Cfg::evec;
  const idx_t step = (idx_t)ctx.grid.x * (idx_t)kThreads;
  const idx_t first = (idx_t)ctx.block.x * (idx_t)kThreads + ctx.thread.x;
  const bool fixed = fixed_channels<Cfg, V>(step);
  float k[kNormFields][V], b[1][V];
  auto coefficients = [&](idx_t e) {
    channel_values<Cfg, kNormFields, V>(coef, e, k);
    channel_values<Cfg, 1, V>(beta, e, b);
  };
  if (fixed)
    coefficients(first * V);
  for (idx_t i = first; i < (idx_t)(Cfg::elements / V); i += step) {
    const idx_t e = i * V;
    if (!fixed)
      coefficients(e);
    float x[V];
    load_values<V>(in + e, x);
#pragma unroll
    for (int v = 0; v < V; ++v)
      x[v] = (x[v] - k[kNormMean][v]) * k[kNormScale][v] + b[0][v];
    store_values<V>(out + e, x);
  }
}

// The statistics of x and the sums of grad and grad * x, x shifted by
// each channel's first value.
template <class Cfg, class G, class In> struct grad_reduction {
  using idx_t = typename Cfg::idx_t;
  // Two tensors per row: half the rows of one tensor's batch.
  static constexpr int V = (int)Cfg::vec, batch = kBatch / 2;
  struct raw {
    raw_values<V, G> g;
    raw_values<V, In> x;
  };
  const G *__restrict__ grad;
  const In *__restrict__ in;
  float shift[V];
  __device__ __forceinline__ void begin(idx_t c) {
#pragma unroll
    for (int v = 0; v < V; ++v)
      shift[v] = kiln_load(in[shift_offset<Cfg>(c + v)]);
  }
  __device__ __forceinline__ raw load(idx_t off) const {
    return {load_raw<V>(grad + off), load_raw<V>(in + off)};
  }
  __device__ __forceinline__ void add(grad_sums (&acc)[V], const raw &r) const {
    // Welford's update with one reciprocal of the columns' shared count.
    const float n = acc[0].x.n + 1.f, inv = 1.f / n;
#pragma unroll
    for (int v = 0; v < V; ++v) {
      const float x = kiln_load(r.x.x[v]) - shift[v], g = kiln_load(r.g.x[v]);
      welford &w = acc[v].x;
      w.n = n;
      const float d = x - w.mean;
      w.mean += d * inv;
      w.m2 += d * (x - w.mean);
      acc[v].g += g;
      acc[v].gx += g * x;
    }
  }
};

template <class Cfg, class G, class In>
__device__ __forceinline__ void
grad_partial(const launch_ctx &ctx, const G *__restrict__ grad,
             const In *__restrict__ in, grad_sums *__restrict__ partial) {
  grad_reduction<Cfg, G, In> e{grad, in, {}};
  partial_reduce<Cfg, grad_sums>(ctx, e, partial);
}

// The channel's mean and rstd from the partials, then gamma_grad =
// sum(grad * xh) and beta_grad = sum(grad) (each optional), and the
// coefficients of input_grad when `dx` is non-null.
template <class Cfg, class In, class Gm, class DG, class DB>
__device__ __forceinline__ void
grad_final(const launch_ctx &ctx, const In *__restrict__ in,
           const grad_sums *__restrict__ partial, const Gm *__restrict__ gamma,
           DG *__restrict__ gamma_grad, DB *__restrict__ beta_grad,
           float *__restrict__ dx) {
  using idx_t = typename Cfg::idx_t;
  idx_t c;
  int lane;
  if (!channel_lane<Cfg>(ctx, c, lane))
    return;
  const grad_sums acc = combine_partials<Cfg>(c, lane, partial);
  if (lane != 0)
    return;
  // Without elements the sums are zero (and the statistics NaN, unused).
  float mean = kiln_nan(), rstd = kiln_nan(), gxh = 0.f;
  if constexpr (Cfg::count > 0) {
    mean = kiln_load(in[shift_offset<Cfg>(c)]) + acc.x.mean;
    rstd = 1.f / sqrtf(acc.x.m2 / Cfg::countf + Cfg::eps);
    gxh = rstd * (acc.gx - acc.x.mean * acc.g);
  }
  if (gamma_grad)
    kiln_store(gamma_grad + c, gxh);
  if (beta_grad)
    kiln_store(beta_grad + c, acc.g);
  if (dx) {
    constexpr idx_t C = (idx_t)Cfg::channels;
    dx[kDxMean * C + c] = mean;
    dx[kDxRstd * C + c] = rstd;
    dx[kDxScale * C + c] = kiln_load(gamma[c]) * rstd;
    dx[kDxMg * C + c] = acc.g / Cfg::countf;
    dx[kDxMgx * C + c] = gxh / Cfg::countf;
  }
}

// dx = gamma * rstd * (g - mean(g) - xh * mean(g * xh)).
template <class Cfg, class G, class In, class Out>
__device__ __forceinline__ void
input_grad(const launch_ctx &ctx, const G *__restrict__ grad,
           const In *__restrict__ in, const float *__restrict__ coef,
           Out *__restrict__ out) {
  using idx_t = typename Cfg::idx_t;
  constexpr int V = (int)Cfg::evec;
  const idx_t step = (idx_t)ctx.grid.x * (idx_t)kThreads;
  const idx_t first = (idx_t)ctx.block.x * (idx_t)kThreads + ctx.thread.x;
  const bool fixed = fixed_channels<Cfg, V>(step);
  float k[kDxFields][V];
  if (fixed)
    channel_values<Cfg, kDxFields, V>(coef, first * V, k);
  for (idx_t i = first; i < (idx_t)(Cfg::elements / V); i += step) {
    const idx_t e = i * V;
    if (!fixed)
      channel_values<Cfg, kDxFields, V>(coef, e, k);
    float g[V], x[V];
    load_values<V>(grad + e, g);
    load_values<V>(in + e, x);
#pragma unroll
    for (int v = 0; v < V; ++v) {
      const float xh = (x[v] - k[kDxMean][v]) * k[kDxRstd][v];
      g[v] = k[kDxScale][v] * (g[v] - k[kDxMg][v] - xh * k[kDxMgx][v]);
    }
    store_values<V>(out + e, g);
  }
}

} // namespace bn
} // namespace kiln
