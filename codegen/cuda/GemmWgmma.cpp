//===- GemmWgmma.cpp - the Hopper warpgroup-MMA kernel of gemm fusions ----===//
//
// Layout. Every shared tile is stored as wgmma reads it with 128-byte
// swizzling: 16-byte chunks of 8 elements, rows of 128 bytes, eight rows to a
// 1024-byte atom, the chunk index XORed with the row index within the atom.
//  - K-major operand (A [M][K], B [N][K]): one row per M/N index holding the
//    tile's 64 K values; atoms stack along M/N (stride 1024 bytes, the
//    descriptor's SBO). A k16 step starts 32 bytes further into the rows.
//  - M/N-major operand (A [K][M], B [K][N]): one row per k holding 64 M/N
//    values; atoms stack along K (SBO 1024) within a column of 64 M/N
//    values, and columns are BK * 128 bytes apart (LBO). A k16 step starts
//    two atoms (2048 bytes) further; wgmma's transpose bit reads it.
// Pipeline. STAGES shared stages, STAGES - 2 tiles copied ahead of the one
// multiplied, one wgmma group in flight while the next is issued. Each
// iteration: wait for the current tile's copies, fence them into the async
// proxy (wgmma reads through it), barrier, issue the tile's four k16 wgmmas,
// refill the stage read two iterations ago (every warpgroup waited for that
// group before the barrier), and wait for the previous group.
// Grid. One block per SM walks the work items (tile, batch, K split); the
// copies of an item's first tiles are issued before the previous item's
// epilogue, which then hides their latency. Tiles wholly inside the output
// take an epilogue without bounds tests.
// Accumulators. Warpgroup w computes rows [64w, 64w + 64) of the tile; in it
// warp v, lane (g = lane / 4, q = lane % 4) holds rows 16v + g and 16v + g + 8
// of every 8-column block j at columns 8j + 2q, 8j + 2q + 1: registers
// 4j + {0, 1} and 4j + {2, 3} (the mma.sync m16n8 layout, repeated along N).
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/GemmWgmma.h"

#include "llvm/Support/raw_ostream.h"

namespace mlir::kiln::codegen {
namespace {

constexpr const char *kWgmmaKernel = R"cuda(
constexpr int KG_WGS = KG_BM / 64; // warpgroups, 64 tile rows each
constexpr int KG_THREADS = KG_WGS * 128;
constexpr int KG_A_BYTES = KG_BM * KG_BK * 2, KG_B_BYTES = KG_BN * KG_BK * 2;
// Bytes between the 64-wide M/N columns of atoms of an M/N-major tile.
constexpr int KG_MN_COLUMN = KG_BK * 128;
constexpr int KG_AHEAD = KG_STAGES - 2; // tiles copied ahead of the multiplied one
static_assert(KG_BK == 64 && KG_BM % 64 == 0 && KG_BN % 64 == 0 && KG_BN <= 256,
              "wgmma tiles are 64-row warpgroup slices of 64-column swizzle rows");
static_assert(KG_A_VEC && KG_B_VEC, "wgmma tiles are copied in 16-byte chunks");
static_assert(KG_STAGES >= 3, "the pipeline keeps one group in flight and one tile ahead");

// Byte offset of the 16-byte chunk c of row r in a 128-byte-swizzled tile:
// K-major rows are M/N indices (c = k / 8), M/N-major rows are k (c = mn / 8).
__device__ __forceinline__ unsigned kg_swizzle_k(int r, int c) {
  return r * 128 + ((c ^ (r & 7)) << 4);
}
__device__ __forceinline__ unsigned kg_swizzle_mn(int k, int c) {
  return (c >> 3) * KG_MN_COLUMN + k * 128 + (((c & 7) ^ (k & 7)) << 4);
}

// One thread's share of the copies of an operand tile from a GROWS x GCOLS
// matrix (rows M/N when K-major, else K): COUNT 16-byte chunks, STEP tile
// rows apart (a multiple of 8, so every chunk has the first one's swizzle
// and its shared offset is the first one's plus a constant). Chunks outside
// the matrix are zero-filled; the tests exist only where a tile can reach
// past the matrix.
template <int MN, bool KMAJOR, kg_idx GROWS, kg_idx GCOLS>
struct KgTileCopy {
  static constexpr int PER_ROW = (KMAJOR ? KG_BK : MN) / 8;
  static constexpr int STEP = KG_THREADS / PER_ROW;
  static constexpr int COUNT = MN * KG_BK / 8 / KG_THREADS;
  static constexpr bool ROW_TAIL = GROWS % (KMAJOR ? MN : KG_BK) != 0;
  static constexpr bool COL_TAIL = GCOLS % (KMAJOR ? KG_BK : MN) != 0;
  static_assert(KG_THREADS % PER_ROW == 0 && STEP % 8 == 0 && COUNT * KG_THREADS * 8 == MN * KG_BK,
                "chunks must divide among threads in whole swizzle rows");
  int row, col;
  unsigned offset;
  __device__ __forceinline__ explicit KgTileCopy(int tid)
      : row(tid / PER_ROW), col(tid % PER_ROW),
        offset(KMAJOR ? kg_swizzle_k(tid / PER_ROW, tid % PER_ROW)
                      : kg_swizzle_mn(tid / PER_ROW, tid % PER_ROW)) {}
  // The tile at M/N offset mn0, K offset k0 into the shared tile at s.
  __device__ __forceinline__ void operator()(unsigned s, const kg_t *__restrict__ g, kg_idx mn0,
                                             kg_idx k0) const {
    const kg_idx r0 = (KMAJOR ? mn0 : k0) + row, c0 = (KMAJOR ? k0 : mn0) + col * 8;
    const kg_t *src = g + r0 * GCOLS + c0;
#pragma unroll
    for (int i = 0; i < COUNT; ++i) {
      const bool valid = (!COL_TAIL || c0 < GCOLS) && (!ROW_TAIL || r0 + i * STEP < GROWS);
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(
                       s + offset + i * STEP * 128),
                   "l"(valid ? src + i * STEP * GCOLS : g), "r"(valid ? 16 : 0));
    }
  }
};

// Shared-memory matrix descriptor: start address, leading and stride byte
// offsets (16-byte units), 128-byte swizzle.
__device__ __forceinline__ unsigned long long kg_descriptor(unsigned addr, unsigned lbo,
                                                            unsigned sbo) {
  return (unsigned long long)((addr & 0x3FFFF) >> 4) |
         ((unsigned long long)(lbo >> 4) << 16) | ((unsigned long long)(sbo >> 4) << 32) |
         (1ull << 62);
}
// The operand at M/N offset mn (a multiple of 64) of the tile at s, k16 step j.
template <bool KMAJOR>
__device__ __forceinline__ unsigned long long kg_operand(unsigned s, int mn, int j) {
  if constexpr (KMAJOR)
    return kg_descriptor(s + mn * 128 + j * 32, 16, 1024);
  else
    return kg_descriptor(s + (mn >> 6) * KG_MN_COLUMN + j * 2048, KG_MN_COLUMN, 1024);
}

// Keeps the compiler from moving accumulator accesses across the wgmma
// fences and waits (the asynchronous MMA writes them behind its back).
__device__ __forceinline__ void kg_fence_accumulators(float (&acc)[KG_BN / 2]) {
#pragma unroll
  for (int i = 0; i < KG_BN / 2; ++i)
    asm volatile("" : "+f"(acc[i])::"memory");
}

// A unit of work: one output tile of one GEMM batch and K split.
struct KgWork {
  const kg_t *a, *b;
  kg_idx batch, m0, n0;
  int split, ktBegin, nk;
};
constexpr long long KG_WORK = (long long)KG_GEMM_BATCH * KG_SPLIT * KG_TILES_M * KG_TILES_N;
// Every tile lies inside the output: the epilogue needs no bounds tests.
constexpr bool KG_EVEN_TILES = KG_ROWS % KG_BM == 0 && KG_N % KG_BN == 0;

__device__ __forceinline__ KgWork kg_work(const KgParams &p, long long w) {
  KgWork x;
  const long long z = w / (KG_TILES_M * KG_TILES_N);
  kg_idx tm, tn;
  kg_tile((kg_idx)(w % (KG_TILES_M * KG_TILES_N)), tm, tn);
  x.batch = (kg_idx)(z / KG_SPLIT);
  x.split = (int)(z % KG_SPLIT);
  x.m0 = tm * KG_BM;
  x.n0 = tn * KG_BN;
  x.a = kg_lhs(p, x.batch);
  x.b = kg_rhs(p, x.batch);
  x.ktBegin = x.split * KG_KT_PER_SPLIT;
  const int ktEnd = KG_KT < x.ktBegin + KG_KT_PER_SPLIT ? KG_KT : x.ktBegin + KG_KT_PER_SPLIT;
  x.nk = ktEnd > x.ktBegin ? ktEnd - x.ktBegin : 0;
  return x;
}

// Persistent: block i takes work items i, i + gridDim.x, ...; the first
// tiles of the next item are copied while this item's epilogue runs.
extern "C" __global__ void __launch_bounds__(KG_THREADS, 1) KG_NAME(KG_PARAMS) {
  kiln_wait_for_predecessor();
  const KgParams p{KG_PARAM_NAMES};
  extern __shared__ __align__(16) unsigned char kg_smem[];
  // Swizzle atoms start on 1024-byte boundaries (the launch adds the slack).
  const unsigned sA = ((unsigned)__cvta_generic_to_shared(kg_smem) + 1023u) & ~1023u;
  const unsigned sB = sA + KG_STAGES * KG_A_BYTES;
  const int tid = threadIdx.x, wg = tid >> 7;

  const KgTileCopy<KG_BM, KG_A_KMAJOR, KG_A_GROWS, KG_A_GCOLS> copyA(tid);
  const KgTileCopy<KG_BN, KG_B_KMAJOR, KG_B_GROWS, KG_B_GCOLS> copyB(tid);
  auto loadStage = [&](const KgWork &x, int stage, int kt) {
    const kg_idx k0 = (kg_idx)kt * KG_BK;
    copyA(sA + stage * KG_A_BYTES, x.a, x.m0, k0);
    copyB(sB + stage * KG_B_BYTES, x.b, x.n0, k0);
  };
  // The first KG_AHEAD tiles of an item; one commit group per tile (empty
  // groups past its end).
  auto prologue = [&](const KgWork &x) {
#pragma unroll
    for (int s = 0; s < KG_AHEAD; ++s) {
      if (s < x.nk)
        loadStage(x, s, x.ktBegin + s);
      asm volatile("cp.async.commit_group;\n" ::);
    }
  };

  long long w = blockIdx.x;
  if (w >= KG_WORK)
    return;
  KgWork cur = kg_work(p, w);
  prologue(cur);
  for (; w < KG_WORK; w += gridDim.x) {
    float acc[KG_BN / 2];
#pragma unroll
    for (int i = 0; i < KG_BN / 2; ++i)
      acc[i] = 0.0f;

    for (int i = 0; i < cur.nk; ++i) {
      asm volatile("cp.async.wait_group %0;\n" ::"n"(KG_AHEAD - 1));
      // cp.async wrote through the generic proxy; wgmma reads through the
      // async proxy.
      asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
      __syncthreads();
      const int stage = i % KG_STAGES;
      kg_fence_accumulators(acc);
      asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
      for (int j = 0; j < KG_BK / 16; ++j)
        kg_wgmma(acc, kg_operand<KG_A_KMAJOR>(sA + stage * KG_A_BYTES, wg * 64, j),
                 kg_operand<KG_B_KMAJOR>(sB + stage * KG_B_BYTES, 0, j));
      asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
      // Refill the stage that group i - 2 read: each warpgroup waited for it
      // before the barrier above.
      const int next = i + KG_AHEAD;
      if (next < cur.nk)
        loadStage(cur, next % KG_STAGES, cur.ktBegin + next);
      asm volatile("cp.async.commit_group;\n" ::);
      asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
      kg_fence_accumulators(acc);
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    kg_fence_accumulators(acc);
    asm volatile("cp.async.wait_group 0;\n" ::);
    // Both warpgroups are done with every stage before they are refilled.
    __syncthreads();
    const KgWork done = cur;
    if (w + gridDim.x < KG_WORK) {
      cur = kg_work(p, w + gridDim.x);
      prologue(cur);
    }

    const int lane = tid & 31, warp = (tid >> 5) & 3, g = lane >> 2, q = lane & 3;
    const kg_idx row = done.m0 + wg * 64 + warp * 16 + g;
    const kg_idx r = done.batch * KG_ROWS + row;
    if (KG_EVEN_TILES || (done.m0 + KG_BM <= KG_ROWS && done.n0 + KG_BN <= KG_N)) {
      // One block of independent pairs; a column's epilogue operands serve
      // both rows.
#pragma unroll
      for (int j = 0; j < KG_BN / 8; ++j)
#pragma unroll
        for (int half = 0; half < 2; ++half)
          kg_emit_pair<true>(p, done.split, r + half * 8, done.n0 + j * 8 + q * 2,
                             acc[j * 4 + half * 2], acc[j * 4 + half * 2 + 1]);
    } else {
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        if (row + half * 8 >= KG_ROWS)
          continue;
#pragma unroll
        for (int j = 0; j < KG_BN / 8; ++j)
          kg_emit_pair(p, done.split, r + half * 8, done.n0 + j * 8 + q * 2,
                       acc[j * 4 + half * 2], acc[j * 4 + half * 2 + 1]);
      }
    }
  }
}
)cuda";

} // namespace

uint32_t wgmmaSharedBytes(int bm, int bn, int stages) {
  return static_cast<uint32_t>(stages * (bm + bn) * kWgmmaBlockK * 2 + 1024);
}

std::string wgmmaKernelSource(int bn, bool f16, bool aMnMajor, bool bMnMajor) {
  std::string text;
  llvm::raw_string_ostream os(text);
  int count = bn / 2;
  const char *type = f16 ? "f16" : "bf16";
  os << "\n// One m64n" << bn << "k16 wgmma: acc += A (descriptor a) * B "
     << "(descriptor b).\n"
     << "__device__ __forceinline__ void kg_wgmma(float (&acc)[" << count
     << "], unsigned long long a, unsigned long long b) {\n"
     << "  asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, %" << count + 2
     << ", 0;\\n\"\n"
     << "               \"wgmma.mma_async.sync.aligned.m64n" << bn << "k16.f32."
     << type << "." << type << " {";
  for (int i = 0; i < count; ++i)
    os << (i ? ", " : "") << "%" << i;
  // scale-d (accumulate), scale-a, scale-b, transpose-a, transpose-b.
  os << "}, %" << count << ", %" << count + 1 << ", p, 1, 1, "
     << (aMnMajor ? 1 : 0) << ", " << (bMnMajor ? 1 : 0) << ";\\n}\\n\"\n"
     << "               : ";
  for (int i = 0; i < count; ++i)
    os << (i ? ", " : "") << "\"+f\"(acc[" << i << "])";
  os << "\n               : \"l\"(a), \"l\"(b), \"r\"(1));\n}\n";
  return text + kWgmmaKernel;
}

} // namespace mlir::kiln::codegen
