// The kernels of embedding.cuh run thread for thread on the CPU
// (emulation/host_cuda.h), launched as EmbeddingEmitter.cpp launches them:
// the radix passes must leave the lookups stably sorted by row, and each
// table row must hold, bit for bit, the f32 sum of its lookups' gradient
// rows in lookup order (the first chunk of its run added one by one, then
// each later chunk's partial sum), zero for rows no lookup names, with
// out-of-range indices ignored.

#include "kiln/embedding.cuh"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

namespace kiln::embedding {
namespace {

namespace emu = ::kiln::emulation;

float toFloat(float x) { return x; }
float toFloat(__nv_bfloat16 x) { return __bfloat162float(x); }
float toFloat(__half x) { return __half2float(x); }
template <class T> T fromFloat(float x) {
  T t;
  kiln_store(&t, x);
  return t;
}
template <class T> uint32_t bitsOf(T x) {
  uint32_t bits = 0;
  std::memcpy(&bits, &x, sizeof(T));
  return bits;
}

/// What the kernels leave: the sorted keys and lookups and the table.
template <class T> struct Result {
  std::vector<int> keys, lookups;
  std::vector<T> table;
};

template <class Cfg, int Pass>
void sortPass(const int *indices, std::vector<unsigned> &histogram,
              std::vector<int> (&keys)[2], std::vector<int> (&lookups)[2],
              std::vector<int2> &bounds) {
  const int *keysIn = Pass == 0 ? indices : keys[(Pass + 1) % 2].data();
  const int *lookupsIn = Pass == 0 ? nullptr : lookups[(Pass + 1) % 2].data();
  emu::launch(unsigned(Cfg::tiles), unsigned(kSortThreads), [&] {
    radix_histogram<Cfg, Pass>(this_launch(), keysIn, histogram.data(),
                               Pass == 0 ? bounds.data() : nullptr);
  });
  emu::launch(unsigned(Cfg::tiles), unsigned(kSortThreads), [&] {
    radix_scatter<Cfg, Pass>(this_launch(), keysIn, lookupsIn,
                             histogram.data(), keys[Pass % 2].data(),
                             lookups[Pass % 2].data());
  });
  if constexpr (Pass + 1 < Cfg::passes)
    sortPass<Cfg, Pass + 1>(indices, histogram, keys, lookups, bounds);
}

/// Runs the emitter's launch sequence; `gradOffset` elements into the
/// buffer misaligns the gradient rows.
template <class Cfg, class T>
Result<T> run(const std::vector<T> &grad, const std::vector<int> &indices,
              size_t gradOffset = 0) {
  std::vector<T> gradBuffer(gradOffset + grad.size() + 8);
  std::copy(grad.begin(), grad.end(), gradBuffer.begin() + gradOffset);
  const T *g = gradBuffer.data() + gradOffset;
  // Scratch starts as garbage on the GPU: here as 0x5a bytes.
  auto garbage = [](auto &v, size_t n) {
    v.resize(n);
    std::memset(v.data(), 0x5a, n * sizeof(v[0]));
  };
  Result<T> result;
  garbage(result.table, size_t(Cfg::v * Cfg::d));
  if constexpr (Cfg::n == 0) {
    emu::launch(unsigned(row_blocks(Cfg::v, Cfg::d, Cfg::width)),
                unsigned(row_threads(Cfg::d, Cfg::width)), [&] {
                  table_rows<Cfg>(this_launch(), nullptr, (const T *)nullptr,
                                  nullptr, nullptr, result.table.data());
                });
    return result;
  } else {
    std::vector<unsigned> histogram;
    std::vector<int> keys[2], lookups[2];
    std::vector<int2> bounds;
    std::vector<float> partial;
    garbage(histogram, size_t(Cfg::tiles * kRadixBins));
    for (int i = 0; i < 2; ++i) {
      garbage(keys[i], size_t(Cfg::n));
      garbage(lookups[i], size_t(Cfg::n));
    }
    garbage(bounds, size_t(Cfg::v));
    garbage(partial, size_t(Cfg::chunks * Cfg::d));
    sortPass<Cfg, 0>(indices.data(), histogram, keys, lookups, bounds);
    const int sorted = (Cfg::passes - 1) % 2;
    emu::launch(unsigned(chunk_blocks(Cfg::n)), unsigned(kChunkThreads), [&] {
      segment_heads<Cfg>(this_launch(), keys[sorted].data(),
                         lookups[sorted].data(), g, bounds.data(),
                         partial.data());
    });
    emu::launch(unsigned(row_blocks(Cfg::v, Cfg::d, Cfg::width)),
                unsigned(row_threads(Cfg::d, Cfg::width)), [&] {
                  table_rows<Cfg>(this_launch(), lookups[sorted].data(), g,
                                  bounds.data(), partial.data(),
                                  result.table.data());
                });
    result.keys = keys[sorted];
    result.lookups = lookups[sorted];
    return result;
  }
}

/// Checks `result` against a stable sort of the lookups and the f32 sums in
/// the kernels' order, and against sums in double.
template <class Cfg, class T>
void check(const Result<T> &result, const std::vector<T> &grad,
           const std::vector<int> &indices) {
  const long long n = Cfg::n, v = Cfg::v, d = Cfg::d;
  std::vector<int> key(n), order(n);
  for (long long i = 0; i < n; ++i)
    key[i] = indices[i] >= 0 && indices[i] < v ? indices[i] : int(v);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return key[a] < key[b]; });
  if (n > 0) {
    for (long long j = 0; j < n; ++j) {
      ASSERT_EQ(result.lookups[j], order[j]) << "sorted lookup " << j;
      ASSERT_EQ(result.keys[j], key[order[j]]) << "sorted key " << j;
    }
  }
  long long mismatches = 0;
  for (long long row = 0, j = 0; row < v; ++row) {
    while (j < n && key[order[j]] < row)
      ++j;
    const long long start = j;
    long long end = start;
    while (end < n && key[order[end]] == row)
      ++end;
    for (long long col = 0; col < d; ++col) {
      auto at = [&](long long s) {
        return toFloat(grad[size_t(order[s] * d + col)]);
      };
      // The first chunk one by one, then one partial per later chunk.
      float sum = 0.f;
      const long long firstEnd = std::min(end, (start / kChunk + 1) * kChunk);
      long long s = start;
      for (; s < firstEnd; ++s)
        sum += at(s);
      while (s < end) {
        float part = 0.f;
        for (long long e = std::min(end, (s / kChunk + 1) * kChunk); s < e; ++s)
          part += at(s);
        sum += part;
      }
      double exact = 0;
      for (long long e = start; e < end; ++e)
        exact += at(e);
      const T got = result.table[size_t(row * d + col)];
      if (bitsOf(got) != bitsOf(fromFloat<T>(sum)) && mismatches++ < 10)
        ADD_FAILURE() << "row " << row << " col " << col << ": got "
                      << toFloat(got) << ", the f32 sum in order is " << sum;
      EXPECT_NEAR(toFloat(got), exact, 1e-2 * (1 + std::fabs(exact)));
    }
  }
  EXPECT_EQ(mismatches, 0);
}

template <class T> std::vector<T> randomGrad(long long count, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  std::vector<T> grad(static_cast<size_t>(count));
  for (T &x : grad)
    x = fromFloat<T>(uniform(gen));
  return grad;
}

template <class Cfg, class T>
void runAndCheck(const std::vector<int> &indices, unsigned seed,
                 size_t gradOffset = 0) {
  ASSERT_EQ(indices.size(), size_t(Cfg::n));
  std::vector<T> grad = randomGrad<T>(Cfg::n * Cfg::d, seed);
  Result<T> result = run<Cfg, T>(grad, indices, gradOffset);
  check<Cfg, T>(result, grad, indices);
  // The same bits on a second run.
  Result<T> again = run<Cfg, T>(grad, indices, gradOffset);
  for (size_t i = 0; i < result.table.size(); ++i)
    ASSERT_EQ(bitsOf(result.table[i]), bitsOf(again.table[i])) << i;
}

std::vector<int> uniformIndices(long long n, int lo, int hi, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> index(lo, hi - 1);
  std::vector<int> indices(static_cast<size_t>(n));
  for (int &i : indices)
    i = index(gen);
  return indices;
}

TEST(EmbeddingKernels, SmallTableWithOutOfRangeIndices) {
  // tests/ops/models/embedding.mlir's shape: [4, 24] from 5x7 lookups.
  using Cfg = embedding_config<int, 35, 4, 24, 4>;
  static_assert(Cfg::passes == 1 && Cfg::tiles == 1);
  runAndCheck<Cfg, float>(uniformIndices(35, -3, 7, 1), 1);
}

TEST(EmbeddingKernels, TwoPassesWithAHeavyRow) {
  // 40% of the lookups name row 5: its run spans many chunks.
  using Cfg = embedding_config<int, 3000, 700, 40, 8>;
  static_assert(Cfg::passes == 2 && Cfg::tiles == 3 && Cfg::cached);
  std::vector<int> indices = uniformIndices(3000, 0, 700, 2);
  std::mt19937 gen(3);
  for (int &i : indices)
    if (gen() % 10 < 4)
      i = 5;
  indices[17] = 700;
  indices[2999] = -1;
  runAndCheck<Cfg, __nv_bfloat16>(indices, 2);
  // Gradient rows off 16-byte alignment take the element-wise path.
  runAndCheck<Cfg, __nv_bfloat16>(indices, 2, /*gradOffset=*/1);
}

TEST(EmbeddingKernels, ThreePassesNarrowRows) {
  using Cfg = embedding_config<int, 600, 70000, 3, 1>;
  static_assert(Cfg::passes == 3 && Cfg::group == 1);
  runAndCheck<Cfg, float>(uniformIndices(600, -5, 70010, 4), 5);
}

TEST(EmbeddingKernels, EveryLookupTheSameRow) {
  using Cfg = embedding_config<int, 2000, 10, 16, 8>;
  runAndCheck<Cfg, __half>(std::vector<int>(2000, 9), 6);
}

TEST(EmbeddingKernels, NoLookupInRange) {
  using Cfg = embedding_config<int, 70, 3, 8, 4>;
  runAndCheck<Cfg, float>(std::vector<int>(70, 3), 7);
}

TEST(EmbeddingKernels, WideRowsWalkTheRunPerStep) {
  using Cfg = embedding_config<int, 100, 5, 9000, 4>;
  static_assert(!Cfg::cached && Cfg::group == 256);
  runAndCheck<Cfg, float>(uniformIndices(100, 0, 5, 8), 9);
}

TEST(EmbeddingKernels, NoLookupsGiveZeros) {
  using Cfg = embedding_config<int, 0, 6, 10, 2>;
  Result<float> result = run<Cfg, float>({}, {});
  for (float x : result.table)
    EXPECT_EQ(bitsOf(x), 0u);
}

} // namespace
} // namespace kiln::embedding
