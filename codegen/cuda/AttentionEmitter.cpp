//===- AttentionEmitter.cpp - kernels of "attention" fusions --------------===//
//
// kiln.attention is a flash-attention forward: one block of 256 threads per
// (batch*head, tile of BM queries); K/V tiles of BN keys are staged in
// shared memory (as f32) and the softmax is computed online (running max and
// sum per query row, in the log2 domain with the scale folded into Q), so the
// score matrix never leaves the chip. Causal blocks stop at their last
// visible key tile (the mask is aligned to the ends: key j is visible to
// query i when j <= i + Tk - Tq).
//
// kiln.attention_backward recomputes the softmax and runs two kernels,
// neither with atomics:
//  1. over query tiles: the row statistics (log-sum-exp by a first sweep
//     over the keys, delta = rowsum(dO * O)) are left in scratch, and a
//     second sweep accumulates dq = scale * dS K in registers;
//  2. over key tiles: every query tile that sees the keys is visited,
//     P = exp(S - lse) and dS = P (dP - delta) are recomputed, and
//     dv = P^T dO and dk = scale * dS^T Q accumulate in registers.
//
// Threads form a 16x16 grid: thread (ty, tx) owns rows ty + 16 i and
// columns tx + 16 j of every tile product, accumulating in f32 with FMA on
// CUDA cores. Head dims are padded to multiples of 16 in shared memory
// (zeros). Tiles are 64x64 when they fit, else 32 or 16 (large head dims);
// head dims too large for 16-row tiles are rejected by matches().
//
// Every [B, H, T, D] operand and result is addressed through strides of its
// own (X_SB, X_SH, X_ST per tensor X; the head dim is contiguous): a fusion
// may hold transposes between its buffers and the op that keep the head dim
// innermost (q, k, v kept as [B, T, H, D] rows of a projection), and the
// kernels then read and write those buffers directly.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/AttentionEmitter.h"

#include "codegen/cuda/EmitterUtils.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

namespace mlir::kiln::codegen {
namespace {

/// Shared memory one block may use (of the 227 KiB an H200 SM offers).
constexpr int64_t kSharedLimit = 200 * 1024;

constexpr const char *kHelpers = R"cuda(
#define KILN_INF __int_as_float(0x7f800000)

// Key kj is visible to query qi (causal mask aligned to the ends).
__device__ __forceinline__ bool kiln_visible(int qi, int kj) {
  return kj < TK && (!CAUSAL || kj <= qi + (TK - TQ));
}

// Rows [row0, row0 + ROWS) of a [t, W] matrix with rows RS elements apart
// into shared [ROWS][LD] as f32 times `mul`; zeros beyond t rows and W
// columns (up to WP).
template <int ROWS, int W, int WP, int LD, long long RS>
__device__ __forceinline__ void kiln_load_tile(float *dst, const elem_t *__restrict__ src,
                                               int row0, int t, float mul) {
  for (int idx = threadIdx.x; idx < ROWS * WP; idx += 256) {
    const int r = idx / WP, e = idx % WP;
    float v = 0.f;
    if (row0 + r < t && e < W) v = kiln_load(src[(idx_t)(row0 + r) * RS + e]) * mul;
    dst[r * LD + e] = v;
  }
}

// acc[i][j] += sum_k a(i, k) * b(j, k) for this thread's RI x RJ outputs.
template <int RI, int RJ, int K, class A, class B>
__device__ __forceinline__ void kiln_tile_mma(float (&acc)[RI][RJ], A a, B b) {
#pragma unroll 4
  for (int k = 0; k < K; ++k) {
    float av[RI], bv[RJ];
#pragma unroll
    for (int i = 0; i < RI; ++i) av[i] = a(i, k);
#pragma unroll
    for (int j = 0; j < RJ; ++j) bv[j] = b(j, k);
#pragma unroll
    for (int i = 0; i < RI; ++i)
#pragma unroll
      for (int j = 0; j < RJ; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
  }
}

// Max and sum over the 16 threads (tx) that share a row.
__device__ __forceinline__ float kiln_row_max(float v) {
#pragma unroll
  for (int o = 8; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ __forceinline__ float kiln_row_sum(float v) {
#pragma unroll
  for (int o = 8; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

template <int R, int C>
__device__ __forceinline__ void kiln_zero(float (&a)[R][C]) {
#pragma unroll
  for (int i = 0; i < R; ++i)
#pragma unroll
    for (int j = 0; j < C; ++j) a[i][j] = 0.f;
}

// This thread's scores of a query tile against a key tile in shared memory:
// s[i][j] = q(row ty + 16 i) . k(row tx + 16 j).
template <int RM, int RN, int DP, int LQ, int LK>
__device__ __forceinline__ void kiln_scores(float (&s)[RM][RN], const float *sQ,
                                            const float *sK, int ty, int tx) {
  kiln_zero(s);
  kiln_tile_mma<RM, RN, DP>(s, [&](int i, int e) { return sQ[(ty + 16 * i) * LQ + e]; },
                            [&](int j, int e) { return sK[(tx + 16 * j) * LK + e]; });
}

// Masks the scores of the key tile at k0 and advances the online softmax of
// rows q0 + ty + 16 i: m becomes the running row maximum, l is rescaled to
// it, and alpha holds the factor for sums kept elsewhere (a row masked so
// far keeps maximum -inf and factor 1).
template <int RM, int RN>
__device__ __forceinline__ void kiln_online_max(float (&s)[RM][RN], float (&m)[RM],
                                                float (&l)[RM], float (&alpha)[RM],
                                                int q0, int k0, int ty, int tx) {
#pragma unroll
  for (int i = 0; i < RM; ++i) {
    const int qi = q0 + ty + 16 * i;
    float mt = m[i];
#pragma unroll
    for (int j = 0; j < RN; ++j) {
      if (!kiln_visible(qi, k0 + tx + 16 * j)) s[i][j] = -KILN_INF;
      mt = fmaxf(mt, s[i][j]);
    }
    mt = kiln_row_max(mt);
    alpha[i] = mt == -KILN_INF ? 1.f : exp2f(m[i] - mt);
    m[i] = mt;
    l[i] *= alpha[i];
  }
}
)cuda";

constexpr const char *kForward = R"cuda(
  extern __shared__ float smem[];
  float *sQ = smem, *sK = sQ + BM * LQ, *sV = sK + BN * LK, *sP = sV + BN * LV;
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int bh = blockIdx.x / QT;
  // The longest causal tiles first.
  const int q0 = (QT - 1 - (int)(blockIdx.x % QT)) * BM;
  const elem_t *qb = q + Q_BASE(bh), *kb = k + K_BASE(bh), *vb = v + V_BASE(bh);
  kiln_load_tile<BM, D, DP, LQ, Q_ST>(sQ, qb, q0, TQ, QSCALE);
  float m[RM], l[RM], o[RM][DVJ];
#pragma unroll
  for (int i = 0; i < RM; ++i) m[i] = -KILN_INF, l[i] = 0.f;
  kiln_zero(o);
  const int kEnd = CAUSAL ? min(TK, min(q0 + BM, TQ) + (TK - TQ)) : TK;
  for (int k0 = 0; k0 < kEnd; k0 += BN) {
    __syncthreads();
    kiln_load_tile<BN, D, DP, LK, K_ST>(sK, kb, k0, TK, 1.f);
    kiln_load_tile<BN, DV, DVP, LV, V_ST>(sV, vb, k0, TK, 1.f);
    __syncthreads();
    float s[RM][RN], alpha[RM];
    kiln_scores<RM, RN, DP, LQ, LK>(s, sQ, sK, ty, tx);
    kiln_online_max(s, m, l, alpha, q0, k0, ty, tx);
#pragma unroll
    for (int i = 0; i < RM; ++i) {
      const float mt = m[i];
#pragma unroll
      for (int jj = 0; jj < DVJ; ++jj) o[i][jj] *= alpha[i];
#pragma unroll
      for (int j = 0; j < RN; ++j) {
        const float p = mt == -KILN_INF ? 0.f : exp2f(s[i][j] - mt);
        l[i] += p;
        sP[(ty + 16 * i) * LP + tx + 16 * j] = p;
      }
    }
    __syncthreads();
    kiln_tile_mma<RM, DVJ, BN>(o, [&](int i, int c) { return sP[(ty + 16 * i) * LP + c]; },
                               [&](int jj, int c) { return sV[c * LV + tx + 16 * jj]; });
  }
#pragma unroll
  for (int i = 0; i < RM; ++i) {
    const float total = kiln_row_sum(l[i]);
    const int qi = q0 + ty + 16 * i;
    if (qi >= TQ) continue;
    const float inv = total > 0.f ? 1.f / total : 0.f;
#pragma unroll
    for (int jj = 0; jj < DVJ; ++jj) {
      const int e = tx + 16 * jj;
      if (e < DV) kiln_store(out + OUT_BASE(bh) + (idx_t)qi * OUT_ST + e, o[i][jj] * inv);
    }
  }
)cuda";

constexpr const char *kBackwardQuery = R"cuda(
  extern __shared__ float smem[];
  float *sQ = smem, *sO = sQ + BM * LQ, *sK = sO + BM * LO, *sV = sK + BN * LK;
  float *sS = sV + BN * LV;
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int bh = blockIdx.x / QT;
  const int q0 = (QT - 1 - (int)(blockIdx.x % QT)) * BM;
  const elem_t *qb = q + Q_BASE(bh), *kb = k + K_BASE(bh), *vb = v + V_BASE(bh);
  kiln_load_tile<BM, D, DP, LQ, Q_ST>(sQ, qb, q0, TQ, QSCALE);
  kiln_load_tile<BM, DV, DVP, LO, D_OUT_ST>(sO, d_out + D_OUT_BASE(bh), q0, TQ, 1.f);
  __syncthreads();
  // delta_i = sum_e dO[i, e] * O[i, e].
  float delta[RM];
#pragma unroll
  for (int i = 0; i < RM; ++i) {
    const int r = ty + 16 * i, qi = q0 + r;
    float acc = 0.f;
    if (qi < TQ)
#pragma unroll
      for (int jj = 0; jj < DVJ; ++jj) {
        const int e = tx + 16 * jj;
        if (e < DV) acc += sO[r * LO + e] * kiln_load(out[OUT_BASE(bh) + (idx_t)qi * OUT_ST + e]);
      }
    delta[i] = kiln_row_sum(acc);
  }
  const int kEnd = CAUSAL ? min(TK, min(q0 + BM, TQ) + (TK - TQ)) : TK;
  // Sweep 1: the log-sum-exp of every row (log2 domain).
  float m[RM], l[RM];
#pragma unroll
  for (int i = 0; i < RM; ++i) m[i] = -KILN_INF, l[i] = 0.f;
  for (int k0 = 0; k0 < kEnd; k0 += BN) {
    __syncthreads();
    kiln_load_tile<BN, D, DP, LK, K_ST>(sK, kb, k0, TK, 1.f);
    __syncthreads();
    float s[RM][RN], alpha[RM];
    kiln_scores<RM, RN, DP, LQ, LK>(s, sQ, sK, ty, tx);
    kiln_online_max(s, m, l, alpha, q0, k0, ty, tx);
#pragma unroll
    for (int i = 0; i < RM; ++i)
#pragma unroll
      for (int j = 0; j < RN; ++j) l[i] += m[i] == -KILN_INF ? 0.f : exp2f(s[i][j] - m[i]);
  }
  float lse[RM];
#pragma unroll
  for (int i = 0; i < RM; ++i) {
    lse[i] = m[i] + log2f(kiln_row_sum(l[i]));
    const int qi = q0 + ty + 16 * i;
    if (tx == 0 && qi < TQ) {
      row_lse[(idx_t)bh * TQ + qi] = lse[i];
      row_delta[(idx_t)bh * TQ + qi] = delta[i];
    }
  }
  // Sweep 2: dS = P (dP - delta), dq += dS K.
  float dq[RM][DJ];
  kiln_zero(dq);
  for (int k0 = 0; k0 < kEnd; k0 += BN) {
    __syncthreads();
    kiln_load_tile<BN, D, DP, LK, K_ST>(sK, kb, k0, TK, 1.f);
    kiln_load_tile<BN, DV, DVP, LV, V_ST>(sV, vb, k0, TK, 1.f);
    __syncthreads();
    float s[RM][RN], dp[RM][RN];
    kiln_scores<RM, RN, DP, LQ, LK>(s, sQ, sK, ty, tx);
    kiln_zero(dp);
    kiln_tile_mma<RM, RN, DVP>(dp, [&](int i, int e) { return sO[(ty + 16 * i) * LO + e]; },
                               [&](int j, int e) { return sV[(tx + 16 * j) * LV + e]; });
#pragma unroll
    for (int i = 0; i < RM; ++i) {
      const int qi = q0 + ty + 16 * i;
#pragma unroll
      for (int j = 0; j < RN; ++j) {
        const float p = kiln_visible(qi, k0 + tx + 16 * j) ? exp2f(s[i][j] - lse[i]) : 0.f;
        sS[(ty + 16 * i) * LP + tx + 16 * j] = p * (dp[i][j] - delta[i]);
      }
    }
    __syncthreads();
    kiln_tile_mma<RM, DJ, BN>(dq, [&](int i, int c) { return sS[(ty + 16 * i) * LP + c]; },
                              [&](int jj, int c) { return sK[c * LK + tx + 16 * jj]; });
  }
)cuda";

constexpr const char *kStoreQueryGrad = R"cuda(
#pragma unroll
  for (int i = 0; i < RM; ++i) {
    const int qi = q0 + ty + 16 * i;
    if (qi >= TQ) continue;
#pragma unroll
    for (int jj = 0; jj < DJ; ++jj) {
      const int e = tx + 16 * jj;
      if (e < D) kiln_store(d_query + D_QUERY_BASE(bh) + (idx_t)qi * D_QUERY_ST + e, dq[i][jj] * SCALE);
    }
  }
)cuda";

constexpr const char *kBackwardKey = R"cuda(
  extern __shared__ float smem[];
  float *sK = smem, *sV = sK + BN * LK, *sQ = sV + BN * LV, *sO = sQ + BM * LQ;
  float *sP = sO + BM * LO, *sS = sP + BM * LP, *sL = sS + BM * LP, *sD = sL + BM;
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int bh = blockIdx.x / KT;
  const int k0 = (int)(blockIdx.x % KT) * BN;
  const elem_t *qb = q + Q_BASE(bh), *ob = d_out + D_OUT_BASE(bh);
  kiln_load_tile<BN, D, DP, LK, K_ST>(sK, k + K_BASE(bh), k0, TK, 1.f);
  kiln_load_tile<BN, DV, DVP, LV, V_ST>(sV, v + V_BASE(bh), k0, TK, 1.f);
  float dk[RN][DJ], dv[RN][DVJ];
  kiln_zero(dk);
  kiln_zero(dv);
  // The first query that sees key k0, rounded down to its tile.
  const int qStart = CAUSAL ? max(0, k0 - (TK - TQ)) / BM * BM : 0;
  for (int q0 = qStart; q0 < TQ; q0 += BM) {
    __syncthreads();
    kiln_load_tile<BM, D, DP, LQ, Q_ST>(sQ, qb, q0, TQ, 1.f);
    kiln_load_tile<BM, DV, DVP, LO, D_OUT_ST>(sO, ob, q0, TQ, 1.f);
    for (int r = threadIdx.x; r < BM; r += 256) {
      const bool valid = q0 + r < TQ;
      sL[r] = valid ? row_lse[(idx_t)bh * TQ + q0 + r] : 0.f;
      sD[r] = valid ? row_delta[(idx_t)bh * TQ + q0 + r] : 0.f;
    }
    __syncthreads();
    float s[RM][RN], dp[RM][RN];
    kiln_scores<RM, RN, DP, LQ, LK>(s, sQ, sK, ty, tx);
    kiln_zero(dp);
    kiln_tile_mma<RM, RN, DVP>(dp, [&](int i, int e) { return sO[(ty + 16 * i) * LO + e]; },
                               [&](int j, int e) { return sV[(tx + 16 * j) * LV + e]; });
#pragma unroll
    for (int i = 0; i < RM; ++i) {
      const int r = ty + 16 * i, qi = q0 + r;
#pragma unroll
      for (int j = 0; j < RN; ++j) {
        const bool on = qi < TQ && kiln_visible(qi, k0 + tx + 16 * j);
        const float p = on ? exp2f(s[i][j] * QSCALE - sL[r]) : 0.f;
        sP[r * LP + tx + 16 * j] = p;
        sS[r * LP + tx + 16 * j] = p * (dp[i][j] - sD[r]);
      }
    }
    __syncthreads();
    kiln_tile_mma<RN, DVJ, BM>(dv, [&](int i, int r) { return sP[r * LP + ty + 16 * i]; },
                               [&](int jj, int r) { return sO[r * LO + tx + 16 * jj]; });
    kiln_tile_mma<RN, DJ, BM>(dk, [&](int i, int r) { return sS[r * LP + ty + 16 * i]; },
                              [&](int jj, int r) { return sQ[r * LQ + tx + 16 * jj]; });
  }
#pragma unroll
  for (int i = 0; i < RN; ++i) {
    const int kj = k0 + ty + 16 * i;
    if (kj >= TK) continue;
)cuda";

constexpr const char *kStoreKeyGrad = R"cuda(
#pragma unroll
    for (int jj = 0; jj < DJ; ++jj) {
      const int e = tx + 16 * jj;
      if (e < D) kiln_store(d_key + D_KEY_BASE(bh) + (idx_t)kj * D_KEY_ST + e, dk[i][jj] * SCALE);
    }
)cuda";

constexpr const char *kStoreValueGrad = R"cuda(
#pragma unroll
    for (int jj = 0; jj < DVJ; ++jj) {
      const int e = tx + 16 * jj;
      if (e < DV) kiln_store(d_value + D_VALUE_BASE(bh) + (idx_t)kj * D_VALUE_ST + e, dv[i][jj]);
    }
)cuda";

/// Sizes of one attention op and the tiles chosen for it.
struct AttentionShape {
  int64_t batchHeads, tq, tk, d, dv, dp, dvp;
  double scale;
  bool causal;
  int64_t tile = 64;

  static int64_t roundUp16(int64_t v) {
    return std::max<int64_t>(16, (v + 15) / 16 * 16);
  }
  int64_t lp() const { return tile % 32 == 0 ? tile + 16 : tile; }
  int64_t forwardShared() const {
    return 4 * (tile * (dp + 1) * 2 + tile * (dvp + 1) + tile * lp());
  }
  int64_t queryShared() const {
    return 4 * (tile * (dp + 1) * 2 + tile * (dvp + 1) * 2 + tile * lp());
  }
  int64_t keyShared() const {
    return 4 * (tile * (dp + 1) * 2 + tile * (dvp + 1) * 2 + 2 * tile * lp() +
                2 * tile);
  }

  /// Picks the largest tile (64, 32, 16) whose kernels fit in shared
  /// memory; fails when not even 16 does.
  LogicalResult chooseTile(bool backward) {
    int64_t longest = roundUp16(std::max(tq, tk));
    for (int64_t t : {64, 32, 16}) {
      tile = t;
      if (t > longest && t != 16)
        continue;
      int64_t need =
          backward ? std::max(queryShared(), keyShared()) : forwardShared();
      if (need <= kSharedLimit)
        return success();
    }
    return failure();
  }

  static FailureOr<AttentionShape> of(Operation *op) {
    AttentionShape s;
    auto query = cast<ShapedType>(op->getOperand(0).getType());
    auto value = cast<ShapedType>(op->getOperand(2).getType());
    auto key = cast<ShapedType>(op->getOperand(1).getType());
    s.batchHeads = query.getDimSize(0) * query.getDimSize(1);
    s.tq = query.getDimSize(2);
    s.tk = key.getDimSize(2);
    s.d = query.getDimSize(3);
    s.dv = value.getDimSize(3);
    s.dp = roundUp16(s.d);
    s.dvp = roundUp16(s.dv);
    std::optional<APFloat> scale;
    if (auto a = dyn_cast<AttentionOp>(op)) {
      s.causal = a.getCausal();
      scale = a.getScale();
    } else {
      auto b = cast<AttentionBackwardOp>(op);
      s.causal = b.getCausal();
      scale = b.getScale();
    }
    s.scale = scale ? scale->convertToDouble() : 1.0 / std::sqrt(double(s.d));
    if (failed(s.chooseTile(isa<AttentionBackwardOp>(op))))
      return failure();
    return s;
  }

  /// The constants every kernel of the op sees.
  std::string constants(llvm::StringRef elem, llvm::StringRef idx) const {
    std::string s;
    llvm::raw_string_ostream os(s);
    int64_t qt = ceilDiv(tq, tile), kt = ceilDiv(tk, tile);
    os << "typedef " << elem << " elem_t;\n"
       << "typedef " << idx << " idx_t;\n"
       << "constexpr int TQ = " << tq << ", TK = " << tk << ", D = " << d
       << ", DV = " << dv << ";\n"
       << "constexpr int DP = " << dp << ", DVP = " << dvp
       << ";  // head dims padded to 16\n"
       << "constexpr int BM = " << tile << ", BN = " << tile << ", QT = " << qt
       << ", KT = " << kt << ";\n"
       << "constexpr int RM = BM / 16, RN = BN / 16, DJ = DP / 16, DVJ = DVP / "
          "16;\n"
       << "// Shared row strides, padded against bank conflicts.\n"
       << "constexpr int LQ = DP + 1, LK = DP + 1, LV = DVP + 1, LO = DVP + 1, "
          "LP = "
       << lp() << ";\n"
       << "constexpr bool CAUSAL = " << (causal ? "true" : "false") << ";\n"
       << "constexpr float SCALE = " << floatLiteral(scale) << ";\n"
       << "constexpr float QSCALE = "
       << floatLiteral(scale * 1.4426950408889634) << ";  // scale * log2(e)\n";
    return s;
  }
};

/// Where one [B, H, T, D] tensor of the op lies in its buffer: element
/// strides of the batch, head and row dims (the head dim is contiguous).
struct Layout {
  int64_t sb = 0, sh = 0, st = 0;

  static SmallVector<int64_t> rowMajorStrides(ArrayRef<int64_t> shape) {
    SmallVector<int64_t> strides(shape.size(), 1);
    for (size_t d = shape.size(); d-- > 1;)
      strides[d - 1] = strides[d] * shape[d];
    return strides;
  }
  /// A dense buffer of the op's own shape.
  static Layout dense(ArrayRef<int64_t> shape) {
    SmallVector<int64_t> st = rowMajorStrides(shape);
    return {st[0], st[1], st[2]};
  }
  /// The op reads transpose(buffer, perm): its dim k is the buffer's perm[k].
  static Layout transposedOperand(ArrayRef<int64_t> bufferShape,
                                  ArrayRef<int64_t> perm) {
    SmallVector<int64_t> st = rowMajorStrides(bufferShape);
    return {st[perm[0]], st[perm[1]], st[perm[2]]};
  }
  /// The op's result is stored as transpose(result, perm): its dim j is the
  /// buffer's dim k with perm[k] == j.
  static Layout transposedResult(ArrayRef<int64_t> bufferShape,
                                 ArrayRef<int64_t> perm) {
    SmallVector<int64_t> st = rowMajorStrides(bufferShape), of(4);
    for (size_t k = 0; k < 4; ++k)
      of[perm[k]] = st[k];
    return {of[0], of[1], of[2]};
  }

  /// X_ST and X_BASE(bh) (the offset of row 0 of batch*head bh) of the
  /// tensor called `name` with `heads` heads.
  std::string define(llvm::StringRef name, int64_t heads) const {
    std::string base = sb == heads * sh
                           ? "(idx_t)bh * " + std::to_string(sh)
                           : "(idx_t)(bh / " + std::to_string(heads) + ") * " +
                                 std::to_string(sb) + " + (idx_t)(bh % " +
                                 std::to_string(heads) + ") * " +
                                 std::to_string(sh);
    return llvm::formatv("constexpr long long {0}_ST = {1};\n"
                         "__device__ __forceinline__ idx_t {0}_BASE(int bh) "
                         "{{ return {2}; }\n",
                         name, st, base)
        .str();
  }
};

/// An attention fusion taken apart: the attention op and, for each of its
/// operands and results, the fusion operand or result behind it (-1: a
/// result nobody reads) and its layout there. Besides the op the body may
/// hold only transposes that keep the head dim innermost: of a block
/// argument into an operand, or of a result into a yielded value.
struct AttentionFusion {
  Operation *op = nullptr;
  SmallVector<int64_t> operandOf, resultOf;
  SmallVector<Layout> operandLayout, resultLayout;

  static bool keepsHeadDim(TransposeOp transpose) {
    ArrayRef<int64_t> perm = transpose.getPerm();
    return perm.size() == 4 && perm[3] == 3;
  }

  static FailureOr<AttentionFusion> get(FusionOp fusion) {
    Block &body = fusion.getBody().front();
    AttentionFusion result;
    size_t transposes = 0;
    for (Operation &op : body.without_terminator()) {
      if (isa<AttentionOp, AttentionBackwardOp>(op)) {
        if (result.op)
          return failure();
        result.op = &op;
      } else if (isa<TransposeOp>(op)) {
        ++transposes;
      } else {
        return failure();
      }
    }
    if (!result.op)
      return failure();
    Operation *op = result.op;
    size_t placed = 0;
    for (Value operand : op->getOperands()) {
      auto shape = cast<ShapedType>(operand.getType()).getShape();
      if (auto argument = dyn_cast<BlockArgument>(operand)) {
        if (argument.getOwner() != &body)
          return failure();
        result.operandOf.push_back(argument.getArgNumber());
        result.operandLayout.push_back(Layout::dense(shape));
        continue;
      }
      auto transpose = operand.getDefiningOp<TransposeOp>();
      auto argument = transpose ? dyn_cast<BlockArgument>(transpose.getInput())
                                : BlockArgument();
      if (!argument || argument.getOwner() != &body ||
          !keepsHeadDim(transpose) || !transpose->hasOneUse())
        return failure();
      result.operandOf.push_back(argument.getArgNumber());
      result.operandLayout.push_back(Layout::transposedOperand(
          cast<ShapedType>(argument.getType()).getShape(),
          transpose.getPerm()));
      ++placed;
    }
    Operation *yield = body.getTerminator();
    auto yieldIndex = [&](Value value) -> int64_t {
      int64_t index = -1;
      for (auto [i, yielded] : llvm::enumerate(yield->getOperands()))
        if (yielded == value) {
          if (index >= 0)
            return -2; // yielded twice
          index = i;
        }
      return index;
    };
    for (Value opResult : op->getResults()) {
      auto shape = cast<ShapedType>(opResult.getType()).getShape();
      int64_t index = -1;
      Layout layout = Layout::dense(shape);
      if (opResult.hasOneUse() &&
          isa<TransposeOp>(*opResult.getUsers().begin())) {
        auto transpose = cast<TransposeOp>(*opResult.getUsers().begin());
        if (!keepsHeadDim(transpose) || !transpose->hasOneUse() ||
            *transpose->getUsers().begin() != yield)
          return failure();
        index = yieldIndex(transpose.getResult());
        layout = Layout::transposedResult(
            cast<ShapedType>(transpose.getType()).getShape(),
            transpose.getPerm());
        ++placed;
      } else if (!opResult.use_empty()) {
        if (llvm::any_of(opResult.getUsers(),
                         [&](Operation *u) { return u != yield; }))
          return failure();
        index = yieldIndex(opResult);
      }
      if (index < -1)
        return failure();
      result.resultOf.push_back(index);
      result.resultLayout.push_back(layout);
    }
    if (placed != transposes ||
        llvm::all_of(result.resultOf, [](int64_t r) { return r < 0; }))
      return failure();
    return result;
  }

  /// The strides of every tensor the kernels address, by name.
  std::string layouts() const {
    bool forward = isa<AttentionOp>(op);
    static const char *const forwardOperands[] = {"Q", "K", "V"};
    static const char *const backwardOperands[] = {"Q", "K", "V", "OUT",
                                                   "D_OUT"};
    static const char *const forwardResults[] = {"OUT"};
    static const char *const backwardResults[] = {"D_QUERY", "D_KEY",
                                                  "D_VALUE"};
    std::string text =
        "// Where each [B, H, T, D] tensor lies: element (b, h, t, e) at\n"
        "// X_BASE(b * H + h) + t * X_ST + e.\n";
    auto heads = [](Value v) {
      return cast<ShapedType>(v.getType()).getDimSize(1);
    };
    for (auto [i, layout] : llvm::enumerate(operandLayout))
      text += layout.define(forward ? forwardOperands[i] : backwardOperands[i],
                            heads(op->getOperand(i)));
    for (auto [i, layout] : llvm::enumerate(resultLayout))
      if (resultOf[i] >= 0)
        text += layout.define(forward ? forwardResults[i] : backwardResults[i],
                              heads(op->getResult(i)));
    return text;
  }
};

class AttentionEmitter : public KernelEmitter {
public:
  bool matches(FusionOp fusion) const override {
    if (fusion.getKind() != "attention")
      return false;
    FailureOr<AttentionFusion> single = AttentionFusion::get(fusion);
    if (failed(single) || !isa<AttentionOp, AttentionBackwardOp>(single->op))
      return false;
    return succeeded(AttentionShape::of(single->op));
  }

  FailureOr<GeneratedFusion>
  emit(FusionOp fusion, const CodegenOptions &options) const override {
    if (!matches(fusion))
      return fusion.emitOpError(
          "is not a supported single-op attention fusion");
    AttentionFusion single = *AttentionFusion::get(fusion);
    Operation *op = single.op;
    AttentionShape shape = *AttentionShape::of(op);
    int64_t largest = 0;
    for (Type t : fusion->getOperandTypes())
      largest = std::max(largest, cast<ShapedType>(t).getNumElements());
    std::string idx =
        largest < (int64_t(1) << 31) - (int64_t(1) << 20) ? "int" : "long long";
    std::string helpers = shape.constants(cudaType(op->getOperand(0)), idx) +
                          single.layouts() + kHelpers;
    FusionBuilder builder("// kiln attention fusion of\n" + describeOp(op));
    std::string elem = cudaType(op->getOperand(0));
    auto in = [&](unsigned i, llvm::StringRef name) {
      return std::pair{"const " + elem + " *__restrict__ " + name.str(),
                       LaunchArg::operand(single.operandOf[i])};
    };
    auto out = [&](unsigned i, llvm::StringRef name) {
      return std::pair{elem + " *__restrict__ " + name.str(),
                       LaunchArg::result(single.resultOf[i])};
    };
    auto add = [](FusionBuilder::Params &p,
                  std::pair<std::string, LaunchArg> a) {
      p.add(a.first, a.second);
    };
    int64_t qTiles = ceilDiv(shape.tq, shape.tile);
    int64_t kTiles = ceilDiv(shape.tk, shape.tile);
    if (shape.batchHeads == 0 || shape.tq == 0)
      return builder.take();

    if (isa<AttentionOp>(op)) {
      FusionBuilder::Params params;
      add(params, in(0, "q"));
      add(params, in(1, "k"));
      add(params, in(2, "v"));
      add(params, out(0, "out"));
      builder.kernel("kiln_attention_fwd", helpers, params, kForward,
                     {uint32_t(qTiles * shape.batchHeads), 1, 1}, {256, 1, 1},
                     uint32_t(shape.forwardShared()));
      return builder.take();
    }

    // Backward: row statistics in scratch, dq over query tiles, then dk and
    // dv over key tiles.
    uint64_t rows = shape.batchHeads * shape.tq * 4;
    uint64_t lse = builder.scratch(rows), delta = builder.scratch(rows);
    FusionBuilder::Params query;
    add(query, in(0, "q"));
    add(query, in(1, "k"));
    add(query, in(2, "v"));
    add(query, in(3, "out"));
    add(query, in(4, "d_out"));
    query.add("float *__restrict__ row_lse", LaunchArg::scratch(lse));
    query.add("float *__restrict__ row_delta", LaunchArg::scratch(delta));
    std::string queryBody = kBackwardQuery;
    if (single.resultOf[0] >= 0) {
      add(query, out(0, "d_query"));
      queryBody += kStoreQueryGrad;
    }
    builder.kernel("kiln_attention_bwd_dq", helpers, query, queryBody,
                   {uint32_t(qTiles * shape.batchHeads), 1, 1}, {256, 1, 1},
                   uint32_t(shape.queryShared()));
    if ((single.resultOf[1] >= 0 || single.resultOf[2] >= 0) && kTiles > 0) {
      FusionBuilder::Params key;
      add(key, in(0, "q"));
      add(key, in(1, "k"));
      add(key, in(2, "v"));
      add(key, in(4, "d_out"));
      key.add("const float *__restrict__ row_lse", LaunchArg::scratch(lse));
      key.add("const float *__restrict__ row_delta", LaunchArg::scratch(delta));
      std::string keyBody = kBackwardKey;
      if (single.resultOf[1] >= 0) {
        add(key, out(1, "d_key"));
        keyBody += kStoreKeyGrad;
      }
      if (single.resultOf[2] >= 0) {
        add(key, out(2, "d_value"));
        keyBody += kStoreValueGrad;
      }
      keyBody += "  }\n";
      builder.kernel("kiln_attention_bwd_dkdv", helpers, key, keyBody,
                     {uint32_t(kTiles * shape.batchHeads), 1, 1}, {256, 1, 1},
                     uint32_t(shape.keyShared()));
    }
    return builder.take();
  }
};

} // namespace

std::unique_ptr<KernelEmitter> createAttentionEmitter() {
  return std::make_unique<AttentionEmitter>();
}

} // namespace mlir::kiln::codegen
