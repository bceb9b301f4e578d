// The grid a persistent launch runs with on devices of other SM counts.
#include "runtime/session/executor.h"

#include "gtest/gtest.h"

namespace kiln::session_internal {
namespace {

artifact::Launch Persistent(uint32_t grid_x, uint32_t blocks_per_sm,
                            uint32_t cluster_x = 1) {
  artifact::Launch launch;
  launch.grid = {grid_x, 1, 1};
  launch.block = {384, 1, 1};
  launch.cluster = {cluster_x, 1, 1};
  launch.persistent_blocks_per_sm = blocks_per_sm;
  return launch;
}

TEST(PersistentGridTest, ShrinksToTheDevicesSms) {
  // Sized for 132 SMs: an H100 PCIe (114 SMs) runs one block per SM, not
  // 114 and then a second wave of 18.
  EXPECT_EQ(PersistentGridX(Persistent(132, 1), 132), 132u);
  EXPECT_EQ(PersistentGridX(Persistent(132, 1), 114), 114u);
  EXPECT_EQ(PersistentGridX(Persistent(264, 2), 114), 228u);
  // Fewer work items than SMs: the grid stays.
  EXPECT_EQ(PersistentGridX(Persistent(40, 1), 114), 40u);
}

TEST(PersistentGridTest, NeverGrows) {
  EXPECT_EQ(PersistentGridX(Persistent(132, 1), 148), 132u);
}

TEST(PersistentGridTest, KeepsWholeClusters) {
  EXPECT_EQ(PersistentGridX(Persistent(132, 1, 2), 115), 114u);
  EXPECT_EQ(PersistentGridX(Persistent(128, 1, 16), 120), 112u);
  // At least one cluster, even where it does not fit the device: the
  // driver then refuses the launch by name.
  EXPECT_EQ(PersistentGridX(Persistent(132, 1, 2), 1), 2u);
}

TEST(PersistentGridTest, OtherLaunchesKeepTheirGrid) {
  artifact::Launch plain = Persistent(4096, 0);
  EXPECT_EQ(PersistentGridX(plain, 114), 4096u);
  // An unknown SM count changes nothing.
  EXPECT_EQ(PersistentGridX(Persistent(132, 1), 0), 132u);
}

}  // namespace
}  // namespace kiln::session_internal
