#include "tools/kiln-run/describe.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/artifact/test_artifacts.h"

namespace kiln {
namespace {

using ::testing::HasSubstr;

TEST(DescribeTest, EverythingAnArtifactHolds) {
  artifact::Artifact a = artifact::testing::ClassifierArtifact();
  a.checksum = 0xabcdef;
  const std::string text = DescribeArtifact(a, "cls.kiln", 5000);
  EXPECT_THAT(text, HasSubstr("cls.kiln: kiln artifact, format 3, 5000 bytes "
                              "(4.88 KiB), checksum 0000000000abcdef\n"));
  EXPECT_THAT(text,
              HasSubstr("compiled by: kilnc 0.1.0 (kiln, commit 1234567)\n"));
  EXPECT_THAT(text, HasSubstr("target: sm_90 (PTX for sm_90; 3 of 3 kernels "
                              "with a cubin)\n"));
  EXPECT_THAT(text, HasSubstr("precision: f32 parameters\nweights: none "
                              "carried (parameters start from their "
                              "initialisers)\n"));
  // Entries, their inputs and outputs with their roles, aligned.
  EXPECT_THAT(text, HasSubstr("entry forward: 2 launches, arena 2048 bytes "
                              "(2 KiB)\n"));
  EXPECT_THAT(text,
              HasSubstr("  in   tokens    i32[4,2]   batch input, values in "
                        "[0, 16) (indices of kiln.embedding of 16 rows)\n"));
  EXPECT_THAT(
      text,
      HasSubstr("  in   labels    i32[4]     batch input, values "
                "in [0, 3) or -100 (labels of "
                "kiln.cross_entropy over 3 classes with ignore_index -100)\n"));
  EXPECT_THAT(text, HasSubstr("  in   emb       f32[16,4]  parameter, "
                              "supplied by the runtime\n"));
  EXPECT_THAT(text, HasSubstr("  in   running   f32[3]     model state, "
                              "supplied by the runtime\n"));
  EXPECT_THAT(text, HasSubstr("  out  loss      f32[]      returned\n"));
  EXPECT_THAT(text, HasSubstr("entry train_step: 3 launches"));
  EXPECT_THAT(text, HasSubstr("  in   lr       f32[]      learning rate, "
                              "supplied by the runtime\n"));
  EXPECT_THAT(text, HasSubstr("  in   step     i32[]      update number, "
                              "supplied by the runtime\n"));
  EXPECT_THAT(text, HasSubstr("  out  emb      f32[16,4]  parameter, updated "
                              "in place\n"));
  // Parameters and state with their roles and initialisers.
  EXPECT_THAT(text, HasSubstr("parameters and state: 9 resident buffers, "
                              "1228 bytes (1.2 KiB)\n"));
  EXPECT_THAT(text, HasSubstr("  emb         f32[16,4]  parameter         "
                              "normal (mean 0, std 0.02)\n"));
  EXPECT_THAT(text, HasSubstr("  running     f32[3]     model state       "
                              "zeros\n"));
  EXPECT_THAT(text, HasSubstr("  adam_m.emb  f32[16,4]  optimizer moment"));
  EXPECT_THAT(text, HasSubstr("  grad.w      f32[4,3]   gradient\n"));
  // Kernels by family.
  EXPECT_THAT(text, HasSubstr("kernels: 3 in 3 families\n"));
  EXPECT_THAT(text, HasSubstr("  kiln_cross_entropy_rows (1): "
                              "kiln_cross_entropy_rows_112233445566\n"));
  // Memory.
  EXPECT_THAT(text, HasSubstr("memory: resident 1228 bytes (1.2 KiB) "
                              "(parameter 304 bytes, optimizer moment 608 "
                              "bytes, gradient 304 bytes, model state 12 "
                              "bytes)\n"));
  EXPECT_THAT(text, HasSubstr("  train_step  arena 4096 bytes (4 KiB)  with "
                              "the resident buffers 5324 bytes (5.2 KiB)\n"));
}

TEST(DescribeTest, OlderArtifactsAndMasterWeights) {
  const std::string text = DescribeArtifact(
      artifact::testing::MixedPrecisionArtifact(), "mp.kiln", 100);
  EXPECT_THAT(text, HasSubstr("compiled by: not recorded (an older kilnc)\n"));
  EXPECT_THAT(text, HasSubstr("precision: bf16 and f16 parameters with f32 "
                              "master weights\n"));
  EXPECT_THAT(text, HasSubstr("target: sm_90a"));
}

TEST(DescribeTest, CarriedWeights) {
  artifact::Artifact a = artifact::testing::WeightsArtifact();
  // fc.weight's first bf16 values 0.5 and -2, table's f32 1.5 (f32 0x3fc00000).
  std::string weight(24, '\0'), table(160, '\0');
  weight[1] = 0x3f;
  weight[3] = static_cast<char>(0xc0);
  table[2] = static_cast<char>(0xc0);
  table[3] = 0x3f;
  a.resident_buffers[0].initial_value = artifact::InitialValue::Copy(weight);
  a.resident_buffers[4].initial_value = artifact::InitialValue::Copy(table);
  const std::string text = DescribeArtifact(a, "w.kiln", 1000);
  EXPECT_THAT(text, HasSubstr("weights: 4 buffers start from values the "
                              "artifact carries, 244 bytes\n"));
  EXPECT_THAT(text, HasSubstr("  fc.weight         bf16[4,3]  parameter      "
                              "carried: 0.5, -2, 0, ...\n"));
  EXPECT_THAT(text, HasSubstr("  fc.bias           bf16[3]    parameter      "
                              "zeros\n"));
  EXPECT_THAT(text, HasSubstr("  table             f32[40]    constant       "
                              "carried: 1.5, 0, 0, ...\n"));
}

TEST(DescribeTest, KernelFamilies) {
  EXPECT_EQ(KernelFamily("kiln_conv_split_sum_f645387601d8"),
            "kiln_conv_split_sum");
  EXPECT_EQ(KernelFamily("relu_0"), "relu");
  EXPECT_EQ(KernelFamily("kiln_gemm_xyz"), "kiln_gemm_xyz");
  EXPECT_EQ(KernelFamily("plain"), "plain");
  EXPECT_EQ(BytesText(512), "512 bytes");
  EXPECT_EQ(BytesText(uint64_t{437} << 20), "458227712 bytes (437 MiB)");
}

}  // namespace
}  // namespace kiln
