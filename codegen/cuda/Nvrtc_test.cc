#include "codegen/cuda/Nvrtc.h"

#include <gtest/gtest.h>

namespace mlir::kiln::codegen {
namespace {

TEST(Nvrtc, CompilesPreludeUsingKernelToPtxAndCubin) {
  const char *source = R"cuda(
#include "kiln/prelude.cuh"
extern "C" __global__ void fill_uniform(__nv_bfloat16 *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    kiln_store(out + i, kiln_max(kiln_uniform01(7, 1, 0, i), 0.5f));
}
)cuda";
  CompiledKernel kernel;
  std::string error;
  ASSERT_TRUE(compileCuda(source, "fill_uniform", "sm_90", true, kernel, error))
      << error;
  EXPECT_NE(kernel.ptx.find(".visible .entry fill_uniform"), std::string::npos);
  EXPECT_NE(kernel.ptx.find(".target sm_90"), std::string::npos);
  ASSERT_GT(kernel.cubin.size(), 4u);
  EXPECT_EQ(kernel.cubin[0], 0x7f); // ELF
  EXPECT_EQ(kernel.cubin[1], 'E');
}

TEST(Nvrtc, ReportsErrorsWithTheLog) {
  CompiledKernel kernel;
  std::string error;
  EXPECT_FALSE(
      compileCuda("extern \"C\" __global__ void k() { undefined_thing; }",
                  "broken", "sm_90", false, kernel, error));
  EXPECT_NE(error.find("broken.cu"), std::string::npos) << error;
  EXPECT_NE(error.find("undefined_thing"), std::string::npos) << error;
}

TEST(Nvrtc, RejectsBadArch) {
  CompiledKernel kernel;
  std::string error;
  EXPECT_FALSE(compileCuda("", "k", "gfx90a", false, kernel, error));
  EXPECT_NE(error.find("sm_90"), std::string::npos);
}

TEST(Nvrtc, ArchSpecificTargetsTakeWgmma) {
  EXPECT_EQ(archSpecificTarget("sm_90"), "sm_90a");
  EXPECT_EQ(archSpecificTarget("sm_90a"), "sm_90a");
  const char *source = R"cuda(
extern "C" __global__ void fence_only() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
}
)cuda";
  CompiledKernel kernel;
  std::string error;
  ASSERT_TRUE(compileCuda(source, "fence_only", "sm_90a", true, kernel, error))
      << error;
  EXPECT_NE(kernel.ptx.find(".target sm_90a"), std::string::npos);
  EXPECT_GT(kernel.cubin.size(), 4u);
  // The plain target refuses wgmma.
  EXPECT_FALSE(compileCuda(source, "fence_only", "sm_90", true, kernel, error));
}

TEST(ContentHash, Differs) {
  EXPECT_NE(contentHash("a"), contentHash("b"));
  EXPECT_EQ(contentHash("kernel"), contentHash("kernel"));
}

} // namespace
} // namespace mlir::kiln::codegen
