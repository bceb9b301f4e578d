// The staged epilogue's shared layout (gemm_layout.cuh, wgmma_staged_offset)
// against what the kernel and the copy engine need of it: every 16-byte run
// of a warp's 16 rows has a slot of its own inside the warp's staging; each
// 64-column box is laid out exactly as a 128-byte-swizzled tensor copy of a
// {64, 16} box leaves it (so a TMA store writes the right elements to the
// right places); and the fragment writes and the run reads of a warp meet
// no bank conflict.

#include "kiln/gemm_layout.cuh"

#include <gtest/gtest.h>

#include <set>

namespace {

using kiln::gemm::wgmma_staged_columns;
using kiln::gemm::wgmma_staged_offset;
using kiln::gemm::wgmma_staged_run;
using kiln::gemm::wgmma_staged_warp_bytes;

constexpr int kRows = 16;  // a warp's rows of the accumulators

// Byte offset of element (row, column) of a 2-byte tensor's box of 64
// columns by 16 rows in shared memory (1024-byte aligned) after a tiled
// tensor copy with CU_TENSOR_MAP_SWIZZLE_128B: rows of 128 bytes, the
// 16-byte chunk index XORed with bits 7..9 of the row's offset.
unsigned SwizzledBoxOffset(int row, int column) {
  const unsigned linear = row * 128 + column * 2;
  const unsigned chunk = (linear >> 4) & 7, line = (linear >> 7) & 7;
  return (linear & ~0x70u) | ((chunk ^ line) << 4);
}

class StagingLayout : public testing::TestWithParam<int> {};

TEST_P(StagingLayout, RunsHaveSlotsOfTheirOwnInsideTheStaging) {
  const int bn = GetParam();
  const int runs = wgmma_staged_columns(bn) / wgmma_staged_run;
  std::set<unsigned> slots;
  for (int row = 0; row < kRows; ++row)
    for (int run = 0; run < runs; ++run) {
      const unsigned at = wgmma_staged_offset(row, run);
      EXPECT_EQ(at % 16, 0u) << "row " << row << " run " << run;
      EXPECT_LT(at + 16, wgmma_staged_warp_bytes(bn) + 1)
          << "row " << row << " run " << run;
      EXPECT_TRUE(slots.insert(at).second)
          << "row " << row << " run " << run << " shares slot " << at;
    }
  EXPECT_EQ(slots.size() * 16, wgmma_staged_warp_bytes(bn));
}

TEST_P(StagingLayout, BoxesAreWhatASwizzledTensorCopyLeaves) {
  const int bn = GetParam();
  const int columns = wgmma_staged_columns(bn);
  ASSERT_EQ(columns % 64, 0);
  for (int row = 0; row < kRows; ++row)
    for (int column = 0; column < columns; ++column) {
      const int run = column / wgmma_staged_run;
      const unsigned at =
          wgmma_staged_offset(row, run) + (column % wgmma_staged_run) * 2;
      const unsigned box = column / 64;
      EXPECT_EQ(at, box * kRows * 128 + SwizzledBoxOffset(row, column % 64))
          << "row " << row << " column " << column;
    }
}

// A warp's 32-bit fragment writes: lane (g, q) = (lane / 4, lane % 4)
// writes word q of run j of rows g and g + 8. Each instruction's 32 words
// must fall into 32 distinct banks.
TEST_P(StagingLayout, FragmentWritesMeetNoBankConflict) {
  const int runs = wgmma_staged_columns(GetParam()) / wgmma_staged_run;
  for (int j = 0; j < runs; ++j)
    for (int half = 0; half < 2; ++half) {
      std::set<unsigned> banks;
      for (int lane = 0; lane < 32; ++lane) {
        const int row = lane / 4 + half * 8, q = lane % 4;
        banks.insert((wgmma_staged_offset(row, j) + q * 4) / 4 % 32);
      }
      EXPECT_EQ(banks.size(), 32u) << "run " << j << " half " << half;
    }
}

// A 16-byte load is served a quarter warp (8 lanes) at a time: lanes of one
// pass read runs lane % runs of row lane / runs, and each quarter's 8 runs
// must cover all 32 banks.
TEST_P(StagingLayout, RunReadsMeetNoBankConflict) {
  const int runs = wgmma_staged_columns(GetParam()) / wgmma_staged_run;
  const int rowsPerPass = 32 / runs;
  for (int pass = 0; pass < kRows / rowsPerPass; ++pass)
    for (int quarter = 0; quarter < 4; ++quarter) {
      std::set<unsigned> banks;
      for (int lane = quarter * 8; lane < quarter * 8 + 8; ++lane) {
        const int row = pass * rowsPerPass + lane / runs, run = lane % runs;
        for (int word = 0; word < 4; ++word)
          banks.insert((wgmma_staged_offset(row, run) + word * 4) / 4 % 32);
      }
      EXPECT_EQ(banks.size(), 32u) << "pass " << pass << " quarter " << quarter;
    }
}

INSTANTIATE_TEST_SUITE_P(TileWidths, StagingLayout,
                         testing::Values(64, 128, 256));

}  // namespace
