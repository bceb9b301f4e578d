#include "codegen/cuda/PredecessorWait.h"

#include "codegen/cuda/KernelEmitter.h"
#include "codegen/cuda/Nvrtc.h"

#include "gtest/gtest.h"

#include <string>

namespace mlir::kiln::codegen {
namespace {

std::string entry(const std::string &body) {
  return ".version 9.0\n.target sm_90\n.address_size 64\n\n"
         ".visible .entry k(\n\t.param .u64 k_param_0\n)\n{\n"
         "\t.reg .b64 \t%rd<4>;\n\t.reg .f32 \t%f<2>;\n" +
         body + "\tret;\n\n}\n";
}

TEST(PredecessorWaitTest, WaitFirstIsFine) {
  EXPECT_EQ(accessBeforeWait(entry("\tld.param.u64 \t%rd1, [k_param_0];\n"
                                   "\tcvta.to.global.u64 \t%rd2, %rd1;\n"
                                   "\t// begin inline asm\n"
                                   "\tgriddepcontrol.wait;\n"
                                   "\t// end inline asm\n"
                                   "\tld.global.f32 \t%f1, [%rd2];\n"),
                             "k"),
            std::nullopt);
}

TEST(PredecessorWaitTest, GlobalLoadBeforeTheWait) {
  auto early = accessBeforeWait(entry("\tld.param.u64 \t%rd1, [k_param_0];\n"
                                      "\tld.global.nc.f32 \t%f1, [%rd1];\n"
                                      "\tgriddepcontrol.wait;\n"),
                                "k");
  ASSERT_TRUE(early.has_value());
  EXPECT_NE(early->find("ld.global.nc.f32"), std::string::npos) << *early;
  EXPECT_NE(early->find("line 12:"), std::string::npos) << *early;
}

TEST(PredecessorWaitTest, StoresAtomicsCopiesAndGenericAccessesBeforeTheWait) {
  for (const char *access :
       {"st.global.f32 \t[%rd1], %f1;", "st.f32 \t[%rd1], %f1;",
        "ld.u32 \t%r1, [%rd1];", "atom.global.add.u32 \t%r1, [%rd1], 1;",
        "red.release.gpu.global.add.u32 [%rd1], 1;",
        "cp.async.bulk.tensor.2d.shared::cluster.global [%r1], [%rd1, {%r2, "
        "%r3}], [%r4];",
        "prefetch.global.L2 \t[%rd1];"}) {
    auto early = accessBeforeWait(
        entry("\t" + std::string(access) + "\n\tgriddepcontrol.wait;\n"), "k");
    EXPECT_TRUE(early.has_value()) << access;
  }
}

TEST(PredecessorWaitTest, BranchesAndLabelsBeforeTheWait) {
  EXPECT_TRUE(accessBeforeWait(entry("\t@%p1 bra \t$L__BB0_2;\n"
                                     "\tgriddepcontrol.wait;\n"
                                     "$L__BB0_2:\n"),
                               "k")
                  .has_value());
  EXPECT_TRUE(
      accessBeforeWait(entry("$L__BB0_1:\n\tgriddepcontrol.wait;\n"), "k")
          .has_value());
}

TEST(PredecessorWaitTest, PrivateMemoryBeforeTheWaitIsFine) {
  EXPECT_EQ(accessBeforeWait(entry("\tst.shared.u32 \t[%r1], 0;\n"
                                   "\tld.shared.u32 \t%r2, [%r1];\n"
                                   "\tst.local.u32 \t[%rd1], 0;\n"
                                   "\tgriddepcontrol.wait;\n"),
                             "k"),
            std::nullopt);
}

TEST(PredecessorWaitTest, NoWaitOrNoEntry) {
  EXPECT_EQ(accessBeforeWait(entry("\tmov.u32 \t%r1, 0;\n"), "k"),
            "it ends without a griddepcontrol.wait (line 12: ret;)");
  EXPECT_EQ(accessBeforeWait(entry("\tgriddepcontrol.wait;\n"), "kk"),
            "no entry 'kk' in the PTX");
}

// The check on what NVRTC makes of kernels: the renderer's stub (the wait,
// then the body) passes; a kernel that reads its input before waiting, as a
// stub that read a pointer table or a template that prefetched would, fails.
TEST(PredecessorWaitTest, CompiledKernels) {
  const std::string prelude = "#include \"kiln/prelude.cuh\"\n";
  const std::string waitsFirst =
      prelude +
      "extern \"C\" __global__ void k(const float *in, float *out) {\n"
      "  " +
      kWaitForPredecessor.str() +
      "\n  out[threadIdx.x] = 2.f * in[threadIdx.x];\n}\n";
  const std::string readsFirst =
      prelude +
      "extern \"C\" __global__ void k(const float *__restrict__ in, float "
      "*out) {\n  const float x = __ldg(in + threadIdx.x);\n  " +
      kWaitForPredecessor.str() + "\n  out[threadIdx.x] = 2.f * x;\n}\n";
  CompiledKernel compiled;
  std::string error;
  ASSERT_TRUE(compileCuda(waitsFirst, "k", "sm_90", false, compiled, error))
      << error;
  EXPECT_EQ(accessBeforeWait(compiled.ptx, "k"), std::nullopt);
  ASSERT_TRUE(compileCuda(readsFirst, "k", "sm_90", false, compiled, error))
      << error;
  auto early = accessBeforeWait(compiled.ptx, "k");
  ASSERT_TRUE(early.has_value());
  EXPECT_NE(early->find("ld.global.nc"), std::string::npos) << *early;
}

} // namespace
} // namespace mlir::kiln::codegen
