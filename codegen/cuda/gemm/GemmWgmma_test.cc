// The wgmma GEMM kernel's index math replayed on the host: the swizzled tile
// loader, the shared-memory matrix descriptors and the accumulator layout of
// kernels/gemm_wgmma.cuh (its layout functions are the ones of
// kernels/gemm_layout.cuh, called here), against the hardware's side taken
// from the PTX ISA: the canonical 128-byte-swizzled
// K-major and M/N-major layouts a descriptor denotes, and the register layout
// of wgmma's f32 accumulators. Small integer matrices, so the replayed
// product must equal the direct one exactly; shared memory starts as NaN, so
// a descriptor that reads an unwritten byte shows up.

#include "codegen/cuda/GpuTarget.h"
#include "kiln/gemm_layout.cuh"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace mlir::kiln::codegen {
namespace {

// --- The kernel's side (kernels/gemm_layout.cuh) --------------------------

using ::kiln::gemm::wgmma_block_k;
constexpr int kBlockK = wgmma_block_k;

unsigned swizzleK(int r, int c) { return ::kiln::gemm::wgmma_swizzle_k(r, c); }
unsigned swizzleMn(int k, int c) {
  return ::kiln::gemm::wgmma_swizzle_mn(k, c);
}
uint64_t operand(bool kMajor, unsigned s, int mn, int j) {
  return ::kiln::gemm::wgmma_operand(kMajor, s, mn, j);
}
unsigned wgmmaSharedBytes(int bm, int bn, int stages) {
  return ::kiln::gemm::wgmma_shared_bytes(bm, bn, stages);
}

// --- The hardware's side (PTX ISA) -----------------------------------------

/// Byte address of element (mn, k), k < 16, of the operand `desc` denotes:
/// the canonical layouts with 128-byte swizzle, in 16-byte units
/// K-major ((8, n), 2) : ((8, SBO), 1) and M/N-major ((8, n), (8, k)) :
/// ((1, LBO), (8, SBO)), each unit 8 consecutive elements, then the swizzle
/// (address bits [4, 7) ^= bits [7, 10)).
unsigned canonicalAddress(uint64_t desc, bool kMajor, int mn, int k) {
  EXPECT_EQ(desc >> 62, 1u) << "not the 128-byte swizzle";
  EXPECT_EQ((desc >> 49) & 7, 0u) << "base offset";
  unsigned start = unsigned(desc & 0x3FFF) << 4;
  unsigned lbo = unsigned((desc >> 16) & 0x3FFF) << 4;
  unsigned sbo = unsigned((desc >> 32) & 0x3FFF) << 4;
  unsigned addr = kMajor ? start + (mn % 8) * 128 + (mn / 8) * sbo +
                               (k / 8) * 16 + (k % 8) * 2
                         : start + (mn % 64 / 8) * 16 + (mn / 64) * lbo +
                               (k % 8) * 128 + (k / 8) * sbo + (mn % 8) * 2;
  return addr ^ (((addr >> 7) & 7) << 4);
}

/// Row and column within the warpgroup's 64 x N tile of f32 accumulator
/// register v of thread t (0..127).
void accumulatorAt(int t, int v, int &row, int &col) {
  row = t / 32 * 16 + t % 32 / 4 + 8 * (v / 2 % 2);
  col = 2 * (t % 4) + v % 2 + 8 * (v / 4);
}

// --- The replay ----------------------------------------------------------

struct Shape {
  int64_t rows, n, k;
  int split;
};

/// C = A B through the kernel's tiles; A stored [rows][K] (aK) or [K][rows],
/// B [N][K] (bK) or [K][N].
std::vector<double> replay(int bm, int bn, int stages, const Shape &pr, bool aK,
                           bool bK, const std::vector<double> &a,
                           const std::vector<double> &b) {
  const int threads = bm / 64 * 128;
  const int aBytes = ::kiln::gemm::wgmma_tile_bytes(bm),
            bBytes = ::kiln::gemm::wgmma_tile_bytes(bn);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // The dynamic shared window starts at an offset; the kernel aligns it up.
  const unsigned window = 48;
  const unsigned sA = (window + 1023u) & ~1023u, sB = sA + stages * aBytes;
  EXPECT_LE(sB + stages * bBytes, window + wgmmaSharedBytes(bm, bn, stages));
  const int64_t aGRows = aK ? pr.rows : pr.k, aGCols = aK ? pr.k : pr.rows;
  const int64_t bGRows = bK ? pr.n : pr.k, bGCols = bK ? pr.k : pr.n;
  const int kt = int((pr.k + kBlockK - 1) / kBlockK);
  const int perSplit = (kt + pr.split - 1) / pr.split;

  std::vector<double> smem((sB + stages * bBytes) / 2, nan);
  // wgmma_tile_copy: every chunk of the tile written exactly once; a thread's
  // chunks are STEP rows apart and share the first one's swizzle.
  auto load = [&](unsigned s, int mn, bool kMajor, const std::vector<double> &g,
                  int64_t gRows, int64_t gCols, int64_t mn0, int64_t k0) {
    const int perRow = (kMajor ? kBlockK : mn) / 8, chunks = mn * kBlockK / 8;
    const int step = threads / perRow, count = chunks / threads;
    EXPECT_EQ(threads % perRow, 0);
    EXPECT_EQ(step % 8, 0);
    EXPECT_EQ(count * threads, chunks);
    std::vector<int> writes(chunks, 0);
    for (int tid = 0; tid < threads; ++tid) {
      const int row = tid / perRow, col = tid % perRow;
      const unsigned first = kMajor ? swizzleK(row, col) : swizzleMn(row, col);
      const int64_t r0 = (kMajor ? mn0 : k0) + row,
                    c0 = (kMajor ? k0 : mn0) + col * 8;
      for (int i = 0; i < count; ++i) {
        unsigned offset = first + i * step * 128;
        EXPECT_EQ(offset, kMajor ? swizzleK(row + i * step, col)
                                 : swizzleMn(row + i * step, col));
        EXPECT_LT(offset, unsigned(chunks * 16));
        writes[offset / 16]++;
        int64_t gr = r0 + i * step;
        bool valid = gr < gRows && c0 < gCols;
        for (int e = 0; e < 8; ++e)
          smem[(s + offset) / 2 + e] = valid ? g[gr * gCols + c0 + e] : 0.0;
      }
    }
    for (int w : writes)
      EXPECT_EQ(w, 1);
  };

  std::vector<double> partial(pr.split * pr.rows * pr.n, nan);
  std::vector<int> stores(partial.size(), 0);
  // The persistent blocks' walk over the work items (wgmma_work).
  const int64_t tilesM = (pr.rows + bm - 1) / bm, tilesN = (pr.n + bn - 1) / bn;
  const int64_t work = pr.split * tilesM * tilesN,
                grid = std::min<int64_t>(work,
                                         GpuTarget::forArch("sm_90")->smCount);
  std::vector<std::pair<int64_t, int>> items;
  for (int64_t block = 0; block < grid; ++block)
    for (int64_t w = block; w < work; w += grid) {
      int64_t tm = 0, tn = 0;
      ::kiln::gemm::grouped_tile<int64_t>(w % (tilesM * tilesN), tilesM, tilesN,
                                          8, tm, tn);
      items.push_back({tm * tilesN + tn, int(w / (tilesM * tilesN))});
    }
  EXPECT_EQ(int64_t(items.size()), work);
  for (auto [tile, split] : items) {
    const int64_t m0 = tile / tilesN * bm, n0 = tile % tilesN * bn;
    const int ktBegin = split * perSplit;
    const int nk = std::max(0, std::min(kt, ktBegin + perSplit) - ktBegin);
    // acc[wg][thread][register]
    std::vector<double> acc(threads * (bn / 2), 0.0);
    for (int i = 0; i < nk; ++i) {
      const int stage = i % stages;
      const int64_t k0 = int64_t(ktBegin + i) * kBlockK;
      load(sA + stage * aBytes, bm, aK, a, aGRows, aGCols, m0, k0);
      load(sB + stage * bBytes, bn, bK, b, bGRows, bGCols, n0, k0);
      for (int wg = 0; wg < bm / 64; ++wg)
        for (int j = 0; j < kBlockK / 16; ++j) {
          uint64_t da = operand(aK, sA + stage * aBytes, wg * 64, j);
          uint64_t db = operand(bK, sB + stage * bBytes, 0, j);
          std::vector<double> A(64 * 16), B(16 * bn);
          for (int m = 0; m < 64; ++m)
            for (int k = 0; k < 16; ++k)
              A[m * 16 + k] = smem[canonicalAddress(da, aK, m, k) / 2];
          for (int n = 0; n < bn; ++n)
            for (int k = 0; k < 16; ++k)
              B[k * bn + n] = smem[canonicalAddress(db, bK, n, k) / 2];
          for (int t = 0; t < 128; ++t)
            for (int v = 0; v < bn / 2; ++v) {
              int row, col;
              accumulatorAt(t, v, row, col);
              double sum = 0;
              for (int k = 0; k < 16; ++k)
                sum += A[row * 16 + k] * B[k * bn + col];
              acc[(wg * 128 + t) * (bn / 2) + v] += sum;
            }
        }
    }
    // The kernel's epilogue: emit_pair(r, c, acc[4j + 2h], acc[4j + 2h +
    // 1]).
    for (int tid = 0; tid < threads; ++tid) {
      const int wg = tid >> 7, lane = tid & 31, warp = (tid >> 5) & 3;
      const int g = lane >> 2, q = lane & 3;
      for (int half = 0; half < 2; ++half) {
        int64_t row = m0 + wg * 64 + warp * 16 + g + half * 8;
        if (row >= pr.rows)
          continue;
        for (int j = 0; j < bn / 8; ++j)
          for (int e = 0; e < 2; ++e) {
            int64_t c = n0 + j * 8 + q * 2 + e;
            if (c >= pr.n)
              continue;
            int64_t at = (split * pr.rows + row) * pr.n + c;
            partial[at] = acc[tid * (bn / 2) + j * 4 + half * 2 + e];
            stores[at]++;
          }
      }
    }
  }
  for (int count : stores)
    EXPECT_EQ(count, 1);
  std::vector<double> c(pr.rows * pr.n);
  for (int64_t i = 0; i < pr.rows * pr.n; ++i) {
    c[i] = partial[i];
    for (int s = 1; s < pr.split; ++s)
      c[i] += partial[s * pr.rows * pr.n + i];
  }
  return c;
}

TEST(WgmmaReplay, TilesEveryLayoutWithTails) {
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> dist(-3, 3);
  struct Tile {
    int bm, bn, stages;
  };
  // Exact tiles; M, N and K tails (multiples of 8, as the 16-byte copies
  // need); several K tiles through every stage; split K.
  for (Tile tile : {Tile{128, 256, 4}, Tile{128, 128, 6}})
    for (Shape shape : {Shape{128, 256, 64, 1}, Shape{136, 264, 200, 1},
                        Shape{64, 72, 40, 1}, Shape{200, 128, 456, 3}})
      for (bool aK : {true, false})
        for (bool bK : {true, false}) {
          SCOPED_TRACE(testing::Message()
                       << tile.bm << "x" << tile.bn << " rows=" << shape.rows
                       << " n=" << shape.n << " k=" << shape.k << " aK=" << aK
                       << " bK=" << bK);
          std::vector<double> a(shape.rows * shape.k), b(shape.k * shape.n);
          for (double &x : a)
            x = dist(rng);
          for (double &x : b)
            x = dist(rng);
          std::vector<double> got =
              replay(tile.bm, tile.bn, tile.stages, shape, aK, bK, a, b);
          int64_t wrong = 0;
          for (int64_t m = 0; m < shape.rows; ++m)
            for (int64_t n = 0; n < shape.n; ++n) {
              double want = 0;
              for (int64_t k = 0; k < shape.k; ++k)
                want += (aK ? a[m * shape.k + k] : a[k * shape.rows + m]) *
                        (bK ? b[n * shape.k + k] : b[k * shape.n + n]);
              if (!(got[m * shape.n + n] == want) && wrong++ < 3)
                ADD_FAILURE()
                    << "C[" << m << "][" << n << "] = " << got[m * shape.n + n]
                    << ", want " << want;
            }
          EXPECT_EQ(wrong, 0);
        }
}

TEST(WgmmaReplay, SharedMemoryFitsOneBlock) {
  EXPECT_EQ(wgmmaSharedBytes(128, 256, 4), 4u * (128 + 256) * 64 * 2 + 1024);
  const GpuTarget *sm90 = GpuTarget::forArch("sm_90");
  ASSERT_TRUE(sm90);
  EXPECT_LE(wgmmaSharedBytes(128, 256, 4), sm90->sharedBytesPerBlock);
  EXPECT_LE(wgmmaSharedBytes(128, 128, 6), sm90->sharedBytesPerBlock);
}

} // namespace
} // namespace mlir::kiln::codegen
