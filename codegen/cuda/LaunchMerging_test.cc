#include "codegen/cuda/LaunchMerging.h"

#include "codegen/cuda/KernelRenderer.h"
#include "codegen/cuda/Nvrtc.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace mlir::kiln::codegen {
namespace {

CompiledArg arena(LaunchArg::Kind kind, uint64_t offset, uint64_t size) {
  CompiledArg arg;
  arg.kind = kind;
  arg.slot = SlotRef{false, "", offset, size};
  return arg;
}

CompiledArg resident(LaunchArg::Kind kind, const std::string &name) {
  CompiledArg arg;
  arg.kind = kind;
  arg.slot = SlotRef{true, name, 0, 1024};
  return arg;
}

CompiledArg reads(uint64_t offset, uint64_t size = 256) {
  return arena(LaunchArg::Kind::Operand, offset, size);
}
CompiledArg writes(uint64_t offset, uint64_t size = 256) {
  return arena(LaunchArg::Kind::Result, offset, size);
}

CompiledLaunch launch(size_t kernel, std::vector<CompiledArg> args,
                      uint32_t threads = 256, uint32_t blocks = 2) {
  CompiledLaunch l;
  l.kernel = kernel;
  l.grid = {blocks, 1, 1};
  l.block = {threads, 1, 1};
  l.args = std::move(args);
  return l;
}

/// A launch of 4 x 5 thread blocks (not whole warps): merged only with
/// blocks of that shape.
CompiledLaunch launch2d(size_t kernel, std::vector<CompiledArg> args) {
  CompiledLaunch l = launch(kernel, std::move(args));
  l.block = {4, 5, 1};
  return l;
}

TEST(LaunchMerging, IndependenceFollowsTheBytesWritten) {
  // Reading the same bytes is fine; writing what the other touches is not.
  EXPECT_TRUE(launchesIndependent(launch(0, {reads(0), writes(512)}),
                                  launch(0, {reads(0), writes(1024)})));
  EXPECT_FALSE(
      launchesIndependent(launch(0, {writes(0)}), launch(0, {reads(128)})));
  EXPECT_FALSE(
      launchesIndependent(launch(0, {reads(0)}), launch(0, {writes(255, 1)})));
  EXPECT_FALSE(
      launchesIndependent(launch(0, {writes(0)}), launch(0, {writes(0)})));
  EXPECT_TRUE(
      launchesIndependent(launch(0, {writes(0)}), launch(0, {writes(256)})));
  // Resident buffers are told apart by name, not offset.
  EXPECT_TRUE(
      launchesIndependent(launch(0, {resident(LaunchArg::Kind::Result, "w")}),
                          launch(0, {resident(LaunchArg::Kind::Result, "b")})));
  EXPECT_FALSE(launchesIndependent(
      launch(0, {resident(LaunchArg::Kind::Result, "w")}),
      launch(0, {resident(LaunchArg::Kind::Operand, "w")})));
  // Scratch has no size: two users of scratch always conflict, but scratch
  // (after the planned tensors) is apart from tensors below it.
  CompiledArg scratch = arena(LaunchArg::Kind::Scratch, 4096, 0);
  EXPECT_FALSE(launchesIndependent(
      launch(0, {scratch}),
      launch(0, {arena(LaunchArg::Kind::Scratch, 8192, 0)})));
  EXPECT_TRUE(
      launchesIndependent(launch(0, {scratch}), launch(0, {writes(0, 4096)})));
  // Scalars touch no memory.
  CompiledArg scalar;
  scalar.kind = LaunchArg::Kind::I32;
  EXPECT_TRUE(launchesIndependent(launch(0, {scalar, writes(0)}),
                                  launch(0, {scalar, writes(256)})));
}

/// A kernel of one result that runs as a part of merged kernels.
CompiledKernelImage image(const KernelSpec &spec, const std::string &arch) {
  GeneratedKernel kernel = renderKernel(spec);
  CompiledKernelImage out;
  out.name = kernel.name;
  out.arch = arch;
  out.source = kernel.source;
  out.part = kernel.part;
  return out;
}

std::vector<CompiledKernelImage> kernels(size_t n, const std::string &arch) {
  std::vector<CompiledKernelImage> out;
  for (size_t i = 0; i < n; ++i) {
    KernelSpec spec;
    spec.prefix = "k" + std::to_string(i);
    spec.addParam("float *", "p", LaunchArg::result(0));
    spec.block = {256, 1, 1};
    out.push_back(image(spec, arch));
  }
  return out;
}

TEST(LaunchMerging, LaunchesMoveUpOnlyPastWhatTheyDoNotTouch) {
  std::vector<CompiledKernelImage> ks = kernels(6, "sm_90");
  CompiledEntry entry;
  entry.launches = {
      launch(0, {reads(0), writes(256)}),     // a
      launch2d(1, {reads(0), writes(512)}),   // b: other block shape
      launch(2, {reads(0), writes(768)}),     // c: joins a
      launch(3, {reads(256), writes(1024)}),  // d: needs a
      launch2d(4, {reads(0), writes(1280)}),  // e: joins b
      launch(5, {reads(1024), writes(1536)}), // f: needs d
  };
  std::vector<std::string> sources;
  mergeIndependentLaunches(entry, ks, "sm_90", [&](const std::string &source) {
    sources.push_back(source);
    return std::optional<size_t>(100 + sources.size());
  });
  ASSERT_EQ(entry.launches.size(), 4u);
  // a + c, then b + e (e may move past c and d: it touches neither), then d,
  // f.
  EXPECT_EQ(entry.launches[0].kernel, 101u);
  EXPECT_EQ(entry.launches[0].grid, (std::array<uint32_t, 3>{4, 1, 1}));
  EXPECT_EQ(entry.launches[0].block, (std::array<uint32_t, 3>{256, 1, 1}));
  ASSERT_EQ(entry.launches[0].args.size(), 4u);
  EXPECT_EQ(entry.launches[0].args[3].slot.offset, 768u);
  EXPECT_EQ(entry.launches[1].kernel, 102u);
  EXPECT_EQ(entry.launches[1].block, (std::array<uint32_t, 3>{4, 5, 1}));
  EXPECT_EQ(entry.launches[2].kernel, 3u);
  EXPECT_EQ(entry.launches[3].kernel, 5u);
  ASSERT_EQ(sources.size(), 2u);
  EXPECT_NE(sources[0].find("kiln_part0::run(ctx, p0_0)"), std::string::npos);
  EXPECT_NE(sources[0].find("kiln_part1::run(ctx, p1_0)"), std::string::npos);
  EXPECT_NE(sources[0].find("kiln::part<2, 2, 1, 1, 256, 1, 1>"),
            std::string::npos)
      << sources[0];
}

TEST(LaunchMerging, AGroupKeptApartStaysInAValidOrder) {
  std::vector<CompiledKernelImage> ks = kernels(3, "sm_90");
  CompiledEntry entry;
  entry.launches = {launch(0, {writes(0)}),
                    launch2d(1, {reads(0), writes(256)}),
                    launch(2, {writes(512)})};
  mergeIndependentLaunches(entry, ks, "sm_90", [](const std::string &) {
    return std::optional<size_t>();
  });
  // The third launch moved up to the first; kept apart, it runs after it and
  // before the second, which it does not touch.
  ASSERT_EQ(entry.launches.size(), 3u);
  EXPECT_EQ(entry.launches[0].kernel, 0u);
  EXPECT_EQ(entry.launches[1].kernel, 2u);
  EXPECT_EQ(entry.launches[2].kernel, 1u);
}

TEST(LaunchMerging, BlocksOfWholeWarpsShareTheLargestBlock) {
  std::vector<CompiledKernelImage> ks = kernels(3, "sm_90");
  CompiledEntry entry;
  entry.launches = {launch(0, {writes(0)}, 128, 3), launch(1, {writes(256)}),
                    launch(2, {writes(512)}, 96)};
  entry.launches[1].dynamicSharedBytes = 4096;
  std::string source;
  mergeIndependentLaunches(entry, ks, "sm_90", [&](const std::string &s) {
    source = s;
    return std::optional<size_t>(9);
  });
  ASSERT_EQ(entry.launches.size(), 1u);
  EXPECT_EQ(entry.launches[0].block, (std::array<uint32_t, 3>{256, 1, 1}));
  EXPECT_EQ(entry.launches[0].grid, (std::array<uint32_t, 3>{7, 1, 1}));
  EXPECT_EQ(entry.launches[0].dynamicSharedBytes, 4096u);
  EXPECT_NE(source.find("__launch_bounds__(256)"), std::string::npos);
  // Each part sees its own block size (merged.cuh leaves the others' threads
  // out).
  EXPECT_NE(source.find("kiln::part<0, 3, 1, 1, 128, 1, 1>"),
            std::string::npos);
  EXPECT_NE(source.find("kiln::part<5, 2, 1, 1, 96, 1, 1>"),
            std::string::npos);
  // Blocks of whole warps only: 100 threads would leave a partial warp.
  entry.launches = {launch(0, {writes(0)}, 128), launch(1, {writes(256)}, 100)};
  mergeIndependentLaunches(entry, ks, "sm_90", [&](const std::string &) {
    return std::optional<size_t>(9);
  });
  EXPECT_EQ(entry.launches.size(), 2u);
}

TEST(LaunchMerging, ArchSpecificKernelsLargeSharedMemoryAndNoPartStayAlone) {
  std::vector<CompiledKernelImage> ks = kernels(4, "sm_90");
  ks[1].arch = "sm_90a";
  ks[3].part = KernelPart();
  CompiledEntry entry;
  entry.launches = {launch(0, {writes(0)}), launch(1, {writes(256)}),
                    launch(2, {writes(512)}), launch(3, {writes(768)})};
  entry.launches[2].dynamicSharedBytes = 200 * 1024;
  int calls = 0;
  mergeIndependentLaunches(entry, ks, "sm_90", [&](const std::string &) {
    ++calls;
    return std::optional<size_t>(7);
  });
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(entry.launches.size(), 4u);
}

TEST(LaunchMerging, ClusteredAndCooperativeLaunchesStayAlone) {
  // Their kernels may have parts (a launch shape is not a property of the
  // code): the launches alone keep them apart.
  std::vector<CompiledKernelImage> ks = kernels(3, "sm_90");
  CompiledEntry entry;
  entry.launches = {launch(0, {writes(0)}), launch(1, {writes(256)}),
                    launch(2, {writes(512)})};
  entry.launches[0].cluster = {2, 1, 1};
  entry.launches[2].cooperative = true;
  int calls = 0;
  mergeIndependentLaunches(entry, ks, "sm_90", [&](const std::string &) {
    ++calls;
    return std::optional<size_t>(7);
  });
  EXPECT_EQ(calls, 0);
  ASSERT_EQ(entry.launches.size(), 3u);
  EXPECT_EQ(entry.launches[0].cluster, (std::array<uint32_t, 3>{2, 1, 1}));
  EXPECT_TRUE(entry.launches[2].cooperative);
}

TEST(LaunchMerging, PersistentLaunchesStayAlone) {
  // The runtime may shrink a persistent grid, which a merged one could not
  // survive: the same two launches merge only when neither is persistent.
  for (unsigned persistent : {0u, 1u}) {
    std::vector<CompiledKernelImage> ks = kernels(2, "sm_90");
    CompiledEntry entry;
    entry.launches = {launch(0, {writes(0)}), launch(1, {writes(256)})};
    entry.launches[1].persistentBlocksPerSm = persistent;
    int calls = 0;
    mergeIndependentLaunches(entry, ks, "sm_90", [&](const std::string &) {
      ++calls;
      return std::optional<size_t>(7);
    });
    EXPECT_EQ(calls, persistent ? 0 : 1);
    EXPECT_EQ(entry.launches.size(), persistent ? 2u : 1u);
  }
}

// Two kernels that each define the same helpers and use a 2-D grid: their
// merged source must compile, and each part must see its own block index,
// grid and (in a larger one-dimensional block) thread index.
TEST(LaunchMerging, MergedSourceCompiles) {
  auto part = [](const std::string &name, const std::string &scale) {
    KernelSpec spec;
    spec.prefix = name;
    spec.functors = "typedef float elem;\n"
                    "__device__ __forceinline__ elem twice(elem x) { return "
                    "2 * x; }\n";
    spec.addParam("const elem *__restrict__", "in", LaunchArg::operand(0));
    spec.addParam("elem *__restrict__", "out", LaunchArg::result(0));
    spec.addParam("int", "n", LaunchArg::i32(0));
    spec.body = "  __shared__ elem tile[256];\n"
                "  const unsigned t = ctx.thread_rank();\n"
                "  const int i = (ctx.block.y * ctx.grid.x + ctx.block.x) * "
                "ctx.block_threads() + t;\n"
                "  tile[t] = i < n ? in[i] : 0;\n"
                "  __syncthreads();\n"
                "  if (i < n) out[i] = " +
                scale + " * twice(tile[ctx.block_threads() - 1 - t]);\n";
    spec.block = {256, 1, 1};
    return image(spec, "sm_90");
  };
  std::vector<CompiledKernelImage> ks = {part("first", "3.0f"),
                                         part("second", "5.0f")};
  CompiledArg n;
  n.kind = LaunchArg::Kind::I32;
  // The second part (64 x 2 threads) runs in the first's 256-thread blocks;
  // half its warps take no part, the others see their 2-D thread index.
  std::vector<CompiledLaunch> launches = {
      launch(0, {reads(0), writes(4096), n}, 256, 4),
      launch(1, {reads(0), writes(8192), n}, 128, 3)};
  launches[1].block = {64, 2, 1};
  launches[0].grid = {2, 2, 1};
  std::string source = mergedKernelSource(ks, launches);
  EXPECT_NE(source.find("kiln::part<0, 2, 2, 1, 256, 1, 1>"),
            std::string::npos)
      << source;
  EXPECT_NE(source.find("kiln::part<4, 3, 1, 1, 64, 2, 1>"),
            std::string::npos)
      << source;
  EXPECT_EQ(source.find("#define"), std::string::npos) << source;
  size_t at = source.find("KILN_KERNEL_NAME");
  ASSERT_NE(at, std::string::npos);
  source.replace(at, strlen("KILN_KERNEL_NAME"), "merged");
  CompiledKernel compiled;
  std::string error;
  ASSERT_TRUE(compileCuda(source, "merged", "sm_90", /*withCubin=*/true,
                          compiled, error))
      << error << "\n"
      << source;
  EXPECT_NE(compiled.ptx.find(".entry merged"), std::string::npos);
  EXPECT_NE(compiled.ptx.find("griddepcontrol.wait"), std::string::npos);
  EXPECT_FALSE(compiled.cubin.empty());
}

} // namespace
} // namespace mlir::kiln::codegen
