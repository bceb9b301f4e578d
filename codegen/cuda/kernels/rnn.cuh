//===- rnn.cuh - persistent fused kernels of kiln.rnn and its backward ----===//
//
// Forward: one launch runs all T steps. Each block keeps its units' rows of
// every gate's R in registers as mma fragments (loaded once), the biases
// and the cell states of the units it owns in registers, and the whole
// previous h of its batch tile in shared memory; per step its warps form
// partial products R_g h for its units on tensor cores (split over the D
// reduction), then every thread takes its cells: adds the partials, Wx_t
// (read once, one step ahead) and the bias, runs the cell, stores the
// states and passes the new h to the group's blocks (rnn_layout.cuh:
// block, cluster or grid group).
//
// Backward (backpropagation through time): one launch walks the steps
// back. Per step each block recomputes its units' recurrent products from
// the stored states (the same fragments), applies the cell's chain rule,
// stores d(Wx) (and for gru the gradient of R_0 h), and multiplies its
// gate gradients by R^T with a second set of fragments: a partial
// dh_prev over all units of the head, which the group sums in a fixed
// order (deterministic). dR and db follow as a GEMM and column sums over
// B * T with f32 partials summed in order (no floating-point atomics).
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/cluster.cuh"
#include "kiln/memory.cuh"
#include "kiln/prelude.cuh"
#include "kiln/rnn_cells.cuh"
#include "kiln/rnn_layout.cuh"
#include "kiln/rnn_mma.cuh"

namespace kiln {
namespace rnn {

// One recurrent layer: function F, storage type T, mma kind, B batch rows,
// TN steps, NH heads of D units; BT batch rows per group, U units per
// block, K blocks per group, KS splits of the reduction, the group's sync.
// SPLAT0: the initial states are one value (a launch argument); D_STATES,
// D_LAST: the backward pass reads the gradient of every state / of the
// last states (else they are zero).
template <int F, class T, int KIND, long long B, long long TN, int NH, int D,
          int BT, int U, int K, int KS, int SYNC, bool SPLAT0, bool D_STATES,
          bool D_LAST>
struct rnn_config {
  typedef T element;
  typedef typename operand_of<KIND>::type operand;
  static constexpr int f = F, kind = KIND, nh = NH, d = D, bt = BT, u = U,
                       k = K, ks = KS, sync = SYNC;
  static constexpr long long b = B, t = TN;
  static constexpr bool splat0 = SPLAT0, d_states = D_STATES, d_last = D_LAST;
  static constexpr int G = gates_r(F), GW = gates_w(F), GB = gates_b(F),
                       S = num_states(F);
  static constexpr int KSTEP = mma_k(KIND);
  static constexpr long long DP = padded(D);
  static constexpr int KSW = ksteps_per_warp(D, KIND, KS);
  static constexpr int UG = unit_groups(U);
  static constexpr int WARPS = warps(U, KS);
  static constexpr int THREADS = WARPS * 32;
  static constexpr int MT = BT / kMmaRows;
  static constexpr long long H_PITCH = row_pitch(DP, KIND);
  static constexpr long long A_PITCH = row_pitch(padded(G * U), KIND);
  static constexpr int CPT = cells_per_thread(BT, U, THREADS);
  static constexpr long long UP = partial_pitch(U);
  static constexpr int NT = ntiles(D);
  static constexpr int TG = transposed_groups(F, D, U, KS, KIND);
  static constexpr int NTW = transposed_ntiles(D, U, KS);
  static constexpr int TKSW = transposed_ksteps_per_warp(F, D, U, KS, KIND);
  static constexpr bool fast = KIND < kTf32;
  static constexpr long long HD = (long long)NH * D;
  static constexpr long long ROWS = B * TN;
  static_assert(U % kUnitGroup == 0 && BT % kMmaRows == 0, "rnn tile");
  static_assert((long long)K * U >= D, "the group covers the head");
  static_assert(THREADS <= 1024, "rnn block");
};

// ---------------------------------------------------------------------------
// Group synchronisation.

__device__ __forceinline__ void cluster_sync() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cluster::sync();
#else
  __trap();
#endif
}

// Stores `v` at the same shared offset as `local` in block `rank` of the
// cluster.
template <class O>
__device__ __forceinline__ void store_to_rank(O *local, unsigned rank,
                                              float v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const unsigned addr = (unsigned)__cvta_generic_to_shared(local);
  const unsigned remote = cluster::map_shared(addr, rank);
  if constexpr (sizeof(O) == 4) {
    cluster::store_shared(remote, v);
  } else {
    O x;
    kiln_store(&x, v);
    cluster::store_shared(remote, bits16(x));
  }
#else
  __trap();
#endif
}

// A grid group's barrier: every block adds one to the group's counter and
// waits until all K have arrived `target / K` times. Release and acquire at
// GPU scope order the blocks' global stores and loads around it.
__device__ __forceinline__ void
group_barrier(unsigned *counter, unsigned target, unsigned thread) {
  __syncthreads();
  if (thread == 0) {
    __threadfence();
    mem::release_increment(counter);
    unsigned seen;
    do {
      seen = mem::acquire_load(counter);
    } while (seen < target);
  }
  __syncthreads();
}

// Loads what another block may have stored in this launch (not from L1).
template <class T>
__device__ __forceinline__ float load_shared_global(const T *p) {
  return kiln_load(__ldcg(p));
}

// ---------------------------------------------------------------------------
// Where a thread works.

template <class C> struct place {
  int tid, lane, warp, ug, split, rank, head, unit0;
  long long group, row0;

  __device__ __forceinline__ place(const launch_ctx &ctx, int group_offset) {
    tid = (int)ctx.thread.x;
    lane = tid % 32;
    warp = tid / 32;
    ug = warp % C::UG;
    split = warp / C::UG;
    rank = (int)ctx.block.x;
    group = (long long)ctx.block.y + group_offset;
    head = (int)(group % C::nh);
    row0 = (group / C::nh) * C::bt;
    unit0 = rank * C::u;
  }
  // Cell j of the thread: its row in the tile and unit in the block.
  __device__ __forceinline__ int cell(int j) const {
    return tid + j * C::THREADS;
  }
  __device__ __forceinline__ int cell_row(int j) const {
    return cell(j) / C::u;
  }
  __device__ __forceinline__ int cell_unit(int j) const {
    return cell(j) % C::u;
  }
  __device__ __forceinline__ bool has_cell(int j) const {
    return cell(j) < C::bt * C::u;
  }
  __device__ __forceinline__ bool valid(int j) const {
    return has_cell(j) && row0 + cell_row(j) < C::b &&
           unit0 + cell_unit(j) < C::d;
  }
};

// The forward fragments of the block's rows of R: gate g, the warp's
// k-steps.
template <class C>
__device__ __forceinline__ void
load_forward_fragments(unsigned (&rf)[C::G][C::KSW][2],
                       const typename C::element *__restrict__ r,
                       const place<C> &at) {
#pragma unroll
  for (int g = 0; g < C::G; ++g)
#pragma unroll
    for (int j = 0; j < C::KSW; ++j) {
      const long long k0 = (long long)(at.split * C::KSW + j) * C::KSTEP;
      load_b<C::kind>(rf[g][j], at.lane, [=](int kq, int n) -> float {
        const int dd = at.unit0 + at.ug * kUnitGroup + n;
        const long long p = k0 + kq;
        return dd < C::d && p < C::d
                   ? kiln_load(
                         r[((long long)(g * C::nh + at.head) * C::d + dd) *
                               C::d +
                           p])
                   : 0.f;
      });
    }
}

// The warp's share of R_g h for the block's rows: the products over its
// k-steps, stored as f32 partials [split][g][row][unit] for the cells to
// add.
template <class C>
__device__ __forceinline__ void
recurrent_products(float *part, const unsigned (&rf)[C::G][C::KSW][2],
                   const typename C::operand *h, const place<C> &at) {
  float acc[C::MT][C::G][4];
#pragma unroll
  for (int mt = 0; mt < C::MT; ++mt)
#pragma unroll
    for (int g = 0; g < C::G; ++g)
#pragma unroll
      for (int i = 0; i < 4; ++i)
        acc[mt][g][i] = 0.f;
#pragma unroll
  for (int j = 0; j < C::KSW; ++j) {
    const int k0 = (at.split * C::KSW + j) * C::KSTEP;
    if (k0 < C::DP) {
#pragma unroll
      for (int mt = 0; mt < C::MT; ++mt) {
        unsigned a[4];
        load_a<C::kind>(a, h, C::H_PITCH, mt * kMmaRows, k0, at.lane);
#pragma unroll
        for (int g = 0; g < C::G; ++g)
          mma<C::kind>(acc[mt][g], a, rf[g][j]);
      }
    }
  }
  const int gid = at.lane / 4, tig = at.lane % 4;
#pragma unroll
  for (int mt = 0; mt < C::MT; ++mt)
#pragma unroll
    for (int g = 0; g < C::G; ++g)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int row = mt * kMmaRows + gid + 8 * half;
        float *to = part + ((at.split * C::G + g) * C::bt + row) * C::UP +
                    at.ug * kUnitGroup + 2 * tig;
        *reinterpret_cast<float2 *>(to) =
            make_float2(acc[mt][g][2 * half], acc[mt][g][2 * half + 1]);
      }
}

// R_g h of cell j: the sum of the splits' partials, in order.
template <class C>
__device__ __forceinline__ void
products_of(float (&rh)[C::G], const float *part, const place<C> &at, int j) {
  const int row = at.cell_row(j), u = at.cell_unit(j);
#pragma unroll
  for (int g = 0; g < C::G; ++g) {
    float sum = 0.f;
#pragma unroll
    for (int s = 0; s < C::ks; ++s)
      sum += part[((s * C::G + g) * C::bt + row) * C::UP + u];
    rh[g] = sum;
  }
}

// Offsets into the [S, B, T, NH, D] states, [S, B, NH, D] initial/last
// states and [B, T, Gw, NH, D] input.
template <class C>
__device__ __forceinline__ long long all_at(int s, long long b, long long t,
                                            int head, long long d) {
  return ((s * C::b + b) * C::t + t) * C::HD + head * (long long)C::d + d;
}
template <class C>
__device__ __forceinline__ long long last_at(int s, long long b, int head,
                                             long long d) {
  return (s * C::b + b) * C::HD + head * (long long)C::d + d;
}
template <class C>
__device__ __forceinline__ long long input_at(long long b, long long t, int g,
                                              int head, long long d) {
  return ((b * C::t + t) * C::GW + g) * C::HD + head * (long long)C::d + d;
}

// State s of row b before step t (t = 0: the initial states).
template <class C>
__device__ __forceinline__ float
state_before(const typename C::element *__restrict__ states,
             const typename C::element *__restrict__ s0, float s0_splat, int s,
             long long b, long long t, int head, long long d) {
  if (t > 0)
    return kiln_load(states[all_at<C>(s, b, t - 1, head, d)]);
  if constexpr (C::splat0)
    return s0_splat;
  else
    return kiln_load(s0[last_at<C>(s, b, head, d)]);
}

// Zero `n` shared elements of type O, cooperatively.
template <class O>
__device__ __forceinline__ void zero_shared(O *p, long long n, int thread,
                                            int threads) {
  for (long long i = thread; i < n; i += threads)
    kiln_store(p + i, 0.f);
}

// h of every unit of the tile's rows into shared rows: `row_at(b)` is the
// first element of batch row b's D units (null: the splat `fill`). In 16-byte
// pieces where the rows allow it; `coherent` loads bypass L1 (what other
// blocks stored during this launch).
template <class C, bool Coherent, class RowAt>
__device__ __forceinline__ void load_h_rows(typename C::operand *h,
                                            RowAt row_at, float fill,
                                            long long row0, int thread) {
  typedef typename C::element T;
  constexpr int V = 16 / (int)sizeof(T);
  constexpr bool vector = sizeof(T) == sizeof(typename C::operand) &&
                          C::d % V == 0 && C::HD % V == 0 &&
                          C::H_PITCH % V == 0;
  if constexpr (vector) {
    constexpr int pieces = C::d / V;
    for (int e = thread; e < C::bt * pieces; e += C::THREADS) {
      const int row = e / pieces, piece = e % pieces;
      if (row0 + row >= C::b)
        continue;
      const T *src = row_at(row0 + row);
      uint4 v;
      if (src == nullptr) {
        T x[V];
#pragma unroll
        for (int i = 0; i < V; ++i)
          kiln_store(x + i, fill);
        v = *reinterpret_cast<const uint4 *>(x);
      } else if constexpr (Coherent) {
        v = __ldcg(reinterpret_cast<const uint4 *>(src) + piece);
      } else {
        v = *(reinterpret_cast<const uint4 *>(src) + piece);
      }
      *reinterpret_cast<uint4 *>(h + row * C::H_PITCH + piece * V) = v;
    }
  } else {
    for (long long e = thread; e < (long long)C::bt * C::d; e += C::THREADS) {
      const int row = (int)(e / C::d), p = (int)(e % C::d);
      if (row0 + row >= C::b)
        continue;
      const T *src = row_at(row0 + row);
      float v = fill;
      if (src != nullptr)
        v = Coherent ? load_shared_global(src + p) : kiln_load(src[p]);
      kiln_store(h + row * C::H_PITCH + p, v);
    }
  }
}

// Row b of h before step t: in the states, or the initial states (null when
// they are a splat).
template <class C>
__device__ __forceinline__ const typename C::element *
h_row_before(const typename C::element *states, const typename C::element *s0,
             long long b, long long t, int head) {
  if (t > 0)
    return states + all_at<C>(0, b, t - 1, head, 0);
  if constexpr (C::splat0)
    return nullptr;
  else
    return s0 + last_at<C>(0, b, head, 0);
}

// ---------------------------------------------------------------------------
// Forward.

template <class C>
__device__ __forceinline__ void
forward(const launch_ctx &ctx, const typename C::element *__restrict__ wx,
        const typename C::element *__restrict__ r,
        const typename C::element *__restrict__ bias,
        const typename C::element *__restrict__ s0, float s0_splat,
        typename C::element *__restrict__ states,
        typename C::element *__restrict__ last, unsigned *__restrict__ counters,
        int group_offset) {
  typedef typename C::operand O;
  extern __shared__ __align__(16) unsigned char kiln_rnn_smem[];
  O *hbuf = reinterpret_cast<O *>(kiln_rnn_smem);
  float *part = reinterpret_cast<float *>(hbuf + 2 * C::bt * C::H_PITCH);
  const place<C> at(ctx, group_offset);
  const int tid = at.tid;

  unsigned rf[C::G][C::KSW][2];
  load_forward_fragments<C>(rf, r, at);

  // The biases and states of the thread's cells; h before step 0 in
  // buffer 0.
  float bv[C::CPT][C::GB], st[C::CPT][C::S];
#pragma unroll
  for (int j = 0; j < C::CPT; ++j) {
    const int dd = at.unit0 + at.cell_unit(j);
    const bool valid = at.valid(j);
#pragma unroll
    for (int g = 0; g < C::GB; ++g)
      bv[j][g] = valid ? kiln_load(bias[g * C::HD + at.head * C::d + dd]) : 0.f;
#pragma unroll
    for (int s = 0; s < C::S; ++s)
      st[j][s] = valid
                     ? state_before<C>(states, s0, s0_splat, s,
                                       at.row0 + at.cell_row(j), 0, at.head, dd)
                     : 0.f;
  }
  zero_shared(hbuf, 2 * C::bt * C::H_PITCH, tid, C::THREADS);
  __syncthreads();
  load_h_rows<C, false>(
      hbuf,
      [&](long long b) { return h_row_before<C>(states, s0, b, 0, at.head); },
      s0_splat, at.row0, tid);
  if constexpr (C::sync == kSyncCluster)
    cluster_sync();
  else
    __syncthreads();

  auto load_input = [&](long long t, float(&x)[C::CPT][C::GW]) {
#pragma unroll
    for (int j = 0; j < C::CPT; ++j)
#pragma unroll
      for (int g = 0; g < C::GW; ++g)
        x[j][g] =
            at.valid(j)
                ? kiln_load(
                      wx[input_at<C>(at.row0 + at.cell_row(j), t, g, at.head,
                                     at.unit0 + at.cell_unit(j))])
                : 0.f;
  };
  float xn[C::CPT][C::GW];
  load_input(0, xn);

  for (int t = 0; t < (int)C::t; ++t) {
    const O *hc = hbuf + (t & 1) * C::bt * C::H_PITCH;
    O *hn = hbuf + ((t + 1) & 1) * C::bt * C::H_PITCH;
    float x[C::CPT][C::GW];
#pragma unroll
    for (int j = 0; j < C::CPT; ++j)
#pragma unroll
      for (int g = 0; g < C::GW; ++g)
        x[j][g] = xn[j][g];
    if (t + 1 < C::t)
      load_input(t + 1, xn);

    recurrent_products<C>(part, rf, hc, at);
    __syncthreads();

#pragma unroll
    for (int j = 0; j < C::CPT; ++j) {
      if (!at.has_cell(j))
        continue;
      float rh[C::G];
      products_of<C>(rh, part, at, j);
      cell_forward<C::f, C::fast>(x[j], rh, bv[j], st[j]);
      if (!at.valid(j))
        continue;
      const int row = at.cell_row(j);
      const long long b = at.row0 + row;
      const int dd = at.unit0 + at.cell_unit(j);
#pragma unroll
      for (int s = 0; s < C::S; ++s)
        kiln_store(states + all_at<C>(s, b, t, at.head, dd), st[j][s]);
      if constexpr (C::sync == kSyncBlock) {
        kiln_store(hn + row * C::H_PITCH + dd, st[j][0]);
      } else if constexpr (C::sync == kSyncCluster) {
        for (int q = 0; q < C::k; ++q)
          store_to_rank(hn + row * C::H_PITCH + dd, (unsigned)q, st[j][0]);
      }
    }

    if constexpr (C::sync == kSyncBlock) {
      __syncthreads();
    } else if constexpr (C::sync == kSyncCluster) {
      cluster_sync();
    } else if (t + 1 < C::t) {
      group_barrier(counters + at.group, (unsigned)((t + 1) * C::k),
                    (unsigned)tid);
      load_h_rows<C, true>(
          hn,
          [&](long long b) {
            return h_row_before<C>(states, s0, b, t + 1, at.head);
          },
          0.f, at.row0, tid);
      __syncthreads();
    }
  }

  if (last) {
#pragma unroll
    for (int j = 0; j < C::CPT; ++j)
      if (at.valid(j))
#pragma unroll
        for (int s = 0; s < C::S; ++s)
          kiln_store(last + last_at<C>(s, at.row0 + at.cell_row(j), at.head,
                                       at.unit0 + at.cell_unit(j)),
                     st[j][s]);
  }
  // No block of a cluster leaves while a peer may still store into it.
  if constexpr (C::sync == kSyncCluster)
    cluster_sync();
}

// ---------------------------------------------------------------------------
// Backward.

template <class C>
__device__ __forceinline__ void
backward(const launch_ctx &ctx, const typename C::element *__restrict__ wx,
         const typename C::element *__restrict__ r,
         const typename C::element *__restrict__ bias,
         const typename C::element *__restrict__ s0, float s0_splat,
         const typename C::element *__restrict__ states,
         const typename C::element *__restrict__ d_states,
         const typename C::element *__restrict__ d_last,
         typename C::element *__restrict__ d_input,
         typename C::element *__restrict__ d_rh0,
         typename C::element *__restrict__ d_states0,
         float *__restrict__ partials, unsigned *__restrict__ counters,
         int group_offset) {
  typedef typename C::operand O;
  extern __shared__ __align__(16) unsigned char kiln_rnn_smem[];
  O *hbuf = reinterpret_cast<O *>(kiln_rnn_smem);
  O *abuf = hbuf + C::bt * C::H_PITCH;
  float *part = reinterpret_cast<float *>(abuf + C::bt * C::A_PITCH);
  float *incoming = part + C::ks * C::G * C::bt * C::UP;
  const place<C> at(ctx, group_offset);
  const int tid = at.tid;

  unsigned rf[C::G][C::KSW][2];
  load_forward_fragments<C>(rf, r, at);
  // The transposed product: k = (gate, unit of the block) rows, n = units p
  // of the head. Warp w takes n-tiles tile(nt) and transposed group tg.
  const int tg = C::TG > 1 ? at.warp / C::NT : 0;
  const bool transposing = tg < C::TG;
  auto tile = [&](int nt) {
    return C::TG > 1 || C::NTW == 1 ? (C::TG > 1 ? at.warp % C::NT : at.warp)
                                    : at.warp + nt * C::WARPS;
  };
  unsigned rt[C::NTW][C::TKSW][2];
#pragma unroll
  for (int nt = 0; nt < C::NTW; ++nt)
#pragma unroll
    for (int kk = 0; kk < C::TKSW; ++kk) {
      const int p0 = tile(nt) * 8;
      const int k0 = (tg * C::TKSW + kk) * C::KSTEP;
      load_b<C::kind>(rt[nt][kk], at.lane, [=](int kq, int n) -> float {
        const int k = k0 + kq, p = p0 + n;
        if (!transposing || k >= C::G * C::u || p >= C::d)
          return 0.f;
        const int g = k / C::u, dd = at.unit0 + k % C::u;
        return dd < C::d
                   ? kiln_load(
                         r[((long long)(g * C::nh + at.head) * C::d + dd) *
                               C::d +
                           p])
                   : 0.f;
      });
    }

  float bv[C::CPT][C::GB];
#pragma unroll
  for (int j = 0; j < C::CPT; ++j) {
    const int dd = at.unit0 + at.cell_unit(j);
#pragma unroll
    for (int g = 0; g < C::GB; ++g)
      bv[j][g] =
          at.valid(j) ? kiln_load(bias[g * C::HD + at.head * C::d + dd]) : 0.f;
  }

  // carried: the gradient of the states before the step just done, without
  // the path through R h, which arrives in dh (the group's sum).
  float carried[C::CPT][C::S], dh[C::CPT];
#pragma unroll
  for (int j = 0; j < C::CPT; ++j) {
    dh[j] = 0.f;
#pragma unroll
    for (int s = 0; s < C::S; ++s)
      carried[j][s] = 0.f;
  }
  zero_shared(hbuf, C::bt * C::H_PITCH, tid, C::THREADS);
  zero_shared(abuf, C::bt * C::A_PITCH, tid, C::THREADS);
  if constexpr (C::sync == kSyncCluster) {
    zero_shared(incoming, 2LL * C::k * C::TG * C::bt * C::u, tid, C::THREADS);
    cluster_sync();
  } else {
    __syncthreads();
  }

  for (int t = (int)C::t - 1; t >= 0; --t) {
    const int parity = (int)(t & 1);
    // h before the step, for the recomputed products.
    load_h_rows<C, false>(
        hbuf,
        [&](long long b) { return h_row_before<C>(states, s0, b, t, at.head); },
        s0_splat, at.row0, tid);
    __syncthreads();
    recurrent_products<C>(part, rf, hbuf, at);
    __syncthreads();

#pragma unroll
    for (int j = 0; j < C::CPT; ++j) {
      if (!at.has_cell(j))
        continue;
      const int row = at.cell_row(j), u = at.cell_unit(j);
      const long long b = at.row0 + row;
      const int dd = at.unit0 + u;
      const bool valid = at.valid(j);
      float x[C::GW], rh[C::G], prev[C::S], d_next[C::S];
      products_of<C>(rh, part, at, j);
#pragma unroll
      for (int g = 0; g < C::GW; ++g)
        x[g] = valid ? kiln_load(wx[input_at<C>(b, t, g, at.head, dd)]) : 0.f;
#pragma unroll
      for (int s = 0; s < C::S; ++s) {
        prev[s] =
            valid ? state_before<C>(states, s0, s0_splat, s, b, t, at.head, dd)
                  : 0.f;
        float g = carried[j][s] + (s == 0 ? dh[j] : 0.f);
        if constexpr (C::d_states)
          g += valid ? kiln_load(d_states[all_at<C>(s, b, t, at.head, dd)])
                     : 0.f;
        if constexpr (C::d_last)
          g += valid && t == C::t - 1
                   ? kiln_load(d_last[last_at<C>(s, b, at.head, dd)])
                   : 0.f;
        d_next[s] = g;
      }
      float gx[C::GW], grh[C::G], gprev[C::S];
      cell_backward<C::f, C::fast>(x, rh, bv[j], prev, d_next, gx, grh, gprev);
      if (valid) {
#pragma unroll
        for (int g = 0; g < C::GW; ++g)
          kiln_store(d_input + input_at<C>(b, t, g, at.head, dd), gx[g]);
        if constexpr (C::f == kGru)
          kiln_store(d_rh0 + (b * C::t + t) * C::HD + at.head * C::d + dd,
                     grh[0]);
      }
#pragma unroll
      for (int g = 0; g < C::G; ++g)
        kiln_store(abuf + row * C::A_PITCH + g * C::u + u,
                   valid ? grh[g] : 0.f);
#pragma unroll
      for (int s = 0; s < C::S; ++s)
        carried[j][s] = valid ? gprev[s] : 0.f;
    }
    __syncthreads();

    // The block's share of dh_prev = sum over its (gate, unit) rows, for
    // the warp's n-tiles and k-steps.
    if (transposing) {
      float dacc[C::MT][C::NTW][4];
#pragma unroll
      for (int mt = 0; mt < C::MT; ++mt)
#pragma unroll
        for (int nt = 0; nt < C::NTW; ++nt)
#pragma unroll
          for (int i = 0; i < 4; ++i)
            dacc[mt][nt][i] = 0.f;
#pragma unroll
      for (int kk = 0; kk < C::TKSW; ++kk) {
        const int k0 = (tg * C::TKSW + kk) * C::KSTEP;
        if (k0 >= C::G * C::u)
          continue;
#pragma unroll
        for (int mt = 0; mt < C::MT; ++mt) {
          unsigned a[4];
          load_a<C::kind>(a, abuf, C::A_PITCH, mt * kMmaRows, k0, at.lane);
#pragma unroll
          for (int nt = 0; nt < C::NTW; ++nt)
            mma<C::kind>(dacc[mt][nt], a, rt[nt][kk]);
        }
      }
      const int gid = at.lane / 4, tig = at.lane % 4;
#pragma unroll
      for (int mt = 0; mt < C::MT; ++mt)
#pragma unroll
        for (int nt = 0; nt < C::NTW; ++nt)
#pragma unroll
          for (int i = 0; i < 4; ++i) {
            const int row = mt * kMmaRows + gid + 8 * (i >> 1);
            const int p = tile(nt) * 8 + 2 * tig + (i & 1);
            if (p >= C::d)
              continue;
            if constexpr (C::sync == kSyncBlock) {
              incoming[(tg * C::bt + row) * C::DP + p] = dacc[mt][nt][i];
            } else if constexpr (C::sync == kSyncCluster) {
              store_to_rank(
                  incoming +
                      (((parity * C::k + at.rank) * C::TG + tg) * C::bt + row) *
                          C::u +
                      p % C::u,
                  (unsigned)(p / C::u), dacc[mt][nt][i]);
            } else {
              partials[((((at.group * 2 + parity) * C::k + at.rank) * C::TG +
                         tg) *
                            C::bt +
                        row) *
                           C::DP +
                       p] = dacc[mt][nt][i];
            }
          }
    }
    if constexpr (C::sync == kSyncBlock)
      __syncthreads();
    else if constexpr (C::sync == kSyncCluster)
      cluster_sync();
    else
      group_barrier(counters + at.group, (unsigned)((C::t - t) * C::k),
                    (unsigned)tid);

#pragma unroll
    for (int j = 0; j < C::CPT; ++j) {
      const int row = at.cell_row(j), u = at.cell_unit(j);
      float sum = 0.f;
      if (at.valid(j)) {
        if constexpr (C::sync == kSyncBlock) {
          for (int g = 0; g < C::TG; ++g)
            sum += incoming[(g * C::bt + row) * C::DP + at.unit0 + u];
        } else if constexpr (C::sync == kSyncCluster) {
          for (int q = 0; q < C::k; ++q)
            for (int g = 0; g < C::TG; ++g)
              sum +=
                  incoming[(((parity * C::k + q) * C::TG + g) * C::bt + row) *
                               C::u +
                           u];
        } else {
          for (int q = 0; q < C::k; ++q)
            for (int g = 0; g < C::TG; ++g)
              sum += __ldcg(
                  partials +
                  ((((at.group * 2 + parity) * C::k + q) * C::TG + g) * C::bt +
                   row) *
                      C::DP +
                  at.unit0 + u);
        }
      }
      dh[j] = sum;
    }
  }

  if (d_states0) {
#pragma unroll
    for (int j = 0; j < C::CPT; ++j)
      if (at.valid(j))
#pragma unroll
        for (int s = 0; s < C::S; ++s)
          kiln_store(d_states0 + last_at<C>(s, at.row0 + at.cell_row(j),
                                            at.head,
                                            at.unit0 + at.cell_unit(j)),
                     carried[j][s] + (s == 0 ? dh[j] : 0.f));
  }
  if constexpr (C::sync == kSyncCluster)
    cluster_sync();
}

// ---------------------------------------------------------------------------
// Weight and bias gradients.

// The gradient of R_g h (gate g) at (row kr = b * T + t, unit hd of all
// heads): the input gradient of the same gate, except gru's gate 0 (its own
// buffer) and its gates 1 and 2 (the input gradients of gates 0 and 1). It
// is also the gradient of bias gate g's term: gru's bias gate 3 reads the
// input gradient of gate 2.
template <class C>
__device__ __forceinline__ float
recurrent_grad(const typename C::element *__restrict__ d_input,
               const typename C::element *__restrict__ d_rh0, int g,
               long long kr, long long hd) {
  if constexpr (C::f == kGru) {
    if (g == 0)
      return kiln_load(d_rh0[kr * C::HD + hd]);
    return kiln_load(d_input[(kr * C::GW + g - 1) * C::HD + hd]);
  } else {
    return kiln_load(d_input[(kr * C::GW + g) * C::HD + hd]);
  }
}

// dR partials: block (tile of d, tile of p) x (gate, head) x split writes
// f32 partial[split][g][head][d][p] = sum over its rows of
// a_g[row, d] h_prev[row, p]. 128 threads.
template <class C>
__device__ __forceinline__ void
weight_gradient(const launch_ctx &ctx,
                const typename C::element *__restrict__ d_input,
                const typename C::element *__restrict__ d_rh0,
                const typename C::element *__restrict__ states,
                const typename C::element *__restrict__ s0, float s0_splat,
                float *__restrict__ partial, long long split_rows) {
  typedef typename C::operand O;
  constexpr long long P = row_pitch(kWeightChunk, C::kind);
  __shared__ __align__(16) O as[kWeightTile * P];
  __shared__ __align__(16) O bs[kWeightTile * P];
  constexpr long long tiles = weight_tiles(C::d);
  const int tid = (int)ctx.thread.x, lane = tid % 32, warp = tid / 32;
  const long long tile_d = ctx.block.x / tiles, tile_p = ctx.block.x % tiles;
  const int g = (int)(ctx.block.y / C::nh), head = (int)(ctx.block.y % C::nh);
  const long long begin = (long long)ctx.block.z * split_rows;
  long long end = begin + split_rows;
  if (end > C::ROWS)
    end = C::ROWS;
  // Thread's share of a chunk: row kq, 16 consecutive d (and p).
  const int kq = tid / 4, m0 = (tid % 4) * 16;
  float va[16], vb[16];
  auto fetch = [&](long long chunk) {
    const long long kr = chunk + kq;
    const bool in = kr < end;
    const long long b = in ? kr / C::t : 0, t = in ? kr % C::t : 0;
#pragma unroll
    for (int e = 0; e < 16; ++e) {
      const long long dd = tile_d * kWeightTile + m0 + e;
      const long long p = tile_p * kWeightTile + m0 + e;
      va[e] = in && dd < C::d ? recurrent_grad<C>(d_input, d_rh0, g, kr,
                                                  head * (long long)C::d + dd)
                              : 0.f;
      vb[e] = in && p < C::d
                  ? state_before<C>(states, s0, s0_splat, 0, b, t, head, p)
                  : 0.f;
    }
  };
  float acc[2][4][4];
#pragma unroll
  for (int mi = 0; mi < 2; ++mi)
#pragma unroll
    for (int ni = 0; ni < 4; ++ni)
#pragma unroll
      for (int i = 0; i < 4; ++i)
        acc[mi][ni][i] = 0.f;
  const int wm = warp / 2, wn = warp % 2;
  if (begin < end)
    fetch(begin);
  for (long long chunk = begin; chunk < end; chunk += kWeightChunk) {
    __syncthreads();
#pragma unroll
    for (int e = 0; e < 16; ++e) {
      kiln_store(as + (m0 + e) * P + kq, va[e]);
      kiln_store(bs + (m0 + e) * P + kq, vb[e]);
    }
    __syncthreads();
    if (chunk + kWeightChunk < end)
      fetch(chunk + kWeightChunk);
#pragma unroll
    for (int k0 = 0; k0 < kWeightChunk; k0 += C::KSTEP) {
      unsigned a[2][4], bf[4][2];
#pragma unroll
      for (int mi = 0; mi < 2; ++mi)
        load_a<C::kind>(a[mi], as, P, wm * 32 + mi * 16, k0, lane);
#pragma unroll
      for (int ni = 0; ni < 4; ++ni)
        load_b_rows<C::kind>(bf[ni], bs, P, wn * 32 + ni * 8, k0, lane);
#pragma unroll
      for (int mi = 0; mi < 2; ++mi)
#pragma unroll
        for (int ni = 0; ni < 4; ++ni)
          mma<C::kind>(acc[mi][ni], a[mi], bf[ni]);
    }
  }
  const int gid = lane / 4, tig = lane % 4;
  float *out = partial + ((ctx.block.z * C::G + g) * C::nh + head) *
                             (long long)C::d * C::d;
#pragma unroll
  for (int mi = 0; mi < 2; ++mi)
#pragma unroll
    for (int ni = 0; ni < 4; ++ni)
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const long long dd =
            tile_d * kWeightTile + wm * 32 + mi * 16 + gid + 8 * (i >> 1);
        const long long p =
            tile_p * kWeightTile + wn * 32 + ni * 8 + 2 * tig + (i & 1);
        if (dd < C::d && p < C::d)
          out[dd * C::d + p] = acc[mi][ni][i];
      }
}

// db partials: column c of [Gb, NH, D] summed over chunk ctx.block.y of the
// B * T rows into partial[chunk][c]. kBiasThreads threads.
template <class C>
__device__ __forceinline__ void
bias_partials(const launch_ctx &ctx,
              const typename C::element *__restrict__ d_input,
              const typename C::element *__restrict__ d_rh0,
              float *__restrict__ partial) {
  const long long c = (long long)ctx.block.x * kBiasThreads + ctx.thread.x;
  constexpr long long columns = (long long)C::GB * C::HD;
  if (c >= columns)
    return;
  const int g = (int)(c / C::HD);
  const long long hd = c % C::HD;
  const long long begin = (long long)ctx.block.y * kBiasChunk;
  const long long end =
      begin + kBiasChunk < C::ROWS ? begin + kBiasChunk : C::ROWS;
  float sum = 0.f;
  for (long long kr = begin; kr < end; ++kr)
    sum += recurrent_grad<C>(d_input, d_rh0, g, kr, hd);
  partial[ctx.block.y * columns + c] = sum;
}

// out[i] = sum over j < parts of partial[j * n + i], in order.
template <class T>
__device__ __forceinline__ void
sum_partials(const launch_ctx &ctx, const float *__restrict__ partial,
             long long n, int parts, T *__restrict__ out) {
  const long long i = (long long)ctx.block.x * kSumThreads + ctx.thread.x;
  if (i >= n)
    return;
  float sum = 0.f;
  for (int j = 0; j < parts; ++j)
    sum += partial[j * n + i];
  kiln_store(out + i, sum);
}

// Zeroes the grid groups' counters before a launch that uses them.
__device__ __forceinline__ void zero_counters(const launch_ctx &ctx,
                                              unsigned *__restrict__ counters,
                                              long long n) {
  const long long i = (long long)ctx.block.x * kSumThreads + ctx.thread.x;
  if (i < n)
    counters[i] = 0u;
}

} // namespace rnn
} // namespace kiln
