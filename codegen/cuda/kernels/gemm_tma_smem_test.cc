// The TMA GEMM's shared-memory layout (gemm_layout.cuh, wgmma_tma_smem),
// which the kernel addresses its stages by and the planner sizes the launch
// by: the regions follow each other without overlap, every tile and every
// warp's staging starts on a 1024-byte swizzle atom, the barriers are
// 8-byte words, and the size holds all of it plus the slack that aligns
// the dynamic shared memory's start.

#include "kiln/gemm_layout.cuh"

#include <gtest/gtest.h>

namespace {

using kiln::gemm::tma_smem;
using kiln::gemm::wgmma_tma_smem;

struct Shape {
  int bm, bn, stages, stagedWarps;
};

// The kernel's tiles: cooperative 128 x 128 and 128 x 256, ping-pong
// 128 x 128 (two consumers of four warps each), with and without staging.
constexpr Shape kShapes[] = {{128, 128, 6, 8}, {128, 256, 4, 8},
                             {128, 128, 6, 0}, {128, 256, 4, 0},
                             {64, 64, 8, 4},   {256, 128, 3, 16}};

TEST(GemmTmaSmem, RegionsFollowEachOtherAligned) {
  for (const Shape &s : kShapes) {
    const wgmma_tma_smem L = tma_smem(s.bm, s.bn, s.stages, s.stagedWarps);
    SCOPED_TRACE(testing::Message() << s.bm << "x" << s.bn << " stages "
                                    << s.stages << " staged warps "
                                    << s.stagedWarps);
    unsigned end = 0;
    for (int stage = 0; stage < s.stages; ++stage) {
      EXPECT_EQ(L.a(stage), end);
      EXPECT_EQ(L.a(stage) % 1024, 0u);
      end = L.a(stage) + s.bm * 64 * 2;
    }
    for (int stage = 0; stage < s.stages; ++stage) {
      EXPECT_EQ(L.b(stage), end);
      EXPECT_EQ(L.b(stage) % 1024, 0u);
      end = L.b(stage) + s.bn * 64 * 2;
    }
    for (int warp = 0; warp < s.stagedWarps; ++warp) {
      EXPECT_EQ(L.staging(warp), end);
      EXPECT_EQ(L.staging(warp) % 1024, 0u);
      end = L.staging(warp) + kiln::gemm::wgmma_staged_warp_bytes(s.bn);
    }
    for (int stage = 0; stage < s.stages; ++stage) {
      EXPECT_EQ(L.full(stage), end + 8u * stage);
      EXPECT_EQ(L.empty(stage), end + 8u * (s.stages + stage));
    }
    end += 16u * s.stages;
    EXPECT_EQ(L.bytes(), end + 1024u);
  }
}

TEST(GemmTmaSmem, FitsTheLargestTileInHoppersSharedMemory) {
  // The largest cooperative tile, 128 x 256 in four stages with eight
  // staging warps, within sm_90's 227 KiB per block.
  EXPECT_LE(tma_smem(128, 256, 4, 8).bytes(), 227u * 1024);
  EXPECT_EQ(tma_smem(128, 256, 4, 8).bytes(),
            4u * (16384 + 32768) + 8 * 4096 + 64 + 1024);
}

} // namespace
