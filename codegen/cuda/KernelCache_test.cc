#include "codegen/cuda/KernelCache.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

namespace mlir::kiln::codegen {
namespace {

constexpr const char *kSource = R"cuda(
#include "kiln/prelude.cuh"
extern "C" __global__ void scale(float *out, const float *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = 3.0f * in[i];
}
)cuda";

/// A fresh directory under the test's temporary folder.
std::string freshDirectory(const char *name) {
  llvm::SmallString<256> path;
  const char *root = std::getenv("TEST_TMPDIR");
  llvm::sys::path::append(path, root ? root : "/tmp",
                          std::string("kernel-cache-") + name);
  llvm::sys::fs::remove_directories(path);
  return std::string(path);
}

std::string readFile(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, false, false);
  return buffer ? (*buffer)->getBuffer().str() : std::string();
}

TEST(KernelCache, SecondCompilerFindsTheKernel) {
  std::string directory = freshDirectory("hit");
  CompiledKernel first, second;
  std::string error;
  KernelCache writer(directory);
  ASSERT_TRUE(writer.compile(kSource, "scale", "sm_90", true, first, error))
      << error;
  EXPECT_EQ(writer.hits(), 0u);
  EXPECT_EQ(writer.misses(), 1u);
  EXPECT_EQ(writer.failedStores(), 0u);
  std::string key = KernelCache::keyOf(kSource, "scale", "sm_90", true);
  EXPECT_TRUE(llvm::sys::fs::exists(writer.entryPath(key)));

  KernelCache reader(directory);
  ASSERT_TRUE(reader.compile(kSource, "scale", "sm_90", true, second, error))
      << error;
  EXPECT_EQ(reader.hits(), 1u);
  EXPECT_EQ(reader.misses(), 0u);
  EXPECT_EQ(second.ptx, first.ptx);
  EXPECT_EQ(second.cubin, first.cubin);
  EXPECT_EQ(second.log, first.log);
  ASSERT_GT(second.cubin.size(), 4u);
  EXPECT_EQ(second.cubin[0], 0x7f);
}

TEST(KernelCache, KeyCoversSourceNameArchAndCubin) {
  std::string key = KernelCache::keyOf(kSource, "scale", "sm_90", true);
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(key, KernelCache::keyOf(kSource, "scale", "sm_90", true));
  EXPECT_NE(key, KernelCache::keyOf(std::string(kSource) + " ", "scale",
                                    "sm_90", true));
  EXPECT_NE(key, KernelCache::keyOf(kSource, "scale2", "sm_90", true));
  EXPECT_NE(key, KernelCache::keyOf(kSource, "scale", "sm_90a", true));
  EXPECT_NE(key, KernelCache::keyOf(kSource, "scale", "sm_90", false));
  // Lengths are part of the key: moving bytes between parts changes it.
  EXPECT_NE(KernelCache::keyOf("ab", "c", "sm_90", true),
            KernelCache::keyOf("b", "ac", "sm_90", true));
}

TEST(KernelCache, DamagedEntryIsRecompiledAndRewritten) {
  std::string directory = freshDirectory("damaged");
  CompiledKernel kernel, again;
  std::string error;
  KernelCache cache(directory);
  ASSERT_TRUE(cache.compile(kSource, "scale", "sm_90", true, kernel, error))
      << error;
  std::string path =
      cache.entryPath(KernelCache::keyOf(kSource, "scale", "sm_90", true));
  std::string bytes = readFile(path);
  ASSERT_GT(bytes.size(), 100u);

  // One flipped byte in the middle, then a truncated file: both miss.
  for (int damage = 0; damage < 2; ++damage) {
    std::string broken = bytes;
    if (damage == 0)
      broken[broken.size() / 2] ^= 0x20;
    else
      broken.resize(broken.size() / 3);
    std::ofstream(path, std::ios::binary | std::ios::trunc) << broken;
    KernelCache reader(directory);
    ASSERT_TRUE(reader.compile(kSource, "scale", "sm_90", true, again, error))
        << error;
    EXPECT_EQ(reader.hits(), 0u) << "damage " << damage;
    EXPECT_EQ(reader.misses(), 1u);
    EXPECT_EQ(again.cubin, kernel.cubin);
    EXPECT_EQ(readFile(path), bytes) << "the entry is rewritten whole";
  }
}

TEST(KernelCache, UnwritableDirectoryStillCompiles) {
  std::string directory = freshDirectory("blocked");
  // A regular file where the directory should be.
  std::ofstream(directory) << "not a directory";
  KernelCache cache(directory + "/kernels");
  CompiledKernel kernel;
  std::string error;
  ASSERT_TRUE(cache.compile(kSource, "scale", "sm_90", false, kernel, error))
      << error;
  EXPECT_EQ(cache.failedStores(), 1u);
  EXPECT_FALSE(kernel.ptx.empty());
}

TEST(KernelCache, DisabledCacheWritesNothing) {
  KernelCache cache("");
  EXPECT_FALSE(cache.enabled());
  CompiledKernel kernel;
  std::string error;
  ASSERT_TRUE(cache.compile(kSource, "scale", "sm_90", false, kernel, error))
      << error;
  EXPECT_EQ(cache.hits() + cache.misses(), 0u);
}

TEST(KernelCache, CompileErrorsAreNotCached) {
  std::string directory = freshDirectory("errors");
  KernelCache cache(directory);
  CompiledKernel kernel;
  std::string error;
  EXPECT_FALSE(cache.compile("extern \"C\" __global__ void k() { nope; }", "k",
                             "sm_90", false, kernel, error));
  EXPECT_NE(error.find("nope"), std::string::npos) << error;
  EXPECT_FALSE(llvm::sys::fs::exists(directory));
}

TEST(KernelCache, DefaultDirectoryFollowsTheEnvironment) {
  setenv("KILN_KERNEL_CACHE", "/some/where", 1);
  EXPECT_EQ(KernelCache::defaultDirectory(), "/some/where");
  setenv("KILN_KERNEL_CACHE", "", 1);
  EXPECT_EQ(KernelCache::defaultDirectory(), "");
  unsetenv("KILN_KERNEL_CACHE");
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  EXPECT_EQ(KernelCache::defaultDirectory(), "/xdg/kiln/kernels");
  unsetenv("XDG_CACHE_HOME");
  setenv("HOME", "/home/u", 1);
  EXPECT_EQ(KernelCache::defaultDirectory(), "/home/u/.cache/kiln/kernels");
}

} // namespace
} // namespace mlir::kiln::codegen
