// Grids past CUDA's limits (gridDim.x at most 2^31 - 1, .y and .z at most
// 65535) are launched in tiles: a planner that asks for such a grid gets a
// launch within the limits whose blocks run the whole grid's blocks
// (kernels/tiled_grid.cuh), and the kernel compiles, waits for its
// predecessor before it touches memory and is never part of a merged one.

#include "codegen/cuda/EmitterUtils.h"
#include "codegen/cuda/KernelRenderer.h"
#include "codegen/cuda/Nvrtc.h"
#include "codegen/cuda/PredecessorWait.h"
#include "runtime/artifact/launch_limits.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace mlir::kiln::codegen {
namespace {

namespace limits = ::kiln::launch_limits;

/// What an emitter plans: a kernel whose every block writes its flat index
/// in the whole grid, with the grid it asks for.
KernelSpec blockIndexKernel(std::array<uint32_t, 3> grid) {
  KernelSpec spec;
  spec.prefix = "kiln_test_tiled";
  spec.templateName = "test";
  spec.addParam("unsigned long long *", "out", LaunchArg::result(0));
  spec.body = "  if (ctx.thread_rank() != 0) return;\n"
              "  const unsigned long long b =\n"
              "      (unsigned long long)(ctx.block.z * ctx.grid.y + "
              "ctx.block.y) * ctx.grid.x + ctx.block.x;\n"
              "  out[b] = b;\n";
  spec.grid = grid;
  spec.block = {32, 1, 1};
  return spec;
}

bool withinLimits(std::array<uint32_t, 3> grid) {
  return grid[0] >= 1 && grid[0] <= limits::kMaxGridX && grid[1] >= 1 &&
         grid[1] <= limits::kMaxGridYZ && grid[2] >= 1 &&
         grid[2] <= limits::kMaxGridYZ;
}

/// Blocks of the launch grid's dimension `launch` that one of them runs at
/// most, for `blocks` of the whole grid (as run_tiled walks them).
uint64_t tilesPerBlock(uint64_t blocks, uint64_t launch) {
  return (blocks + launch - 1) / launch;
}

TEST(TiledGridTest, GridsPastTheLimitsAreLaunchedInTiles) {
  const std::array<uint32_t, 3> cases[] = {
      {3, 70000, 2},                   // y past 65535: two tiles of 35000
      {1, 1, 200000},                  // z: four tiles
      {(1u << 31) + 1000u, 1, 1},      // x past 2^31 - 1
      {5, 65536, 65536},               // y and z
  };
  for (const auto &grid : cases) {
    KernelSpec spec = blockIndexKernel(grid);
    std::array<uint32_t, 3> launch = launchGridOf(spec);
    EXPECT_TRUE(withinLimits(launch))
        << launch[0] << " " << launch[1] << " " << launch[2];
    for (int d = 0; d < 3; ++d) {
      uint64_t limit = d == 0 ? limits::kMaxGridX : limits::kMaxGridYZ;
      // As few tiles per block as the limit allows, the blocks' tiles
      // differing by one at most.
      EXPECT_EQ(tilesPerBlock(grid[d], launch[d]),
                (grid[d] + limit - 1) / limit)
          << d;
      EXPECT_GE(uint64_t{launch[d]} * tilesPerBlock(grid[d], launch[d]),
                grid[d]);
    }

    FusionBuilder builder("// a planner's grid past CUDA's limits\n");
    builder.kernel(spec);
    GeneratedFusion generated = builder.take();
    ASSERT_EQ(generated.kernels.size(), 1u);
    ASSERT_EQ(generated.launches.size(), 1u);
    EXPECT_EQ(generated.launches[0].grid, launch);
    const GeneratedKernel &kernel = generated.kernels[0];
    std::string tiles = "kiln::run_tiled<" + std::to_string(grid[0]) + "u, " +
                        std::to_string(grid[1]) + "u, " +
                        std::to_string(grid[2]) + "u>(";
    EXPECT_NE(kernel.source.find(tiles), std::string::npos) << kernel.source;
    EXPECT_NE(kernel.source.find("#include \"kiln/tiled_grid.cuh\""),
              std::string::npos);
    EXPECT_TRUE(kernel.part.code.empty()) << "a tiled kernel is no part";

    CompiledKernel compiled;
    std::string error;
    ASSERT_TRUE(
        compileCuda(kernel.source, kernel.name, "sm_90", true, compiled, error))
        << error << "\n"
        << kernel.source;
    EXPECT_GT(compiled.cubin.size(), 16u);
    EXPECT_EQ(accessBeforeWait(compiled.ptx, kernel.name), std::nullopt);
  }
}

TEST(TiledGridTest, GridsWithinTheLimitsAreLaunchedAsTheyAre) {
  for (std::array<uint32_t, 3> grid :
       {std::array<uint32_t, 3>{1, 1, 1}, {2147483647u, 65535, 65535}}) {
    KernelSpec spec = blockIndexKernel(grid);
    EXPECT_EQ(launchGridOf(spec), grid);
    FusionBuilder builder("");
    builder.kernel(spec);
    GeneratedFusion generated = builder.take();
    EXPECT_EQ(generated.launches[0].grid, grid);
    EXPECT_EQ(generated.kernels[0].source.find("run_tiled"),
              std::string::npos);
    EXPECT_FALSE(generated.kernels[0].part.code.empty());
  }
  // A cooperative launch runs all its blocks at once: its grid is never
  // tiled (code generation refuses it by name instead, ModuleCodegen).
  KernelSpec cooperative = blockIndexKernel({1, 70000, 1});
  cooperative.cooperative = true;
  EXPECT_EQ(launchGridOf(cooperative), cooperative.grid);
}

} // namespace
} // namespace mlir::kiln::codegen
