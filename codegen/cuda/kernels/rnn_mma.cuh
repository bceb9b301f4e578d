//===- rnn_mma.cuh - tensor-core fragments of the recurrent kernels -------===//
//
// The recurrent kernels multiply rows kept in shared memory ([row][k], k
// contiguous, rows padded by rnn_layout.cuh's row_pitch) by fragments kept
// in registers, with mma.sync: m16n8k16 for bf16/f16, m16n8k8 for f32 as
// tf32, once or as three products of high and low parts (kTf32x3), which
// keeps f32's accuracy over a long recurrence. Accumulators are f32: c0 c1
// at row gid, columns 2 tig and 2 tig + 1; c2 c3 at row gid + 8 (gid = lane
// / 4, tig = lane % 4).
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/gemm_mma.cuh"
#include "kiln/mma.cuh"
#include "kiln/rnn_layout.cuh"

namespace kiln {
namespace rnn {

// What the shared rows and the fragments hold: the storage type for 16-bit
// kinds, f32 for the tf32 kinds.
template <int Kind> struct operand_of { typedef float type; };
template <> struct operand_of<kBf16> { typedef __nv_bfloat16 type; };
template <> struct operand_of<kF16> { typedef __half type; };

__device__ __forceinline__ unsigned short bits16(__nv_bfloat16 x) {
  return __bfloat16_as_ushort(x);
}
__device__ __forceinline__ unsigned short bits16(__half x) {
  return __half_as_ushort(x);
}
__device__ __forceinline__ unsigned pack16(unsigned short lo,
                                           unsigned short hi) {
  return (unsigned)lo | ((unsigned)hi << 16);
}

// An element of a fragment kept in registers, from any storage type `T`
// (zero outside the operand): 16-bit kinds convert to their type, tf32 kinds
// keep the f32 bits (kTf32 rounds them to tf32 once, here).
template <int Kind> __device__ __forceinline__ unsigned short to16(float v) {
  if constexpr (Kind == kBf16)
    return bits16(__float2bfloat16_rn(v));
  else
    return bits16(__float2half_rn(v));
}

// The B fragment of one n-tile and k-step: `at(k, n)` gives the element
// (as f32) at reduction index k and column n of the tile.
template <int Kind, class At>
__device__ __forceinline__ void load_b(unsigned (&b)[2], int lane, At at) {
  const int gid = lane / 4, tig = lane % 4;
  if constexpr (Kind < kTf32) {
    b[0] =
        pack16(to16<Kind>(at(2 * tig, gid)), to16<Kind>(at(2 * tig + 1, gid)));
    b[1] = pack16(to16<Kind>(at(2 * tig + 8, gid)),
                  to16<Kind>(at(2 * tig + 9, gid)));
  } else if constexpr (Kind == kTf32) {
    b[0] = mma::to_tf32(at(tig, gid));
    b[1] = mma::to_tf32(at(tig + 4, gid));
  } else {
    b[0] = __float_as_uint(at(tig, gid));
    b[1] = __float_as_uint(at(tig + 4, gid));
  }
}

// The A fragment of rows [row0, row0 + 16) and k-step at k0 from shared rows
// of `pitch` elements.
template <int Kind>
__device__ __forceinline__ void
load_a(unsigned (&a)[4], const typename operand_of<Kind>::type *rows,
       long long pitch, int row0, int k0, int lane) {
  const int gid = lane / 4, tig = lane % 4;
  if constexpr (Kind < kTf32) {
    const auto *p = rows + (long long)(row0 + gid) * pitch + k0 + 2 * tig;
    a[0] = *reinterpret_cast<const unsigned *>(p);
    a[1] = *reinterpret_cast<const unsigned *>(p + 8 * pitch);
    a[2] = *reinterpret_cast<const unsigned *>(p + 8);
    a[3] = *reinterpret_cast<const unsigned *>(p + 8 * pitch + 8);
  } else {
    const float *p = rows + (long long)(row0 + gid) * pitch + k0 + tig;
    a[0] = __float_as_uint(p[0]);
    a[1] = __float_as_uint(p[8 * pitch]);
    a[2] = __float_as_uint(p[4]);
    a[3] = __float_as_uint(p[8 * pitch + 4]);
  }
}

// B fragment of n-tile rows [n0, n0 + 8) of [n][k] shared rows.
template <int Kind>
__device__ __forceinline__ void
load_b_rows(unsigned (&b)[2], const typename operand_of<Kind>::type *rows,
            long long pitch, int n0, int k0, int lane) {
  const int gid = lane / 4, tig = lane % 4;
  if constexpr (Kind < kTf32) {
    const auto *p = rows + (long long)(n0 + gid) * pitch + k0 + 2 * tig;
    b[0] = *reinterpret_cast<const unsigned *>(p);
    b[1] = *reinterpret_cast<const unsigned *>(p + 8);
  } else {
    const float *p = rows + (long long)(n0 + gid) * pitch + k0 + tig;
    b[0] = Kind == kTf32 ? mma::to_tf32(p[0]) : __float_as_uint(p[0]);
    b[1] = Kind == kTf32 ? mma::to_tf32(p[4]) : __float_as_uint(p[4]);
  }
}

template <int Kind>
__device__ __forceinline__ void mma(float (&c)[4], const unsigned (&a)[4],
                                    const unsigned (&b)[2]) {
  if constexpr (Kind == kBf16) {
    mma::fma<0>(c, a, b);
  } else if constexpr (Kind == kF16) {
    mma::fma<1>(c, a, b);
  } else if constexpr (Kind == kTf32) {
    const unsigned t[4] = {mma::to_tf32(__uint_as_float(a[0])),
                           mma::to_tf32(__uint_as_float(a[1])),
                           mma::to_tf32(__uint_as_float(a[2])),
                           mma::to_tf32(__uint_as_float(a[3]))};
    mma::fma<2>(c, t, b);
  } else {
    unsigned a_hi[4], a_lo[4], b_hi[2], b_lo[2];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float v = __uint_as_float(a[i]);
      a_hi[i] = mma::to_tf32(v);
      a_lo[i] = mma::to_tf32(v - __uint_as_float(a_hi[i]));
    }
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const float v = __uint_as_float(b[i]);
      b_hi[i] = mma::to_tf32(v);
      b_lo[i] = mma::to_tf32(v - __uint_as_float(b_hi[i]));
    }
    mma::fma<2>(c, a_lo, b_hi);
    mma::fma<2>(c, a_hi, b_lo);
    mma::fma<2>(c, a_hi, b_hi);
  }
}

} // namespace rnn
} // namespace kiln
