//===- ReductionEmitter_test.cc - kernels of "reduction" fusions ----------===//
//
// Every supported op in f32/bf16/f16 (and i32 where accepted), odd sizes,
// strided and multi-group reductions, whole-tensor two-pass reductions,
// rank-0 operands and the shapes of samples/sine_block.mlir: each kernel is
// compiled to PTX and an sm_90 cubin, launches are checked against the
// kernels' parameters, and emission is deterministic.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/EmitterTestUtils.h"

#include "kiln/reduce_layout.cuh"

namespace mlir::kiln::codegen {
namespace {

class ReductionEmitterTest : public EmitterTest {
protected:
  std::unique_ptr<KernelEmitter> emitter = createReductionEmitter();

  GeneratedFusion emit(llvm::StringRef op, llvm::StringRef operands,
                       llvm::StringRef results) {
    FusionOp fusion = fusionOf("reduction", op, operands, results);
    GeneratedFusion g = emitAndCompile(*emitter, fusion);
    if (fusion)
      expectWritesEveryResult(fusion, g);
    return g;
  }
  static size_t kernelsNamed(const GeneratedFusion &g, llvm::StringRef prefix) {
    size_t n = 0;
    for (const GeneratedKernel &k : g.kernels)
      n += llvm::StringRef(k.name).starts_with(prefix);
    return n;
  }
};

TEST_F(ReductionEmitterTest, ReduceSumTrailingDim) {
  GeneratedFusion g =
      emit("kiln.reduce_sum %arg0 dims = [2] : tensor<4x8x3xf32>",
           "tensor<4x8x3xf32>", "tensor<4x8xf32>");
  ASSERT_EQ(g.launches.size(), 1u);
  EXPECT_EQ(g.scratchBytes, 0u);
  // Three elements per row: one thread per row, 128 rows per block.
  EXPECT_EQ(g.launches[0].block[0], 128u);
  EXPECT_EQ(g.launches[0].grid[0], 1u);
  EXPECT_NE(g.kernels[0].source.find("// kiln.reduce_sum"), std::string::npos);
}

TEST_F(ReductionEmitterTest, ReduceSumOuterAndInnerDimsKeepdim) {
  GeneratedFusion g =
      emit("kiln.reduce_sum %arg0 dims = [0, 2] keepdim : tensor<4x8x3xf32>",
           "tensor<4x8x3xf32>", "tensor<1x8x1xf32>");
  ASSERT_EQ(g.launches.size(), 1u);
  // Two reduced groups: the offset of r is decomposed.
  EXPECT_NE(g.kernels[0].source.find("q % 3"), std::string::npos);
}

TEST_F(ReductionEmitterTest, ReduceOverLeadingDimIsColumnReduction) {
  GeneratedFusion g =
      emit("kiln.reduce_max %arg0 dims = [0] : tensor<37x5x70xf16>",
           "tensor<37x5x70xf16>", "tensor<5x70xf16>");
  ASSERT_GE(g.launches.size(), 1u);
  EXPECT_EQ(g.launches[0].block[0], 32u);
  EXPECT_EQ(g.launches[0].block[1], 8u);
  EXPECT_EQ(g.kernels[0].templateName, "reduce_columns");
  EXPECT_NE(g.kernels[0].source.find("kiln::reduce::reduce_columns<"),
            std::string::npos);
}

TEST_F(ReductionEmitterTest, ColumnReductionSplitsLongColumns) {
  GeneratedFusion g =
      emit("kiln.reduce_sum %arg0 dims = [0] : tensor<100000x3xf32>",
           "tensor<100000x3xf32>", "tensor<3xf32>");
  ASSERT_EQ(g.launches.size(), 2u);
  EXPECT_GT(g.launches[0].grid[1], 1u);
  EXPECT_GT(g.scratchBytes, 0u);
}

TEST_F(ReductionEmitterTest, ColumnReductionPastTheGridLimitRunsInTiles) {
  // 2^36 columns are 2^31 tiles of 32, one block each: more than a launch's
  // 2^31 - 1 blocks in x, so the kernel is launched with half as many,
  // each running two of the planned blocks (kiln/tiled_grid.cuh).
  GeneratedFusion g = emit(
      "kiln.reduce_max %arg0 dims = [0] : tensor<2x68719476736xf32>",
      "tensor<2x68719476736xf32>", "tensor<68719476736xf32>");
  ASSERT_EQ(g.launches.size(), 1u);
  EXPECT_EQ(g.kernels[0].templateName, "reduce_columns");
  EXPECT_EQ(g.launches[0].grid,
            (std::array<uint32_t, 3>{1u << 30, 1, 1}));
  EXPECT_NE(g.kernels[0].source.find("kiln::run_tiled<2147483648u"),
            std::string::npos)
      << g.kernels[0].source;
}

TEST_F(ReductionEmitterTest, SumAllIsDeterministicTwoPass) {
  GeneratedFusion g =
      emit("kiln.reduce_sum %arg0 dims = [0, 1] : tensor<1000x1001xbf16>",
           "tensor<1000x1001xbf16>", "tensor<bf16>");
  ASSERT_EQ(g.launches.size(), 2u);
  const GeneratedLaunch &first = g.launches[0], &second = g.launches[1];
  EXPECT_GT(first.grid[1], 100u);
  EXPECT_EQ(second.grid[0], 1u);
  EXPECT_EQ(first.args.back().kind, LaunchArg::Kind::Scratch);
  EXPECT_EQ(second.args[0].kind, LaunchArg::Kind::Scratch);
  EXPECT_EQ(second.args[1].kind, LaunchArg::Kind::Result);
  for (const GeneratedKernel &k : g.kernels)
    EXPECT_EQ(k.source.find("atomic"), std::string::npos);
  EXPECT_GE(g.scratchBytes, first.grid[1] * 4u);
}

TEST_F(ReductionEmitterTest, ReduceMeanAndMin) {
  GeneratedFusion g =
      emit("kiln.reduce_mean %arg0 dims = [1] : tensor<3x2000000xbf16>",
           "tensor<3x2000000xbf16>", "tensor<3xbf16>");
  EXPECT_EQ(g.launches.size(), 2u);
  EXPECT_NE(g.kernels.back().source.find("acc / 2000000.0f"),
            std::string::npos);
  emit("kiln.reduce_min %arg0 dims = [1, 3] : tensor<2x9x4x5xf32>",
       "tensor<2x9x4x5xf32>", "tensor<2x4xf32>");
  emit("kiln.reduce_mean %arg0 dims = [0, 1, 2] : tensor<1x1x1xf16>",
       "tensor<1x1x1xf16>", "tensor<f16>");
}

TEST_F(ReductionEmitterTest, IntegerReductionsWrap) {
  GeneratedFusion g =
      emit("kiln.reduce_sum %arg0 dims = [1] : tensor<6x1000xi32>",
           "tensor<6x1000xi32>", "tensor<6xi32>");
  EXPECT_NE(g.kernels[0].source.find("unsigned acc"), std::string::npos);
  emit("kiln.reduce_max %arg0 dims = [0] : tensor<6x17xi32>",
       "tensor<6x17xi32>", "tensor<17xi32>");
  emit("kiln.reduce_min %arg0 dims = [1] : tensor<6x17xi32>",
       "tensor<6x17xi32>", "tensor<6xi32>");
}

TEST_F(ReductionEmitterTest, Argmax) {
  GeneratedFusion g = emit("kiln.argmax %arg0 dim = 1 : tensor<4x10xf32>",
                           "tensor<4x10xf32>", "tensor<4xi32>");
  EXPECT_NE(g.kernels[0].source.find("kiln_argmax_op"), std::string::npos);
  emit("kiln.argmax %arg0 dim = 0 keepdim : tensor<300x7xbf16>",
       "tensor<300x7xbf16>", "tensor<1x7xi32>");
  emit("kiln.argmax %arg0 dim = 2 : tensor<2x3x50000xf16>",
       "tensor<2x3x50000xf16>", "tensor<2x3xi32>");
  emit("kiln.argmax %arg0 dim = 0 : tensor<9xi32>", "tensor<9xi32>",
       "tensor<i32>");
}

TEST_F(ReductionEmitterTest, SoftmaxRowsOfSineBlockAttention) {
  GeneratedFusion g = emit("kiln.softmax %arg0 dim = 3 : tensor<4x4x32x32xf32>",
                           "tensor<4x4x32x32xf32>", "tensor<4x4x32x32xf32>");
  ASSERT_EQ(g.launches.size(), 1u);
  // 512 rows of 32: four threads per row, 32 rows per 128-thread block.
  EXPECT_EQ(g.launches[0].block[0], 128u);
  EXPECT_EQ(g.launches[0].grid[0], 16u);
}

TEST_F(ReductionEmitterTest, SoftmaxAlongAnyDim) {
  GeneratedFusion g = emit("kiln.softmax %arg0 dim = 1 : tensor<3x10x7xbf16>",
                           "tensor<3x10x7xbf16>", "tensor<3x10x7xbf16>");
  EXPECT_NE(g.kernels[0].name.find("strided"), std::string::npos);
  emit("kiln.log_softmax %arg0 dim = 0 : tensor<1000x65xf16>",
       "tensor<1000x65xf16>", "tensor<1000x65xf16>");
  emit("kiln.log_softmax %arg0 dim = 1 : tensor<5x1xf32>", "tensor<5x1xf32>",
       "tensor<5x1xf32>");
  // Rows too long for registers are re-read.
  GeneratedFusion longRows =
      emit("kiln.log_softmax %arg0 dim = 1 : tensor<2x50001xf32>",
           "tensor<2x50001xf32>", "tensor<2x50001xf32>");
  EXPECT_EQ(longRows.launches[0].block[0], 1024u);
  EXPECT_FALSE(
      ::kiln::reduce::row_cached(50001, 1, ::kiln::reduce::row_group(50001)));
  EXPECT_EQ(longRows.kernels[0].configuration.find("cached"),
            std::string::npos);
}

TEST_F(ReductionEmitterTest, LayerNorm) {
  emit("kiln.layer_norm %arg0, %arg1, %arg2 dims = 2 eps = 1.0e-06 : "
       "tensor<2x7x4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>",
       "tensor<2x7x4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>",
       "tensor<2x7x4x6xf32>");
  emit("kiln.layer_norm %arg0 : tensor<3x5xf16>", "tensor<3x5xf16>",
       "tensor<3x5xf16>");
  GeneratedFusion g =
      emit("kiln.layer_norm %arg0, %arg1 : tensor<8x1024x1024xbf16>, "
           "tensor<1024xbf16>",
           "tensor<8x1024x1024xbf16>, tensor<1024xbf16>",
           "tensor<8x1024x1024xbf16>");
  EXPECT_EQ(g.launches[0].block[0], 128u);
  EXPECT_EQ(g.launches[0].grid[0], 8192u);
}

TEST_F(ReductionEmitterTest, RmsNormOfSineBlock) {
  GeneratedFusion g =
      emit("kiln.rms_norm %arg0, %arg1 eps = 1.0e-05 : "
           "tensor<4x32x64xf32>, tensor<64xf32>",
           "tensor<4x32x64xf32>, tensor<64xf32>", "tensor<4x32x64xf32>");
  ASSERT_EQ(g.launches.size(), 1u);
  EXPECT_EQ(g.launches[0].args.size(), 3u);
  emit("kiln.rms_norm %arg0 : tensor<7x3000xbf16>", "tensor<7x3000xbf16>",
       "tensor<7x3000xbf16>");
  emit("kiln.rms_norm %arg0, %arg1 : tensor<5xf16>, tensor<5xf16>",
       "tensor<5xf16>, tensor<5xf16>", "tensor<5xf16>");
}

TEST_F(ReductionEmitterTest, RmsNormBackwardOfSineBlock) {
  GeneratedFusion g =
      emit("kiln.rms_norm_backward %arg0, %arg1, %arg2 : "
           "tensor<4x32x64xf32>, tensor<64xf32>",
           "tensor<4x32x64xf32>, tensor<4x32x64xf32>, tensor<64xf32>",
           "tensor<4x32x64xf32>, tensor<64xf32>");
  // dx (leaving row statistics), then the weight gradient: 128 rows are one
  // launch, not a split over rows and a combining launch.
  ASSERT_EQ(g.launches.size(), 2u);
  EXPECT_GT(g.scratchBytes, 0u);
  EXPECT_EQ(kernelsNamed(g, "kiln_norm_param_grad"), g.kernels.size() - 1);
}

TEST_F(ReductionEmitterTest, LayerNormBackwardLargeIsTwoPass) {
  GeneratedFusion g =
      emit("kiln.layer_norm_backward %arg0, %arg1, %arg2 : "
           "tensor<8192x1024xbf16>, tensor<1024xbf16>",
           "tensor<8192x1024xbf16>, tensor<8192x1024xbf16>, tensor<1024xbf16>",
           "tensor<8192x1024xbf16>, tensor<1024xbf16>, tensor<1024xbf16>");
  ASSERT_EQ(g.launches.size(), 3u);
  EXPECT_GT(g.launches[1].grid[1], 1u);
  emit("kiln.layer_norm_backward %arg0, %arg1 dims = 2 eps = 1.0e-06 : "
       "tensor<2x7x4x6xf16>",
       "tensor<2x7x4x6xf16>, tensor<2x7x4x6xf16>",
       "tensor<2x7x4x6xf16>, tensor<4x6xf16>, tensor<4x6xf16>");
}

TEST_F(ReductionEmitterTest, NormBackwardWithOnlyInputGradYielded) {
  FusionOp fusion = parseFusion(R"mlir(
    func.func @f(%g: tensor<6x40xf32>, %x: tensor<6x40xf32>, %w: tensor<40xf32>) {
      %dx = kiln.fusion "reduction" (%g, %x, %w)
          : (tensor<6x40xf32>, tensor<6x40xf32>, tensor<40xf32>) -> tensor<6x40xf32> {
      ^bb0(%a: tensor<6x40xf32>, %b: tensor<6x40xf32>, %c: tensor<40xf32>):
        %r:3 = kiln.layer_norm_backward %a, %b, %c : tensor<6x40xf32>, tensor<40xf32>
        kiln.yield %r#0 : tensor<6x40xf32>
      }
      return
    })mlir");
  GeneratedFusion g = emitAndCompile(*emitter, fusion);
  EXPECT_EQ(g.launches.size(), 1u);
  EXPECT_EQ(g.scratchBytes, 0u);
}

TEST_F(ReductionEmitterTest, MseLossOfSineBlockAndRankZero) {
  GeneratedFusion g =
      emit("kiln.mse_loss %arg0, %arg1 reduction = mean : tensor<4x32x1xf32>",
           "tensor<4x32x1xf32>, tensor<4x32x1xf32>", "tensor<f32>");
  ASSERT_EQ(g.launches.size(), 1u);
  EXPECT_NE(g.kernels[0].source.find("acc / 128.0f"), std::string::npos);
  emit("kiln.mse_loss %arg0, %arg1 : tensor<f32>", "tensor<f32>, tensor<f32>",
       "tensor<f32>");
  GeneratedFusion big = emit(
      "kiln.mse_loss %arg0, %arg1 reduction = sum : tensor<4096x4097xbf16>",
      "tensor<4096x4097xbf16>, tensor<4096x4097xbf16>", "tensor<bf16>");
  EXPECT_EQ(big.launches.size(), 2u);
}

TEST_F(ReductionEmitterTest, CrossEntropy) {
  GeneratedFusion g =
      emit("kiln.cross_entropy %arg0, %arg1 label_smoothing = 1.000000e-01 : "
           "tensor<32x10xf32>, tensor<32xi32>",
           "tensor<32x10xf32>, tensor<32xi32>", "tensor<f32>");
  ASSERT_EQ(g.launches.size(), 2u);
  // Label smoothing adds the sum of the row's log-softmax.
  EXPECT_NE(g.kernels[0].source.find("smoothing = true"), std::string::npos);
  EXPECT_NE(g.kernels[0].source.find("static constexpr float smooth = "),
            std::string::npos);
  GeneratedFusion sum =
      emit("kiln.cross_entropy %arg0, %arg1 reduction = sum : "
           "tensor<64x50257xbf16>, tensor<64xi32>",
           "tensor<64x50257xbf16>, tensor<64xi32>", "tensor<bf16>");
  EXPECT_NE(sum.kernels[0].source.find("smoothing = false"), std::string::npos);
  emit("kiln.cross_entropy %arg0, %arg1 : tensor<3x3xf16>, tensor<3xi32>",
       "tensor<3x3xf16>, tensor<3xi32>", "tensor<f16>");
}

TEST_F(ReductionEmitterTest, CrossEntropyBackward) {
  emit("kiln.cross_entropy_backward %arg0, %arg1, %arg2 label_smoothing = "
       "1.000000e-01 : "
       "tensor<32x10xf32>, tensor<32xi32>",
       "tensor<f32>, tensor<32x10xf32>, tensor<32xi32>", "tensor<32x10xf32>");
  emit("kiln.cross_entropy_backward %arg0, %arg1, %arg2 reduction = sum : "
       "tensor<16x32001xbf16>, tensor<16xi32>",
       "tensor<bf16>, tensor<16x32001xbf16>, tensor<16xi32>",
       "tensor<16x32001xbf16>");
}

TEST_F(ReductionEmitterTest, CrossEntropyIgnoreIndex) {
  // The mean counts the rows not ignored first (one block), and the total
  // divides by that count.
  GeneratedFusion mean =
      emit("kiln.cross_entropy %arg0, %arg1 ignore_index = -100 : "
           "tensor<32x10xf32>, tensor<32xi32>",
           "tensor<32x10xf32>, tensor<32xi32>", "tensor<f32>");
  ASSERT_EQ(mean.launches.size(), 3u);
  EXPECT_NE(mean.kernels[0].source.find("ignore_index = -100;"),
            std::string::npos);
  EXPECT_NE(mean.kernels[1].source.find("label_count_config<idx_t, 32, -100>"),
            std::string::npos);
  EXPECT_NE(mean.kernels[2].source.find(
                "loss_total_config<idx_t, 32, true, true, true>"),
            std::string::npos);
  EXPECT_NE(mean.kernels[2].source.find("(ctx, row_loss, out, count)"),
            std::string::npos);
  // The sum leaves ignored rows out without a count.
  GeneratedFusion sum =
      emit("kiln.cross_entropy %arg0, %arg1 reduction = sum ignore_index = 3 "
           ": tensor<32x10xf32>, tensor<32xi32>",
           "tensor<32x10xf32>, tensor<32xi32>", "tensor<f32>");
  ASSERT_EQ(sum.launches.size(), 2u);
  EXPECT_NE(sum.kernels[0].source.find("ignores = true"), std::string::npos);
  EXPECT_NE(sum.kernels[0].source.find("counted = false"), std::string::npos);
  GeneratedFusion backward = emit(
      "kiln.cross_entropy_backward %arg0, %arg1, %arg2 ignore_index = "
      "-1 : tensor<16x7xbf16>, tensor<16xi32>",
      "tensor<bf16>, tensor<16x7xbf16>, tensor<16xi32>", "tensor<16x7xbf16>");
  ASSERT_EQ(backward.launches.size(), 2u);
  EXPECT_NE(backward.kernels[1].source.find("counted = true"),
            std::string::npos);
  EXPECT_NE(backward.kernels[1].source.find("scale = 1.0"), std::string::npos)
      << backward.kernels[1].source;
  EXPECT_NE(backward.kernels[1].source.find(", out, count)"),
            std::string::npos);
}

TEST_F(ReductionEmitterTest, BinaryCrossEntropy) {
  emit("kiln.binary_cross_entropy %arg0, %arg1 : tensor<32x1xf32>",
       "tensor<32x1xf32>, tensor<32x1xf32>", "tensor<f32>");
  emit("kiln.binary_cross_entropy %arg0, %arg1 reduction = sum : tensor<f16>",
       "tensor<f16>, tensor<f16>", "tensor<f16>");
  emit("kiln.binary_cross_entropy_backward %arg0, %arg1, %arg2 : "
       "tensor<32x1xbf16>",
       "tensor<bf16>, tensor<32x1xbf16>, tensor<32x1xbf16>",
       "tensor<32x1xbf16>");
  emit("kiln.binary_cross_entropy_backward %arg0, %arg1, %arg2 reduction = sum "
       ": tensor<3000000xf32>",
       "tensor<f32>, tensor<3000000xf32>, tensor<3000000xf32>",
       "tensor<3000000xf32>");
}

TEST_F(ReductionEmitterTest, SameOperandTwice) {
  FusionOp fusion = parseFusion(R"mlir(
    func.func @f(%p: tensor<5x3xf32>) {
      %l = kiln.fusion "reduction" (%p) : (tensor<5x3xf32>) -> tensor<f32> {
      ^bb0(%a: tensor<5x3xf32>):
        %r = kiln.mse_loss %a, %a : tensor<5x3xf32>
        kiln.yield %r : tensor<f32>
      }
      return
    })mlir");
  GeneratedFusion g = emitAndCompile(*emitter, fusion);
  ASSERT_EQ(g.launches.size(), 1u);
  EXPECT_EQ(g.launches[0].args[0].index, 0);
  EXPECT_EQ(g.launches[0].args[1].index, 0);
}

TEST_F(ReductionEmitterTest, IdenticalFusionsGiveIdenticalKernels) {
  GeneratedFusion a = emit("kiln.softmax %arg0 dim = 1 : tensor<6x70xf32>",
                           "tensor<6x70xf32>", "tensor<6x70xf32>");
  GeneratedFusion b = emit("kiln.softmax %arg0 dim = 1 : tensor<6x70xf32>",
                           "tensor<6x70xf32>", "tensor<6x70xf32>");
  GeneratedFusion c = emit("kiln.softmax %arg0 dim = 1 : tensor<6x71xf32>",
                           "tensor<6x71xf32>", "tensor<6x71xf32>");
  ASSERT_EQ(a.kernels.size(), 1u);
  EXPECT_EQ(a.kernels[0].source, b.kernels[0].source);
  EXPECT_NE(a.kernels[0].name, c.kernels[0].name);
}

TEST_F(ReductionEmitterTest, RejectsWhatItDoesNotSupport) {
  // Wrong kind.
  EXPECT_FALSE(emitter->matches(
      fusionOf("pointwise", "kiln.reduce_sum %arg0 dims = [0] : tensor<4xf32>",
               "tensor<4xf32>", "tensor<f32>")));
  // Not a reduction op.
  EXPECT_FALSE(
      emitter->matches(fusionOf("reduction", "kiln.exp %arg0 : tensor<4xf32>",
                                "tensor<4xf32>", "tensor<4xf32>")));
  // A prologue (ComposedReduction_test.cc covers composed fusions).
  FusionOp twoOps = parseFusion(R"mlir(
    func.func @f(%x: tensor<4x8xf32>) {
      %r = kiln.fusion "reduction" (%x) : (tensor<4x8xf32>) -> tensor<4xf32> {
      ^bb0(%a: tensor<4x8xf32>):
        %e = kiln.exp %a : tensor<4x8xf32>
        %s = kiln.reduce_sum %e dims = [1] : tensor<4x8xf32>
        kiln.yield %s : tensor<4xf32>
      }
      return
    })mlir");
  ASSERT_TRUE(twoOps);
  EXPECT_TRUE(emitter->matches(twoOps));
  // Yielding a block argument.
  FusionOp passThrough = parseFusion(R"mlir(
    func.func @f(%x: tensor<4x8xf32>) {
      %r:2 = kiln.fusion "reduction" (%x) : (tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4x8xf32>) {
      ^bb0(%a: tensor<4x8xf32>):
        %s = kiln.reduce_sum %a dims = [1] : tensor<4x8xf32>
        kiln.yield %s, %a : tensor<4xf32>, tensor<4x8xf32>
      }
      return
    })mlir");
  ASSERT_TRUE(passThrough);
  EXPECT_FALSE(emitter->matches(passThrough));
  // Batch norm belongs to another kernel family.
  EXPECT_FALSE(emitter->matches(
      fusionOf("reduction",
               "kiln.batch_norm %arg0, %arg1, %arg2 : tensor<4x3xf32>, "
               "tensor<3xf32>, tensor<3xf32>",
               "tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>",
               "tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>")));
}

TEST_F(ReductionEmitterTest, RegistryDispatchesReductions) {
  FusionOp fusion = fusionOf(
      "reduction", "kiln.reduce_sum %arg0 dims = [1] : tensor<4x8xf32>",
      "tensor<4x8xf32>", "tensor<4xf32>");
  ASSERT_TRUE(fusion);
  FailureOr<GeneratedFusion> g = emitFusion(fusion, CodegenOptions());
  ASSERT_TRUE(succeeded(g)) << diagnostics;
  EXPECT_EQ(g->kernels.size(), 1u);
}

} // namespace
} // namespace mlir::kiln::codegen
