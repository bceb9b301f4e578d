//===- cross_entropy.cuh - cross entropy losses and their gradients -------===//
//
// Cross entropy over logits [N, C] with integer labels: a row kernel
// (reduce_row.cuh) leaves each row's loss in scratch and one block adds
// them in a fixed order; the backward is a row kernel, and a forward and
// backward of the same logits can be one (cross_entropy_fused). A label equal
// to the configuration's ignore_index (when `ignores`) gives its row loss and
// gradient 0; with the mean, cross_entropy_count first counts the other rows
// and the kernels divide by that count (`counted`). Any other label outside
// [0, C) makes its row's loss and gradient NaN. Binary cross entropy's
// gradient is element-wise.
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/reduce_row.cuh"

namespace kiln {
namespace reduce {

// Rows of logits; `keep` is 1 - label_smoothing and `smooth`
// label_smoothing / C, as f32, from the planner's configuration (a derived
// struct), with `smoothing` whether label_smoothing is not 0, `ignores`
// whether rows labelled `ignore_index` are left out, and `counted` whether
// the mean divides by the count of cross_entropy_count.
template <class Idx, long long N, long long C>
struct cross_entropy_config : row_config<Idx, N, C> {};

// Whether a row's label is the configuration's ignore_index.
template <class Cfg> __device__ __forceinline__ bool ignored(int label) {
  return Cfg::ignores && label == Cfg::ignore_index;
}

// The rows whose label is not ignore_index, counted by one block of 256
// threads into `count` (exact: each thread's count and the sum are
// integers).
template <class Idx, long long N, int Ignore> struct label_count_config {
  using idx_t = Idx;
  static constexpr long long n = N;
  static constexpr int ignore_index = Ignore;
};

template <class Cfg>
__device__ __forceinline__ void
cross_entropy_count(const launch_ctx &ctx, const int *__restrict__ labels,
                    float *__restrict__ count) {
  using idx_t = typename Cfg::idx_t;
  __shared__ unsigned scratch[32];
  unsigned c = 0;
  for (idx_t i = ctx.thread.x; i < (idx_t)Cfg::n; i += 256)
    c += labels[i] != Cfg::ignore_index;
  c = kiln_group_reduce<256>(ctx, c, kiln_sum_op(), 0u, scratch);
  if (ctx.thread.x == 0)
    *count = (float)c;
}

// The row's max and log-sum-exp.
template <class Cfg, class X>
__device__ __forceinline__ float2 log_sum_exp(const launch_ctx &ctx, int lid,
                                              const X &x, float *scratch) {
  using idx_t = typename Cfg::idx_t;
  float mx = -kiln_inf();
  row_loop<Cfg>(lid,
                [&](int k, int e, idx_t j) { mx = kiln_max(mx, x.at(k, e, j)); });
  mx = row_reduce<Cfg>(ctx, mx, kiln_max_op(), -kiln_inf(), scratch);
  float s = 0.f;
  row_loop<Cfg>(lid,
                [&](int k, int e, idx_t j) { s += expf(x.at(k, e, j) - mx); });
  s = row_reduce<Cfg>(ctx, s, kiln_sum_op(), 0.f, scratch);
  return make_float2(mx, mx + logf(s));
}

template <class Cfg, class L>
__device__ __forceinline__ void
cross_entropy_rows(const launch_ctx &ctx, const L *__restrict__ logits,
                   const int *__restrict__ labels,
                   float *__restrict__ row_loss) {
  using idx_t = typename Cfg::idx_t;
  __shared__ float scratch[32];
  const row_position<Cfg> p(ctx);
  row_input<Cfg, L> x(logits, p.row);
  x.cache(p.lid);
  const float lse = log_sum_exp<Cfg>(ctx, p.lid, x, scratch).y;
  const int label = labels[p.row];
  const bool valid = label >= 0 && label < Cfg::m;
  const float picked = valid ? kiln_load(x.row[label]) - lse : kiln_nan();
  float l = -Cfg::keep * picked;
  if constexpr (Cfg::smoothing) {
    // -eps/C * sum_c log_softmax
    float sl = 0.f;
    row_loop<Cfg>(p.lid,
                  [&](int k, int e, idx_t j) { sl += x.at(k, e, j) - lse; });
    sl = row_reduce<Cfg>(ctx, sl, kiln_sum_op(), 0.f, scratch);
    l -= Cfg::smooth * sl;
  }
  if (p.active && p.lid == 0)
    row_loss[p.row] = ignored<Cfg>(label) ? 0.f : l;
}

// The loss: one block of 256 threads adds the N row losses (NaN without
// classes), divided for the mean by N or, when `Counted`, by `count`.
template <class Idx, long long N, bool Classes, bool Mean, bool Counted = false>
struct loss_total_config {
  using idx_t = Idx;
  static constexpr long long n = N;
  static constexpr bool classes = Classes, mean = Mean, counted = Counted;
  static constexpr float nf = (float)N;
};

template <class Cfg, class Out>
__device__ __forceinline__ void
cross_entropy_total(const launch_ctx &ctx, const float *__restrict__ row_loss,
                    Out *__restrict__ out,
                    const float *__restrict__ count = nullptr) {
  using idx_t = typename Cfg::idx_t;
  __shared__ float scratch[32];
  float s = 0.f;
  for (idx_t i = ctx.thread.x; i < (idx_t)Cfg::n; i += 256)
    s += Cfg::classes ? row_loss[i] : kiln_nan();
  s = kiln_group_reduce<256>(ctx, s, kiln_sum_op(), 0.f, scratch);
  if (ctx.thread.x == 0) {
    if constexpr (Cfg::mean)
      kiln_store(out, s / (Cfg::counted ? *count : Cfg::nf));
    else
      kiln_store(out, s);
  }
}

// The incoming gradient's factor: `scale` of the configuration (1/N for the
// mean, 1 for the sum), divided by `count` when `counted`.
template <class Cfg>
__device__ __forceinline__ float gradient_scale(float grad,
                                                const float *count) {
  if constexpr (Cfg::counted)
    return grad * Cfg::scale / *count;
  else
    return grad * Cfg::scale;
}

// d logits = scale * (softmax - eps/C - (1 - eps) [j == label]), scale the
// incoming gradient times gradient_scale; 0 in ignored rows.
template <class Cfg, class G, class L, class Out>
__device__ __forceinline__ void
cross_entropy_backward(const launch_ctx &ctx, const G *__restrict__ grad,
                       const L *__restrict__ logits,
                       const int *__restrict__ labels, Out *__restrict__ out,
                       const float *__restrict__ count = nullptr) {
  using idx_t = typename Cfg::idx_t;
  __shared__ float scratch[32];
  const row_position<Cfg> p(ctx);
  row_input<Cfg, L> x(logits, p.row);
  Out *out_row = out + p.row * (idx_t)Cfg::m;
  x.cache(p.lid);
  const float lse = log_sum_exp<Cfg>(ctx, p.lid, x, scratch).y;
  const float scale = gradient_scale<Cfg>(kiln_load(grad[0]), count);
  const int label = labels[p.row];
  const bool valid = label >= 0 && label < Cfg::m;
  const bool skip = ignored<Cfg>(label);
  if (!p.active)
    return;
  row_loop<Cfg>(p.lid, [&](int k, int e, idx_t j) {
    float v = scale * (expf(x.at(k, e, j) - lse) - Cfg::smooth);
    if (j == label)
      v -= scale * Cfg::keep;
    kiln_store(out_row + j, skip ? 0.f : valid ? v : kiln_nan());
  });
}

// Cross entropy's loss and gradient in one pass over each row (a training
// step's forward and backward, when the incoming gradient does not depend on
// the loss): row losses to scratch for cross_entropy_total, d logits to
// `out`, with no [N, C] temporary. W elements per step move with 16-byte
// accesses; up to 32 of a thread's elements stay in registers, so the
// logits are read from memory once (longer rows are re-read from L2).
template <class Idx, long long N, long long C, int W>
struct cross_entropy_fused_config : row_config<Idx, N, C, W> {
  static constexpr bool cached =
      row_config<Idx, N, C, W>::steps * W <= 32;
};

// The derived configuration adds keep/smooth/smoothing, ignores/ignore_index,
// counted and `scale` as cross_entropy_backward's, plus `seed`, the incoming
// gradient when it is a compile-time constant (`grad` is then null).
template <class Cfg, class G, class L, class Out>
__device__ __forceinline__ void
cross_entropy_fused(const launch_ctx &ctx, const G *__restrict__ grad,
                    const L *__restrict__ logits,
                    const int *__restrict__ labels,
                    float *__restrict__ row_loss, Out *__restrict__ out,
                    const float *__restrict__ count = nullptr) {
  using idx_t = typename Cfg::idx_t;
  constexpr int W = Cfg::width;
  __shared__ float scratch[32];
  const row_position<Cfg> p(ctx);
  row_input<Cfg, L> x(logits, p.row);
  const bool aligned = x.aligned() && kiln_vec_aligned<W>(out);
  x.cache(p.lid, aligned);
  auto load = [&](idx_t j0) { x.step(j0, aligned); };
  // The label's logit is the one element a thread reads that another thread
  // writes: read it before the row's first reduction, so that the gradient
  // may be written over the logits (the memory plan lets it when they die
  // here).
  const int label = labels[p.row];
  const bool valid = label >= 0 && label < Cfg::m;
  const bool skip = ignored<Cfg>(label);
  const float picked = valid ? kiln_load(x.row[label]) : 0.f;

  float mx = -kiln_inf();
  row_loop<Cfg>(
      p.lid, [&](int k, int e, idx_t j) { mx = kiln_max(mx, x.at(k, e, j)); },
      load);
  mx = row_reduce<Cfg>(ctx, mx, kiln_max_op(), -kiln_inf(), scratch);
  // A cached row keeps exp(x - max) in place of x for the gradient, so
  // that each element's exponential is taken once.
  float s = 0.f, sx = 0.f;
  row_loop<Cfg>(
      p.lid,
      [&](int k, int e, idx_t j) {
        const float v = x.at(k, e, j);
        const float ev = expf(v - mx);
        s += ev;
        if constexpr (Cfg::smoothing)
          sx += v;
        if constexpr (Cfg::cached)
          x.v[k * W + e] = ev;
      },
      load);
  s = row_reduce<Cfg>(ctx, s, kiln_sum_op(), 0.f, scratch);
  const float lse = mx + logf(s);
  float l = valid ? -Cfg::keep * (picked - lse) : kiln_nan();
  if constexpr (Cfg::smoothing) {
    // -eps/C * sum_c log_softmax = -eps/C * (sum_c x - C lse)
    sx = row_reduce<Cfg>(ctx, sx, kiln_sum_op(), 0.f, scratch);
    l -= Cfg::smooth * (sx - (float)Cfg::m * lse);
  }
  // A row of at most a warp reduces with shuffles, which do not order memory:
  // the label's logit is read by the whole row before anyone writes.
  if constexpr (Cfg::group <= 32)
    __syncwarp();
  if (!p.active)
    return;
  if (p.lid == 0)
    row_loss[p.row] = skip ? 0.f : l;

  const float scale =
      gradient_scale<Cfg>(grad ? kiln_load(grad[0]) : Cfg::seed, count);
  const float scale_by_sum = scale / s;
  Out *out_row = out + p.row * (idx_t)Cfg::m;
  alignas(16) Out lanes[W];
  row_loop<Cfg>(
      p.lid,
      [&](int k, int e, idx_t j) {
        float v;
        if constexpr (Cfg::cached)
          v = scale_by_sum * x.at(k, e, j) - scale * Cfg::smooth;
        else
          v = scale * (expf(x.at(k, e, j) - lse) - Cfg::smooth);
        if (j == label)
          v -= scale * Cfg::keep;
        v = skip ? 0.f : valid ? v : kiln_nan();
        if constexpr (W == 1)
          kiln_store(out_row + j, v);
        else
          kiln_store(&lanes[e], v);
      },
      load, [&](idx_t j0) { store_step<Cfg>(out, p.row, j0, lanes); });
}

// Binary cross entropy with logits, backward: scale * (sigmoid(x) - t)
// over N elements, grid-stride over `Blocks` blocks of 256 threads.
template <class Idx, long long N, long long Blocks> struct element_config {
  using idx_t = Idx;
  static constexpr long long n = N, blocks = Blocks;
};

template <class Cfg, class G, class L, class T, class Out>
__device__ __forceinline__ void binary_cross_entropy_backward(
    const launch_ctx &ctx, const G *__restrict__ grad,
    const L *__restrict__ logits, const T *__restrict__ target,
    Out *__restrict__ out) {
  using idx_t = typename Cfg::idx_t;
  const float scale = kiln_load(grad[0]) * Cfg::scale;
  for (idx_t i = (idx_t)ctx.block.x * 256 + ctx.thread.x; i < (idx_t)Cfg::n;
       i += (idx_t)Cfg::blocks * 256)
    kiln_store(out + i, scale * (kiln_sigmoid(kiln_load(logits[i])) -
                                 kiln_load(target[i])));
}

} // namespace reduce
} // namespace kiln
