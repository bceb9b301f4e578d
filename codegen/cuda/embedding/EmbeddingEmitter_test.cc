//===- EmbeddingEmitter_test.cc - kernels of "embedding" fusions ----------===//
//
// kiln.embedding_backward in f32, bf16 and f16, indices of rank 0 to 2, one
// to three radix passes, narrow, wide and odd rows, no lookups and an empty
// table: the planned launches (grids, scratch, the order of the kernels and
// which buffers they pass on), each kernel compiled to PTX and an sm_90
// cubin, and no floating-point atomics. What the kernels compute is checked
// on the CPU by kernels/embedding_test.cc.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/EmitterTestUtils.h"
#include "codegen/cuda/KernelTemplates.h"

#include "kiln/embedding_layout.cuh"

namespace mlir::kiln::codegen {
namespace {

namespace layout = ::kiln::embedding;

class EmbeddingEmitterTest : public EmitterTest {
protected:
  std::unique_ptr<KernelEmitter> emitter = createEmbeddingEmitter();

  /// The gradient of a `table` table from `grad` and `indices`.
  GeneratedFusion emit(llvm::StringRef grad, llvm::StringRef indices,
                       llvm::StringRef table, bool writes = true) {
    std::string op = ("kiln.embedding_backward %arg0, %arg1 : " + grad + ", " +
                      indices + " -> " + table)
                         .str();
    FusionOp fusion =
        fusionOf("embedding", op, (grad + ", " + indices).str(), table);
    GeneratedFusion g = emitAndCompile(*emitter, fusion);
    if (fusion && writes)
      expectWritesEveryResult(fusion, g);
    return g;
  }
  /// The templates the launches run, in order.
  static std::vector<std::string> templatesOf(const GeneratedFusion &g) {
    std::vector<std::string> names;
    for (const GeneratedLaunch &launch : g.launches)
      names.push_back(g.kernels[launch.kernel].templateName);
    return names;
  }
};

TEST_F(EmbeddingEmitterTest, OnePassForASmallTable) {
  GeneratedFusion g = emit("tensor<5x7x24xf32>", "tensor<5x7xi32>",
                           "tensor<4x24xf32>");
  EXPECT_EQ(templatesOf(g),
            (std::vector<std::string>{
                "embedding_radix_histogram", "embedding_radix_scatter",
                "embedding_segment_heads", "embedding_table_rows"}));
  ASSERT_EQ(g.launches.size(), 4u);
  EXPECT_EQ(g.launches[0].grid[0], 1u);
  EXPECT_EQ(g.launches[0].block[0], 256u);
  // The gradient (operand 0) is read only by the last two kernels; the
  // indices (operand 1) only by the first two.
  EXPECT_EQ(g.launches[0].args[0].kind, LaunchArg::Kind::Operand);
  EXPECT_EQ(g.launches[0].args[0].index, 1);
  EXPECT_EQ(g.launches[2].args[2].index, 0);
  EXPECT_EQ(g.launches[3].args.back().kind, LaunchArg::Kind::Result);
  EXPECT_NE(g.kernels[0].source.find("// kiln.embedding_backward"),
            std::string::npos);
  EXPECT_NE(g.kernels[0].source.find(
                "kiln::embedding::embedding_config<idx_t, 35, 4, 24, 4>"),
            std::string::npos);
}

TEST_F(EmbeddingEmitterTest, BenchmarkShapeSortsInTwoPasses) {
  GeneratedFusion g = emit("tensor<16384x1024xbf16>", "tensor<16384xi32>",
                           "tensor<32768x1024xbf16>");
  EXPECT_EQ(templatesOf(g),
            (std::vector<std::string>{
                "embedding_radix_histogram", "embedding_radix_scatter",
                "embedding_radix_histogram", "embedding_radix_scatter",
                "embedding_segment_heads", "embedding_table_rows"}));
  ASSERT_EQ(g.launches.size(), 6u);
  EXPECT_EQ(g.launches[0].grid[0], 16u);
  EXPECT_EQ(g.launches[4].grid[0], 64u);
  // 32 threads per row, 16 bytes per step, 4 rows per block.
  EXPECT_EQ(g.launches[5].grid[0], 8192u);
  EXPECT_EQ(g.launches[5].block[0], 128u);
  EXPECT_NE(g.kernels.back().configuration.find("group=32 steps=4 cached"),
            std::string::npos);
  // The second pass reads what the first wrote, and the runs kernel what
  // the second wrote.
  const GeneratedLaunch &scatter0 = g.launches[1], &scatter1 = g.launches[3],
                        &heads = g.launches[4];
  EXPECT_EQ(g.launches[2].args[0].index, scatter0.args[2].index);
  EXPECT_EQ(scatter1.args[0].index, scatter0.args[2].index);
  EXPECT_EQ(scatter1.args[1].index, scatter0.args[3].index);
  EXPECT_EQ(heads.args[0].index, scatter1.args[3].index);
  EXPECT_EQ(heads.args[1].index, scatter1.args[4].index);
  EXPECT_EQ(g.launches[5].args[0].index, scatter1.args[4].index);
  EXPECT_GE(g.scratchBytes,
            uint64_t(layout::bounds_bytes(32768) +
                     layout::partial_bytes(16384, 1024) +
                     4 * layout::sorted_bytes(16384)));
}

TEST_F(EmbeddingEmitterTest, ThreePassesForLargeTables) {
  GeneratedFusion g =
      emit("tensor<4x300x64xf16>", "tensor<4x300xi32>", "tensor<70000x64xf16>");
  EXPECT_EQ(g.launches.size(), 8u);
  // Pass 2 reads pass 1's buffer, which is pass 0's other one.
  EXPECT_EQ(g.launches[5].args[0].index, g.launches[3].args[3].index);
  EXPECT_NE(g.launches[5].args[0].index, g.launches[1].args[2].index);
  EXPECT_EQ(g.launches[6].args[0].index, g.launches[5].args[3].index);
}

TEST_F(EmbeddingEmitterTest, RowShapes) {
  // Rank-0 indices: one lookup.
  emit("tensor<8xbf16>", "tensor<i32>", "tensor<10x8xbf16>");
  // Odd rows: element by element.
  GeneratedFusion odd =
      emit("tensor<3x33xbf16>", "tensor<3xi32>", "tensor<9x33xbf16>");
  EXPECT_NE(odd.kernels.back().configuration.find("w=1"), std::string::npos);
  // Rows too wide for registers walk the run once per step.
  GeneratedFusion wide =
      emit("tensor<100x9000xf32>", "tensor<100xi32>", "tensor<5x9000xf32>");
  EXPECT_EQ(wide.launches.back().block[0], 256u);
  EXPECT_EQ(wide.kernels.back().configuration.find("cached"),
            std::string::npos);
}

TEST_F(EmbeddingEmitterTest, NoLookupsOrNoTable) {
  GeneratedFusion none =
      emit("tensor<0x3x16xf32>", "tensor<0x3xi32>", "tensor<6x16xf32>");
  EXPECT_EQ(templatesOf(none),
            std::vector<std::string>{"embedding_table_rows"});
  EXPECT_EQ(none.scratchBytes, 0u);
  GeneratedFusion empty = emit("tensor<5x0xf32>", "tensor<5xi32>",
                               "tensor<7x0xf32>", /*writes=*/false);
  EXPECT_TRUE(empty.launches.empty());
}

TEST_F(EmbeddingEmitterTest, NoFloatingPointAtomics) {
  GeneratedFusion g =
      emit("tensor<2x50x64xbf16>", "tensor<2x50xi32>", "tensor<1000x64xbf16>");
  for (const GeneratedKernel &k : g.kernels)
    EXPECT_EQ(k.source.find("atomic"), std::string::npos);
  // The template's one atomic counts digits in shared memory.
  llvm::StringRef text = kernelTemplate("kiln/embedding.cuh");
  ASSERT_FALSE(text.empty());
  size_t count = 0;
  for (size_t at = text.find("atomicAdd("); at != llvm::StringRef::npos;
       at = text.find("atomicAdd(", at + 1)) {
    EXPECT_TRUE(text.substr(at).starts_with("atomicAdd(&bins["));
    ++count;
  }
  EXPECT_EQ(count, 1u);
}

TEST_F(EmbeddingEmitterTest, MatchesOnlyEmbeddingGradients) {
  const char *op = "kiln.embedding_backward %arg0, %arg1 : tensor<3x8xf32>, "
                   "tensor<3xi32> -> tensor<4x8xf32>";
  EXPECT_TRUE(emitter->matches(fusionOf("embedding", op,
                                        "tensor<3x8xf32>, tensor<3xi32>",
                                        "tensor<4x8xf32>")));
  EXPECT_FALSE(emitter->matches(fusionOf("pointwise", op,
                                         "tensor<3x8xf32>, tensor<3xi32>",
                                         "tensor<4x8xf32>")));
  EXPECT_FALSE(emitter->matches(fusionOf(
      "embedding", "kiln.embedding %arg0, %arg1 : tensor<4x8xf32>, "
                   "tensor<3xi32>",
      "tensor<4x8xf32>, tensor<3xi32>", "tensor<3x8xf32>")));
}

TEST_F(EmbeddingEmitterTest, RegistryDispatchesEmbeddingGradients) {
  FusionOp fusion = fusionOf(
      "embedding",
      "kiln.embedding_backward %arg0, %arg1 : tensor<3x8xbf16>, "
      "tensor<3xi32> -> tensor<4x8xbf16>",
      "tensor<3x8xbf16>, tensor<3xi32>", "tensor<4x8xbf16>");
  ASSERT_TRUE(fusion);
  FailureOr<GeneratedFusion> g = emitFusion(fusion, CodegenOptions());
  ASSERT_TRUE(succeeded(g)) << diagnostics;
  EXPECT_EQ(g->launches.size(), 4u);
}

} // namespace
} // namespace mlir::kiln::codegen
