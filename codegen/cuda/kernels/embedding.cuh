//===- embedding.cuh - the gradient of an embedding table -----------------===//
//
// kiln.embedding_backward: table[v, :] = sum of grad[i, :] over the lookups
// i with indices[i] == v, for a [V, D] table and N lookups. Deterministic
// without floating-point atomics: the lookups are sorted by row with a
// stable radix sort (each row's lookups end up in lookup order), and every
// row is summed in f32 in that order by threads that own the whole row (the
// stages are in embedding_layout.cuh). Out-of-range indices take the key V:
// they sort last and no row reads them, so they contribute nothing. Integer
// atomics only count digits in shared memory, where order does not matter.
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/prelude.cuh"
#include "kiln/embedding_layout.cuh"

namespace kiln {
namespace embedding {

// N lookups of rows of a [V, D] table, W elements per step of a row; Idx
// indexes the grad and table tensors.
template <class Idx, long long N, long long V, long long D, int W>
struct embedding_config {
  using idx_t = Idx;
  static constexpr long long n = N, v = V, d = D;
  static constexpr int width = W;
  static constexpr int passes = radix_passes(V);
  static constexpr int items = (int)sort_items(N);
  static constexpr long long tile = sort_tile(N);
  static constexpr long long tiles = sort_tiles(N);
  static constexpr long long chunks = embedding::chunks(N);
  static constexpr int group = (int)row_group(D, W);
  static constexpr int steps = (int)row_steps(D, W);
  static constexpr bool cached = row_cached(D, W);
  static constexpr int rows_per_block = (int)embedding::rows_per_block(D, W);
};

// The sort key of an index read by pass `Pass`: the first pass reads the
// indices themselves, later ones the keys the pass before wrote.
template <class Cfg, int Pass>
__device__ __forceinline__ int key_of(int x) {
  if constexpr (Pass == 0)
    return x >= 0 && (long long)x < Cfg::v ? x : (int)Cfg::v;
  else
    return x;
}
template <int Pass> __device__ __forceinline__ unsigned digit_of(int key) {
  return ((unsigned)key >> (kRadixBits * Pass)) & (unsigned)(kRadixBins - 1);
}

// Pass `Pass`, first kernel: the digit histogram of each tile, stored
// histogram[tile * 256 + digit]. The first pass also empties every row's
// run, for the rows no lookup names. Blocks of 256 threads.
template <class Cfg, int Pass>
__device__ __forceinline__ void
radix_histogram(const launch_ctx &ctx, const int *__restrict__ in,
                unsigned *__restrict__ histogram, int2 *__restrict__ bounds) {
  __shared__ unsigned bins[kRadixBins];
  const unsigned t = ctx.thread.x;
  bins[t] = 0u;
  if constexpr (Pass == 0) {
    for (long long r = (long long)ctx.block.x * kSortThreads + t; r < Cfg::v;
         r += (long long)ctx.grid.x * kSortThreads)
      bounds[r] = make_int2(0, 0);
  }
  __syncthreads();
  const long long base = (long long)ctx.block.x * Cfg::tile;
#pragma unroll
  for (int i = 0; i < Cfg::items; ++i) {
    const long long at = base + (long long)i * kSortThreads + t;
    if (at < Cfg::n)
      atomicAdd(&bins[digit_of<Pass>(key_of<Cfg, Pass>(__ldg(in + at)))], 1u);
  }
  __syncthreads();
  histogram[(long long)ctx.block.x * kRadixBins + t] = bins[t];
}

// Pass `Pass`, second kernel: moves each (key, lookup) of this tile to its
// place among the keys of its digit, stably. A digit's place is the count of
// smaller digits over all tiles plus its count in earlier tiles; within the
// tile, lookups are taken in their order (lookup i * 256 + t of the tile is
// the i-th of thread t) and ranked among equal digits by warp matching and
// per-warp counts. The first pass reads the indices (`lookups_in` null: the
// lookup is the position).
template <class Cfg, int Pass>
__device__ __forceinline__ void
radix_scatter(const launch_ctx &ctx, const int *__restrict__ keys_in,
              const int *__restrict__ lookups_in,
              const unsigned *__restrict__ histogram, int *__restrict__ keys_out,
              int *__restrict__ lookups_out) {
  constexpr int kWarps = (int)(kSortThreads / 32);
  __shared__ unsigned offsets[kRadixBins];
  __shared__ unsigned counts[kWarps][kRadixBins];
  __shared__ unsigned warp_totals[kWarps];
  const unsigned t = ctx.thread.x, lane = t % 32, warp = t / 32;
  const long long tile = ctx.block.x;

  // Thread t owns digit t: its count over all tiles and before this one.
  unsigned total = 0, before = 0;
  for (long long p = 0; p < Cfg::tiles; ++p) {
    const unsigned h = __ldg(histogram + p * kRadixBins + t);
    total += h;
    before += p < tile ? h : 0u;
  }
  unsigned inclusive = total;
#pragma unroll
  for (int o = 1; o < 32; o *= 2) {
    const unsigned up = __shfl_up_sync(0xffffffffu, inclusive, o);
    if ((int)lane >= o)
      inclusive += up;
  }
  if (lane == 31)
    warp_totals[warp] = inclusive;
#pragma unroll
  for (int w = 0; w < kWarps; ++w)
    counts[w][t] = 0u;
  __syncthreads();
  unsigned smaller = inclusive - total;
  for (unsigned w = 0; w < warp; ++w)
    smaller += warp_totals[w];
  offsets[t] = smaller + before;
  __syncthreads();

  const unsigned lanes_below = (1u << lane) - 1u;
  const long long base = tile * Cfg::tile;
  for (int i = 0; i < Cfg::items; ++i) {
    const long long at = base + (long long)i * kSortThreads + t;
    const bool in = at < Cfg::n;
    int key = 0, lookup = 0;
    if (in) {
      key = key_of<Cfg, Pass>(__ldg(keys_in + at));
      if constexpr (Pass == 0)
        lookup = (int)at;
      else
        lookup = __ldg(lookups_in + at);
    }
    // Lanes past the end match each other under a digit no key has.
    const unsigned digit = in ? digit_of<Pass>(key) : (unsigned)kRadixBins;
    const unsigned same = __match_any_sync(0xffffffffu, digit);
    const unsigned earlier = same & lanes_below;
    if (in && earlier == 0u)
      counts[warp][digit] = __popc(same);
    __syncthreads();
    if (in) {
      unsigned rank = offsets[digit] + __popc(earlier);
      for (unsigned w = 0; w < warp; ++w)
        rank += counts[w][digit];
      keys_out[rank] = key;
      lookups_out[rank] = lookup;
    }
    __syncthreads();
    // Thread t moves digit t's place past this step's keys.
    unsigned step = 0;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      step += counts[w][t];
      counts[w][t] = 0u;
    }
    offsets[t] += step;
    __syncthreads();
  }
}

// W elements at `p` added to f32 sums; 16 bytes at a time when Aligned
// (the same sums either way). Inputs are read only while the kernel runs.
template <int W, bool Aligned, class T>
__device__ __forceinline__ void add_step(float (&acc)[W], const T *p) {
  if constexpr (Aligned) {
    typedef kiln_vec_traits<W, T> traits;
    alignas(16) T t[W];
#pragma unroll
    for (int k = 0; k < traits::bytes / traits::chunk; ++k)
      reinterpret_cast<typename traits::type *>(t)[k] =
          __ldg(reinterpret_cast<const typename traits::type *>(p) + k);
#pragma unroll
    for (int e = 0; e < W; ++e)
      acc[e] += kiln_load(t[e]);
  } else {
#pragma unroll
    for (int e = 0; e < W; ++e)
      acc[e] += kiln_load(__ldg(p + e));
  }
}
template <int W, bool Aligned, class T>
__device__ __forceinline__ void store_step(T *p, const float (&acc)[W]) {
  alignas(16) T t[W];
#pragma unroll
  for (int e = 0; e < W; ++e)
    kiln_store(&t[e], acc[e]);
  if constexpr (Aligned) {
    kiln_store_vec<W>(p, t);
  } else {
#pragma unroll
    for (int e = 0; e < W; ++e)
      p[e] = t[e];
  }
}

// One warp per chunk of 32 sorted lookups: marks where each row's run
// starts and ends, and when the chunk's first run began in an earlier chunk,
// stores that run's sum over this chunk as the chunk's f32 partial row.
template <class Cfg, bool Aligned, class T>
__device__ __forceinline__ void
chunk_partial(int lane, long long chunk, int length, const int *positions,
              const T *__restrict__ grad, float *__restrict__ partial) {
  using idx_t = typename Cfg::idx_t;
  constexpr int W = Cfg::width;
  constexpr idx_t d = (idx_t)Cfg::d;
  float *dst = partial + (idx_t)chunk * d;
  for (idx_t col = (idx_t)lane * W; col < d; col += 32 * W) {
    float acc[W];
#pragma unroll
    for (int e = 0; e < W; ++e)
      acc[e] = 0.f;
#pragma unroll 4
    for (int k = 0; k < length; ++k)
      add_step<W, Aligned>(acc, grad + (idx_t)positions[k] * d + col);
    store_step<W, true>(dst + col, acc);
  }
}

template <class Cfg, class T>
__device__ __forceinline__ void
segment_heads(const launch_ctx &ctx, const int *__restrict__ keys,
              const int *__restrict__ lookups, const T *__restrict__ grad,
              int2 *__restrict__ bounds, float *__restrict__ partial) {
  constexpr int kWarps = (int)(kChunkThreads / 32);
  __shared__ int positions[kWarps][32];
  const int lane = (int)(ctx.thread.x % 32), warp = (int)(ctx.thread.x / 32);
  const long long chunk = (long long)ctx.block.x * kWarps + warp;
  if (chunk >= Cfg::chunks)
    return; // the whole warp
  const long long j = chunk * kChunk + lane;
  const bool in = j < Cfg::n;
  const int key = in ? __ldg(keys + j) : -1;
  const int prev = in && j > 0 ? __ldg(keys + j - 1) : -1;
  const int next = in && j + 1 < Cfg::n ? __ldg(keys + j + 1) : -1;
  if (in && key < Cfg::v) {
    if (prev != key)
      bounds[key].x = (int)j;
    if (next != key)
      bounds[key].y = (int)(j + 1);
  }
  const int first = __shfl_sync(0xffffffffu, key, 0);
  const int before = __shfl_sync(0xffffffffu, prev, 0);
  if (chunk == 0 || first >= Cfg::v || before != first)
    return; // the whole warp: no partial
  // Equal keys are adjacent: the first run is the lanes from 0 on.
  const int length = __popc(__ballot_sync(0xffffffffu, in && key == first));
  positions[warp][lane] = in ? __ldg(lookups + j) : 0;
  __syncwarp();
  if (kiln_vec_aligned<Cfg::width>(grad))
    chunk_partial<Cfg, true>(lane, chunk, length, positions[warp], grad,
                             partial);
  else
    chunk_partial<Cfg, false>(lane, chunk, length, positions[warp], grad,
                              partial);
}

// One group of threads per table row: the row's run [start, end) of sorted
// lookups is summed in order, directly over its first chunk and through the
// partials of the chunks after it, then stored.
template <class Cfg, bool Aligned, class T>
__device__ __forceinline__ void
table_row(int lid, typename Cfg::idx_t row, int start, int end,
          const int *__restrict__ lookups, const T *__restrict__ grad,
          const float *__restrict__ partial, T *__restrict__ out) {
  using idx_t = typename Cfg::idx_t;
  constexpr int W = Cfg::width, G = Cfg::group;
  constexpr int K = Cfg::cached ? Cfg::steps : 1;
  constexpr idx_t d = (idx_t)Cfg::d;
  const int first_chunk = start / (int)kChunk;
  const int first_end = end < (first_chunk + 1) * (int)kChunk
                            ? end
                            : (first_chunk + 1) * (int)kChunk;
  const int last_chunk = end > start ? (end - 1) / (int)kChunk : first_chunk;
  T *dst = out + row * d;
  for (int k0 = 0; k0 < Cfg::steps; k0 += K) {
    float acc[K][W];
#pragma unroll
    for (int k = 0; k < K; ++k)
#pragma unroll
      for (int e = 0; e < W; ++e)
        acc[k][e] = 0.f;
#pragma unroll 2
    for (int j = start; j < first_end; ++j) {
      const T *src = grad + (idx_t)__ldg(lookups + j) * d;
#pragma unroll
      for (int k = 0; k < K; ++k) {
        const idx_t col = ((idx_t)(k0 + k) * G + lid) * W;
        if (col < d)
          add_step<W, Aligned>(acc[k], src + col);
      }
    }
    for (int c = first_chunk + 1; c <= last_chunk; ++c) {
      const float *src = partial + (idx_t)c * d;
#pragma unroll
      for (int k = 0; k < K; ++k) {
        const idx_t col = ((idx_t)(k0 + k) * G + lid) * W;
        if (col < d)
          add_step<W, true>(acc[k], src + col);
      }
    }
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const idx_t col = ((idx_t)(k0 + k) * G + lid) * W;
      if (col < d)
        store_step<W, Aligned>(dst + col, acc[k]);
    }
  }
}

template <class Cfg, class T>
__device__ __forceinline__ void
table_rows(const launch_ctx &ctx, const int *__restrict__ lookups,
           const T *__restrict__ grad, const int2 *__restrict__ bounds,
           const float *__restrict__ partial, T *__restrict__ out) {
  using idx_t = typename Cfg::idx_t;
  const int lid = (int)(ctx.thread.x % Cfg::group);
  const idx_t row = (idx_t)ctx.block.x * Cfg::rows_per_block +
                    (idx_t)(ctx.thread.x / Cfg::group);
  if (row >= (idx_t)Cfg::v)
    return;
  int start = 0, end = 0;
  if constexpr (Cfg::n > 0) {
    const int2 run = __ldg(bounds + row);
    start = run.x;
    end = run.y;
  }
  if (kiln_vec_aligned<Cfg::width>(grad) && kiln_vec_aligned<Cfg::width>(out))
    table_row<Cfg, true>(lid, row, start, end, lookups, grad, partial, out);
  else
    table_row<Cfg, false>(lid, row, start, end, lookups, grad, partial, out);
}

} // namespace embedding
} // namespace kiln
