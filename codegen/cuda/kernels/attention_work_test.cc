// How the Hopper attention kernels split their work
// (attention_wgmma_layout.cuh): the order of the work items (work_order)
// against what the kernels rely on, that every item is taken exactly once,
// and what it is for, that blocks finish together and the items in flight
// share few heads; and which tiles of an item run without the mask
// (whole_key_tiles, masked_query_tiles), against the mask itself, pair by
// pair: a tile the kernels leave unmasked must hide no key from any of its
// queries, and the tile after the unmasked ones must hide one (or the
// kernels would mask more than they need to).

#include "kiln/attention_wgmma_layout.cuh"

#include <gtest/gtest.h>

#include <algorithm>
#include <utility>
#include <vector>

namespace {

using kiln::attention::masked_query_tiles;
using kiln::attention::whole_key_tiles;
using kiln::attention::work_order;

// The items block b of `grid` takes, in order: (batch * head, rank).
std::vector<std::pair<int, int>> Walk(const work_order &order, long long b,
                                      long long grid) {
  std::vector<std::pair<int, int>> items;
  for (long long u = b; u < order.units(); u += grid)
    for (int half = 0; half < order.items(u); ++half)
      items.push_back({order.batch_head(u), order.rank(u, half)});
  return items;
}

TEST(AttentionWorkTest, EveryItemIsTakenOnce) {
  for (long long bh : {1, 3, 128})
    for (int tiles : {1, 2, 5, 16})
      for (bool causal : {false, true})
        for (long long grid : {1, 7, 132, 4096}) {
          const work_order order{bh, tiles, causal};
          SCOPED_TRACE(testing::Message() << "bh " << bh << " tiles " << tiles
                                          << " causal " << causal << " grid "
                                          << grid);
          std::vector<int> taken(bh * tiles, 0);
          for (long long b = 0; b < grid; ++b)
            for (auto [h, rank] : Walk(order, b, grid)) {
              ASSERT_TRUE(h >= 0 && h < bh && rank >= 0 && rank < tiles);
              ++taken[h * tiles + rank];
            }
          for (int t : taken)
            ASSERT_EQ(t, 1);
        }
}

// Causal query items of 128 against key tiles of 128 (the forward at equal
// lengths): rank r streams tiles - r key tiles. The blocks of a persistent
// grid stream within 4% of the mean (the bench's attention, B8 H16 T2048,
// the transformer block's, T1024, and an odd count), every pair as much,
// and the pairs in flight together (one per block) hold few heads.
TEST(AttentionWorkTest, CausalPairsBalanceBlocksAndShareHeads) {
  for (int tiles : {8, 16, 15}) {
    const work_order order{128, tiles, true};
    const long long grid = 132;
    SCOPED_TRACE(testing::Message() << "tiles " << tiles);
    long long total = 0, most = 0;
    for (long long b = 0; b < grid; ++b) {
      long long streamed = 0;
      for (auto [h, rank] : Walk(order, b, grid))
        streamed += tiles - rank;
      total += streamed;
      most = std::max(most, streamed);
    }
    EXPECT_LE(most * grid, total * 104 / 100);
    for (long long u = 0; u < order.units(); ++u) {
      if (order.items(u) == 1) {
        EXPECT_EQ(order.rank(u, 0), tiles / 2);
        continue;
      }
      EXPECT_EQ(tiles - order.rank(u, 0) + tiles - order.rank(u, 1),
                tiles + 1);
      EXPECT_LT(order.rank(u, 0), order.rank(u, 1));
    }
    EXPECT_EQ(order.units() - order.pairs(), tiles % 2 ? 128 : 0);
    for (long long u = 0; u + grid <= order.pairs(); ++u)
      EXPECT_LE(order.batch_head(u + grid - 1) - order.batch_head(u) + 1,
                grid / (tiles / 2) + 2);
  }
}

struct Shape {
  long long tq, tk;
  bool causal;
};

// Key j is visible to query i (attention_common.cuh's `visible`).
bool Visible(const Shape &s, long long i, long long j) {
  return j < s.tk && (!s.causal || j <= i + s.tk - s.tq);
}

// Whether queries [q0, q1) see every key of [k0, k1).
bool Whole(const Shape &s, long long q0, long long q1, long long k0,
           long long k1) {
  for (long long i = q0; i < q1; ++i)
    for (long long j = k0; j < k1; ++j)
      if (!Visible(s, i, j))
        return false;
  return true;
}

std::vector<Shape> Shapes() {
  std::vector<Shape> shapes;
  for (long long tq : {1, 7, 63, 64, 65, 66, 127, 128, 200, 256, 384})
    for (long long tk : {1, 9, 62, 64, 100, 127, 128, 129, 190, 256, 320, 512})
      for (bool causal : {false, true})
        shapes.push_back({tq, tk, causal});
  return shapes;
}

// The forward and the dq kernel: a consumer warpgroup's 64 queries from q0
// (a multiple of 64, past tq too: those rows are zeros the kernels never
// store) against key tiles of bn from 0.
TEST(AttentionWorkTest, WholeKeyTilesHideNothingAndAreAllThereAre) {
  for (const Shape &s : Shapes())
    for (long long bn : {64, 128})
      for (long long q0 = 0; q0 < s.tq + 128; q0 += 64) {
        const long long whole = whole_key_tiles(s.tq, s.tk, s.causal, q0, bn);
        SCOPED_TRACE(testing::Message()
                     << "tq " << s.tq << " tk " << s.tk << " causal "
                     << s.causal << " bn " << bn << " q0 " << q0);
        ASSERT_GE(whole, 0);
        for (long long j = 0; j < whole; ++j)
          ASSERT_TRUE(Whole(s, q0, q0 + 64, j * bn, j * bn + bn)) << "tile " << j;
        // Query q0 itself misses a key of the next tile.
        EXPECT_FALSE(Whole(s, q0, q0 + 1, whole * bn, whole * bn + bn));
      }
}

// The dk/dv and one-pass kernels: a consumer warpgroup's 64 keys from k0
// against the query tiles of bq from the item's first (key_item's qBegin:
// the tile of the first query that sees key k0, rounded down).
TEST(AttentionWorkTest, QueryTilesPastTheMaskedOnesHideNothing) {
  for (const Shape &s : Shapes())
    for (long long bq : {64, 128})
      for (long long item0 = 0; item0 < s.tk; item0 += 128)
        for (long long k0 : {item0, item0 + 64}) {
          long long first = item0 - (s.tk - s.tq);
          const long long qBegin =
              s.causal ? (first > 0 ? first : 0) / bq * bq : 0;
          const long long masked =
              masked_query_tiles(s.tq, s.tk, s.causal, k0, 64, qBegin, bq);
          SCOPED_TRACE(testing::Message()
                       << "tq " << s.tq << " tk " << s.tk << " causal "
                       << s.causal << " bq " << bq << " k0 " << k0);
          ASSERT_GE(masked, 0);
          // Keys past tk are left out of what the kernels store: only the
          // causal mask counts.
          Shape unbounded = s;
          unbounded.tk = 1 << 30;
          unbounded.tq = s.tq + unbounded.tk - s.tk;
          for (long long q = qBegin + masked * bq; q < s.tq; q += bq)
            ASSERT_TRUE(Whole(unbounded, q, q + bq, k0, k0 + 64))
                << "tile at " << q;
          if (masked > 0)
            EXPECT_FALSE(Whole(unbounded, qBegin + (masked - 1) * bq,
                               qBegin + masked * bq, k0, k0 + 64));
        }
}

TEST(AttentionWorkTest, NothingIsMaskedWithoutCausalityOrRaggedKeys) {
  EXPECT_EQ(whole_key_tiles(2048, 2048, false, 0, 128), 16);
  EXPECT_EQ(masked_query_tiles(2048, 2048, false, 0, 64, 0, 64), 0);
  // Causal at T 2048: query tile 1 (rows 128..191) sees key tile 0 whole
  // and crosses the diagonal in tile 1.
  EXPECT_EQ(whole_key_tiles(2048, 2048, true, 128, 128), 1);
  // Keys 128..191: the query tile at 128 does not see all of them, the
  // ones after it do.
  EXPECT_EQ(masked_query_tiles(2048, 2048, true, 128, 64, 128, 64), 1);
}

} // namespace
