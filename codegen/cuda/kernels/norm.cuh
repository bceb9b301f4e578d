//===- norm.cuh - layer_norm, rms_norm, group_norm and their gradients ----===//
//
// Row kernels (reduce_row.cuh) over [rows, M]: the forward norm, and the
// backward dx, which leaves each row's (mean, rstd) for the parameter
// gradients; those are a column kernel over [rows, M] that recomputes x-hat
// from the statistics, with rows split over blocks when the columns alone
// do not fill the GPU and a second kernel that adds the splits in order.
// The variance takes two passes, like the reference: no cancellation.
//
// A group norm of [N, C, S...] is the same row kernels over N * G rows of
// (C / G) * S elements (a sample's group of channels with their positions),
// whose parameters are per channel (group_norm_config::param_index); its
// parameter gradients are a row kernel of per-(sample, channel) sums and a
// kernel that adds each channel's sums in sample order. A channels-last
// group norm of [N, S..., C] has the same rows, each strided: a position's
// C / G channels of the group, then the next position's
// (group_norm_nhwc_config); its parameter gradients are the column kernel
// over N * S rows of C channels, each element with its (sample, group)'s
// statistics (group_norm_nhwc_param_config).
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/reduce_row.cuh"

namespace kiln {
namespace reduce {

// Rows of a norm: `Layer` (layer_norm, else rms_norm), with a weight and a
// bias; `eps` comes from the planner's configuration (a derived struct).
template <class Idx, long long Rows, long long M, bool Layer, bool Weight,
          bool Bias>
struct norm_config : row_config<Idx, Rows, M> {
  static constexpr bool layer = Layer, weight = Weight, bias = Bias;
  static constexpr float mf = (float)M;
  // The weight and bias element of element j of row r: column j.
  static __device__ __forceinline__ Idx param_index(Idx, Idx j) { return j; }
};

// Rows of a group norm of [N, C, S...] in `Groups` groups (rows N * Groups,
// M = C / Groups * Spatial): element j of row r belongs to channel
// (r % Groups) * (C / Groups) + j / Spatial.
template <class Idx, long long Rows, long long M, bool Weight, bool Bias,
          long long Groups, long long Spatial>
struct group_norm_config : norm_config<Idx, Rows, M, true, Weight, Bias> {
  static __device__ __forceinline__ Idx param_index(Idx row, Idx j) {
    return (row % (Idx)Groups) * (Idx)(M / Spatial) + j / (Idx)Spatial;
  }
};

// The rows of a channels-last group norm of [N, S..., C] (Rows = N *
// Groups, M = C / Groups * Spatial): row r = (n, g) starts at channel
// g * C / Groups of sample n's first position, and its element j is channel
// j % (C / Groups) of the group at position j / (C / Groups).
template <class Idx, long long Rows, long long M, bool Weight, bool Bias,
          long long Groups, long long Spatial>
struct group_norm_nhwc_config
    : norm_config<Idx, Rows, M, true, Weight, Bias> {
  static_assert(M % Spatial == 0, "a row holds whole positions");
  static constexpr long long per_group = M / Spatial;
  static constexpr long long channels = per_group * Groups;
  static_assert(norm_config<Idx, Rows, M, true, Weight, Bias>::width == 1,
                "strided rows are read an element at a time");
  static __device__ __forceinline__ Idx row_start(Idx r) {
    return (r / (Idx)Groups) * (Idx)(M * Groups) +
           (r % (Idx)Groups) * (Idx)per_group;
  }
  static __device__ __forceinline__ Idx element(Idx j) {
    return (j / (Idx)per_group) * (Idx)channels + j % (Idx)per_group;
  }
  static __device__ __forceinline__ Idx param_index(Idx row, Idx j) {
    return (row % (Idx)Groups) * (Idx)per_group + j % (Idx)per_group;
  }
};

// The row's mean (0 for rms_norm) and 1 / sqrt(var + eps) over x.
template <class Cfg, class X>
__device__ __forceinline__ float2 norm_stats(const launch_ctx &ctx, int lid,
                                             const X &x, float *scratch) {
  using idx_t = typename Cfg::idx_t;
  float mean = 0.f;
  float q = 0.f;
  if constexpr (Cfg::layer) {
    float s = 0.f;
    row_loop<Cfg>(lid, [&](int k, int e, idx_t j) { s += x.at(k, e, j); });
    s = row_reduce<Cfg>(ctx, s, kiln_sum_op(), 0.f, scratch);
    mean = s / Cfg::mf;
    row_loop<Cfg>(lid, [&](int k, int e, idx_t j) {
      q += kiln_square(x.at(k, e, j) - mean);
    });
  } else {
    row_loop<Cfg>(lid, [&](int k, int e, idx_t j) {
      const float v = x.at(k, e, j);
      q += v * v;
    });
  }
  q = row_reduce<Cfg>(ctx, q, kiln_sum_op(), 0.f, scratch);
  return make_float2(mean, 1.f / sqrtf(q / Cfg::mf + Cfg::eps));
}

template <class Cfg, class In, class Wt, class Bs, class Out>
__device__ __forceinline__ void norm_forward(const launch_ctx &ctx,
                                             const In *__restrict__ in,
                                             const Wt *__restrict__ weight,
                                             const Bs *__restrict__ bias,
                                             Out *__restrict__ out) {
  using idx_t = typename Cfg::idx_t;
  __shared__ float scratch[32];
  const row_position<Cfg> p(ctx);
  row_input<Cfg, In> x(in, p.row);
  Out *out_row = out + Cfg::row_start(p.row);
  x.cache(p.lid);
  const float2 st = norm_stats<Cfg>(ctx, p.lid, x, scratch);
  const float mean = st.x, rstd = st.y;
  if (!p.active)
    return;
  row_loop<Cfg>(p.lid, [&](int k, int e, idx_t j) {
    float y = (x.at(k, e, j) - mean) * rstd;
    if constexpr (Cfg::weight)
      y = y * kiln_load(weight[Cfg::param_index(p.row, j)]);
    if constexpr (Cfg::bias)
      y = y + kiln_load(bias[Cfg::param_index(p.row, j)]);
    kiln_store(out_row + Cfg::element(j), y);
  });
}

// dx = rstd * (gy - mean(gy) - xh * mean(gy * xh)), gy = grad * weight
// (rms_norm: without the mean(gy) term). `out` and `stats` may be null when
// `WriteOut` / `Stats` say so.
template <class Cfg, bool WriteOut, bool Stats, class G, class In, class Wt,
          class Out>
__device__ __forceinline__ void
norm_backward(const launch_ctx &ctx, const G *__restrict__ grad,
              const In *__restrict__ in, const Wt *__restrict__ weight,
              Out *__restrict__ out, float2 *__restrict__ stats) {
  using idx_t = typename Cfg::idx_t;
  __shared__ float scratch[32];
  const row_position<Cfg> p(ctx);
  row_input<Cfg, G> g(grad, p.row);
  row_input<Cfg, In> x(in, p.row);
  Out *out_row = WriteOut ? out + Cfg::row_start(p.row) : nullptr;
  g.cache(p.lid);
  x.cache(p.lid);
  const float2 st = norm_stats<Cfg>(ctx, p.lid, x, scratch);
  const float mean = st.x, rstd = st.y;
  auto gy = [&](int k, int e, idx_t j) {
    if constexpr (Cfg::weight)
      return g.at(k, e, j) * kiln_load(weight[Cfg::param_index(p.row, j)]);
    else
      return g.at(k, e, j);
  };
  float sg = 0.f;
  if constexpr (Cfg::layer) {
    row_loop<Cfg>(p.lid, [&](int k, int e, idx_t j) { sg += gy(k, e, j); });
    sg = row_reduce<Cfg>(ctx, sg, kiln_sum_op(), 0.f, scratch);
  }
  float sgx = 0.f;
  row_loop<Cfg>(p.lid, [&](int k, int e, idx_t j) {
    sgx += gy(k, e, j) * ((x.at(k, e, j) - mean) * rstd);
  });
  sgx = row_reduce<Cfg>(ctx, sgx, kiln_sum_op(), 0.f, scratch);
  const float meanGyXh = sgx / Cfg::mf;
  const float meanGy = Cfg::layer ? sg / Cfg::mf : 0.f;
  if constexpr (Stats)
    if (p.active && p.lid == 0)
      stats[p.row] = make_float2(mean, rstd);
  if constexpr (WriteOut) {
    if (!p.active)
      return;
    row_loop<Cfg>(p.lid, [&](int k, int e, idx_t j) {
      kiln_store(out_row + Cfg::element(j),
                 rstd * (gy(k, e, j) - meanGy -
                         (x.at(k, e, j) - mean) * rstd * meanGyXh));
    });
  }
}

// The parameter gradients over [Rows, M]: blocks of 32 columns x 8 row
// lanes, grid.y the row splits of Chunk rows.
template <class Idx, long long Rows, long long M, long long Chunk, bool Weight,
          bool Bias>
struct norm_param_config {
  using idx_t = Idx;
  static constexpr long long rows = Rows, m = M, chunk = Chunk;
  static constexpr long long splits = split_count(Rows, Chunk);
  static constexpr long long tiles = ceil_div(M, kColumnTile);
  static constexpr bool weight = Weight, bias = Bias;
  // The statistics of element (r, j): its row's.
  static __device__ __forceinline__ Idx stats_index(Idx r, Idx) { return r; }
};

// The parameter gradients of a channels-last group norm of [N, S..., C]:
// the column kernel over N * Spatial rows of C channels, where element
// (r, j) has the statistics of sample r / Spatial's group j / (C / Groups).
template <class Idx, long long Rows, long long M, long long Chunk, bool Weight,
          bool Bias, long long Groups, long long Spatial>
struct group_norm_nhwc_param_config
    : norm_param_config<Idx, Rows, M, Chunk, Weight, Bias> {
  static __device__ __forceinline__ Idx stats_index(Idx r, Idx j) {
    return (r / (Idx)Spatial) * (Idx)Groups + j / (Idx)(M / Groups);
  }
};

// Sums over a chunk of rows of grad * xh (into dw) and of grad (into db);
// with one split the parameter gradients themselves, else the split's
// partials at [split * M + j]. dw / db are null when absent.
template <class Cfg, class G, class In, class DW, class DB>
__device__ __forceinline__ void
norm_param_grad(const launch_ctx &ctx, const G *__restrict__ grad,
                const In *__restrict__ input,
                const float2 *__restrict__ stats, DW *__restrict__ dw,
                DB *__restrict__ db) {
  using idx_t = typename Cfg::idx_t;
  constexpr idx_t m = (idx_t)Cfg::m;
  __shared__ float tw[8][33], tb[8][33];
  const idx_t j = (idx_t)ctx.block.x * 32 + ctx.thread.x;
  const bool active = j < m;
  const idx_t r0 = (idx_t)ctx.block.y * (idx_t)Cfg::chunk;
  const idx_t r1 = min((idx_t)Cfg::rows, r0 + (idx_t)Cfg::chunk);
  float aw = 0.f, ab = 0.f;
  if (active) {
    // Four rows' loads in flight before their sums (added in row order).
    idx_t r = r0 + ctx.thread.y;
    for (; r + 24 < r1; r += 32) {
      float g[4], x[4];
      float2 st[4];
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        g[u] = kiln_load(grad[(r + 8 * u) * m + j]);
        x[u] = kiln_load(input[(r + 8 * u) * m + j]);
        st[u] = stats[Cfg::stats_index(r + 8 * u, j)];
      }
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        aw += g[u] * ((x[u] - st[u].x) * st[u].y);
        ab += g[u];
      }
    }
    for (; r < r1; r += 8) {
      const float g = kiln_load(grad[r * m + j]);
      const float2 st = stats[Cfg::stats_index(r, j)];
      aw += g * ((kiln_load(input[r * m + j]) - st.x) * st.y);
      ab += g;
    }
  }
  tw[ctx.thread.y][ctx.thread.x] = aw;
  tb[ctx.thread.y][ctx.thread.x] = ab;
  __syncthreads();
  if (ctx.thread.y != 0 || !active)
    return;
#pragma unroll
  for (int t = 1; t < 8; ++t) {
    aw += tw[t][ctx.thread.x];
    ab += tb[t][ctx.thread.x];
  }
  const idx_t target = Cfg::splits == 1 ? j : (idx_t)ctx.block.y * m + j;
  if constexpr (Cfg::weight)
    kiln_store(dw + target, aw);
  if constexpr (Cfg::bias)
    kiln_store(db + target, ab);
}

// Adds each column's split partials in split order.
template <class Cfg, class Out>
__device__ __forceinline__ void
add_splits(typename Cfg::idx_t j, const float *__restrict__ partial,
           Out *__restrict__ out) {
  using idx_t = typename Cfg::idx_t;
  float acc = partial[j];
  for (int s = 1; s < Cfg::splits; ++s)
    acc += partial[(idx_t)s * (idx_t)Cfg::m + j];
  kiln_store(out + j, acc);
}

template <class Cfg, class DW, class DB>
__device__ __forceinline__ void
norm_param_grad_final(const launch_ctx &ctx, const float *__restrict__ pw,
                      DW *__restrict__ dw, const float *__restrict__ pb,
                      DB *__restrict__ db) {
  using idx_t = typename Cfg::idx_t;
  const idx_t j = (idx_t)ctx.block.x * 256 + ctx.thread.x;
  if (j >= (idx_t)Cfg::m)
    return;
  if constexpr (Cfg::weight)
    add_splits<Cfg>(j, pw, dw);
  if constexpr (Cfg::bias)
    add_splits<Cfg>(j, pb, db);
}

// A group norm's parameter gradients, first per (sample, channel): rows of
// the S positions of one channel of one sample (Cfg a row_config over
// N * Channels rows of S), each the sums of grad * xh and of grad with its
// group's (mean, rstd) from `stats`.
template <class Cfg, long long Groups, long long Channels, class G, class In>
__device__ __forceinline__ void
group_norm_channel_sums(const launch_ctx &ctx, const G *__restrict__ grad,
                        const In *__restrict__ input,
                        const float2 *__restrict__ stats,
                        float2 *__restrict__ sums) {
  using idx_t = typename Cfg::idx_t;
  __shared__ float scratch[32];
  const row_position<Cfg> p(ctx);
  row_input<Cfg, G> g(grad, p.row);
  row_input<Cfg, In> x(input, p.row);
  g.cache(p.lid);
  x.cache(p.lid);
  const idx_t n = p.row / (idx_t)Channels, c = p.row % (idx_t)Channels;
  const float2 st = stats[n * (idx_t)Groups + c / (idx_t)(Channels / Groups)];
  float sgx = 0.f, sg = 0.f;
  row_loop<Cfg>(p.lid, [&](int k, int e, idx_t j) {
    const float gv = g.at(k, e, j);
    sgx += gv * ((x.at(k, e, j) - st.x) * st.y);
    sg += gv;
  });
  sgx = row_reduce<Cfg>(ctx, sgx, kiln_sum_op(), 0.f, scratch);
  sg = row_reduce<Cfg>(ctx, sg, kiln_sum_op(), 0.f, scratch);
  if (p.active && p.lid == 0)
    sums[p.row] = make_float2(sgx, sg);
}

// Then each channel's sums over the N samples, in sample order: dw and db
// (either null when its Weight / Bias is false).
template <class Idx, long long N, long long Channels, bool Weight, bool Bias,
          class DW, class DB>
__device__ __forceinline__ void
group_norm_param_final(const launch_ctx &ctx, const float2 *__restrict__ sums,
                       DW *__restrict__ dw, DB *__restrict__ db) {
  const Idx c = (Idx)ctx.block.x * 256 + ctx.thread.x;
  if (c >= (Idx)Channels)
    return;
  float aw = 0.f, ab = 0.f;
  for (Idx n = 0; n < (Idx)N; ++n) {
    const float2 s = sums[n * (Idx)Channels + c];
    aw += s.x;
    ab += s.y;
  }
  if constexpr (Weight)
    kiln_store(dw + c, aw);
  if constexpr (Bias)
    kiln_store(db + c, ab);
}

// Zeros of M elements (the parameter gradients of a norm without rows).
template <class Idx, long long M, class Out>
__device__ __forceinline__ void zero_columns(const launch_ctx &ctx,
                                             Out *__restrict__ out) {
  const Idx j = (Idx)ctx.block.x * 256 + ctx.thread.x;
  if (j >= (Idx)M)
    return;
  kiln_store(out + j, 0.f);
}

} // namespace reduce
} // namespace kiln
