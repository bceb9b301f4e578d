//===- BatchNormEmitter_test.cc - kernels of "batch_norm" fusions ---------===//
//
// kiln.batch_norm (batch statistics, running statistics, eval form) and
// kiln.batch_norm_backward for NCHW, NHWC, [N, C] and other channel dims, in
// f32, bf16 and f16 (with f32 running statistics): each kernel is compiled
// to PTX and an sm_90 cubin, launches are checked against the kernels'
// parameters, emission is deterministic, and the layout (column or segment
// mode, splits) is the one batch_norm_layout.cuh gives.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/EmitterTestUtils.h"
#include "codegen/cuda/EmitterUtils.h"

#include "kiln/batch_norm_layout.cuh"

namespace mlir::kiln::codegen {
namespace {

namespace layout = ::kiln::bn;

class BatchNormEmitterTest : public EmitterTest {
protected:
  std::unique_ptr<KernelEmitter> emitter = createBatchNormEmitter();

  GeneratedFusion emit(llvm::StringRef op, llvm::StringRef operands,
                       llvm::StringRef results) {
    FusionOp fusion = fusionOf("batch_norm", op, operands, results);
    GeneratedFusion g = emitAndCompile(*emitter, fusion);
    if (fusion)
      expectWritesEveryResult(fusion, g);
    for (const GeneratedKernel &k : g.kernels)
      EXPECT_EQ(k.source.find("atomic"), std::string::npos) << k.source;
    return g;
  }

  /// A fusion of `op` (written with %arg0.. operands, `results` results)
  /// that yields only the results `yields`, of types `yieldTypes`.
  GeneratedFusion emitYielding(llvm::StringRef op, llvm::StringRef operands,
                               unsigned results,
                               llvm::ArrayRef<unsigned> yields,
                               llvm::StringRef yieldTypes) {
    llvm::SmallVector<llvm::StringRef> types;
    splitTypes(operands, types);
    std::string args, names, block, values;
    for (size_t i = 0; i < types.size(); ++i) {
      std::string n = std::to_string(i);
      args += (i ? ", %a" : "%a") + n + ": " + types[i].str();
      names += (i ? ", %a" : "%a") + n;
      block += (i ? ", %arg" : "%arg") + n + ": " + types[i].str();
    }
    for (auto [k, r] : llvm::enumerate(yields))
      values += (k ? ", %r#" : "%r#") + std::to_string(r);
    lastSource = "func.func @f(" + args +
                 ") {\n  %f:" + std::to_string(yields.size()) +
                 " = kiln.fusion \"batch_norm\" (" + names + ") : (" +
                 operands.str() + ") -> (" + yieldTypes.str() + ") {\n  ^bb0(" +
                 block + "):\n    %r:" + std::to_string(results) + " = " +
                 op.str() + "\n    kiln.yield " + values + " : " +
                 yieldTypes.str() + "\n  }\n  return\n}\n";
    FusionOp fusion = parseFusion(lastSource);
    GeneratedFusion g = emitAndCompile(*emitter, fusion);
    if (fusion)
      expectWritesEveryResult(fusion, g);
    return g;
  }

  /// The templates the launches instantiate, in launch order.
  static std::vector<std::string> templates(const GeneratedFusion &g) {
    std::vector<std::string> names;
    for (const GeneratedLaunch &launch : g.launches)
      names.push_back(g.kernels[launch.kernel].templateName);
    return names;
  }

  /// "kiln.batch_norm %arg0, %arg1, %arg2 <extra> : <x>, <c>, <c>[, ...]"
  static std::string forward(llvm::StringRef x, llvm::StringRef c,
                             llvm::StringRef extra = "",
                             llvm::StringRef running = "") {
    std::string op = "kiln.batch_norm %arg0, %arg1, %arg2";
    if (!running.empty())
      op += " running %arg3, %arg4";
    op += " " + extra.str() + " : " + x.str() + ", " + c.str() + ", " + c.str();
    if (!running.empty())
      op += ", " + running.str() + ", " + running.str();
    return op;
  }
};

TEST_F(BatchNormEmitterTest, NchwIsSegmentMode) {
  GeneratedFusion g =
      emit(forward("tensor<4x6x5x7xf32>", "tensor<6xf32>", "dim = 1"),
           "tensor<4x6x5x7xf32>, tensor<6xf32>, tensor<6xf32>",
           "tensor<4x6x5x7xf32>, tensor<6xf32>, tensor<6xf32>");
  EXPECT_EQ(templates(g),
            (std::vector<std::string>{"bn_stats_partial", "bn_stats_final",
                                      "bn_normalize"}));
  // 35 contiguous elements per segment: one block per channel, 256 threads.
  ASSERT_EQ(g.launches.size(), 3u);
  EXPECT_EQ(g.launches[0].grid[0], 6u);
  EXPECT_EQ(g.launches[0].block[0], 256u);
  EXPECT_NE(g.kernels[0].configuration.find("segments"), std::string::npos);
  EXPECT_GT(g.scratchBytes, 0u);
}

TEST_F(BatchNormEmitterTest, NhwcIsColumnMode) {
  GeneratedFusion g =
      emit(forward("tensor<4x5x7x6xf32>", "tensor<6xf32>", "dim = 3"),
           "tensor<4x5x7x6xf32>, tensor<6xf32>, tensor<6xf32>",
           "tensor<4x5x7x6xf32>, tensor<6xf32>, tensor<6xf32>");
  ASSERT_EQ(g.launches.size(), 3u);
  // Six contiguous channels: a block of 8 columns by 32 row lanes.
  EXPECT_EQ(layout::column_tile(6), 8);
  EXPECT_EQ(g.launches[0].grid[0], 1u);
  EXPECT_NE(g.kernels[0].configuration.find("columns=8"), std::string::npos);
}

TEST_F(BatchNormEmitterTest, OnlyTheYieldedResultsAreWritten) {
  // Only y: no mean or variance stores.
  GeneratedFusion g =
      emitYielding(forward("tensor<8x3x11xbf16>", "tensor<3xbf16>"),
                   "tensor<8x3x11xbf16>, tensor<3xbf16>, tensor<3xbf16>", 3,
                   {0}, "tensor<8x3x11xbf16>");
  ASSERT_EQ(g.launches.size(), 3u);
  EXPECT_NE(
      g.kernels[g.launches[1].kernel].source.find("(__nv_bfloat16 *)nullptr"),
      std::string::npos);
  // Only the statistics: no normalisation kernel.
  GeneratedFusion stats =
      emitYielding(forward("tensor<16x5xf16>", "tensor<5xf16>"),
                   "tensor<16x5xf16>, tensor<5xf16>, tensor<5xf16>", 3, {1, 2},
                   "tensor<5xf16>, tensor<5xf16>");
  EXPECT_EQ(templates(stats),
            (std::vector<std::string>{"bn_stats_partial", "bn_stats_final"}));
}

TEST_F(BatchNormEmitterTest, RunningStatisticsInF32BesideBf16) {
  GeneratedFusion g =
      emit(forward("tensor<8x16x5x5xbf16>", "tensor<16xbf16>",
                   "momentum = 0.25", "tensor<16xf32>"),
           "tensor<8x16x5x5xbf16>, tensor<16xbf16>, tensor<16xbf16>, "
           "tensor<16xf32>, tensor<16xf32>",
           "tensor<8x16x5x5xbf16>, tensor<16xbf16>, tensor<16xbf16>, "
           "tensor<16xf32>, tensor<16xf32>");
  ASSERT_EQ(g.launches.size(), 3u);
  const std::string &final = g.kernels[g.launches[1].kernel].source;
  EXPECT_NE(final.find("momentum = 0.25f"), std::string::npos);
  // n / (n - 1) with n = 8 * 25.
  EXPECT_NE(final.find("unbias = " + floatLiteral(200.0 / 199.0)),
            std::string::npos);
  // The running statistics may be updated in place: not restrict.
  EXPECT_NE(final.find("const float * running_mean"), std::string::npos);
  EXPECT_NE(final.find("float * new_var"), std::string::npos);
}

TEST_F(BatchNormEmitterTest, EvalFormNeedsNoReduction) {
  GeneratedFusion g = emitYielding(
      forward("tensor<2x7x7x32xf16>", "tensor<32xf16>", "eval dim = 3",
              "tensor<32xf32>"),
      "tensor<2x7x7x32xf16>, tensor<32xf16>, tensor<32xf16>, tensor<32xf32>, "
      "tensor<32xf32>",
      5, {0}, "tensor<2x7x7x32xf16>");
  EXPECT_EQ(templates(g),
            (std::vector<std::string>{"bn_eval_final", "bn_normalize"}));
}

TEST_F(BatchNormEmitterTest, FewChannelsSplitTheReduction) {
  // Three channels of 8 * 64 * 64 elements: the channels alone leave the
  // GPU idle, so each is split over blocks and combined in order.
  GeneratedFusion g =
      emit(forward("tensor<8x3x64x64xf32>", "tensor<3xf32>"),
           "tensor<8x3x64x64xf32>, tensor<3xf32>, tensor<3xf32>",
           "tensor<8x3x64x64xf32>, tensor<3xf32>, tensor<3xf32>");
  ASSERT_EQ(g.launches.size(), 3u);
  EXPECT_EQ(g.launches[0].grid[0], 3u);
  EXPECT_GT(g.launches[0].grid[1], 1u);
  // [N, C] with many rows: column splits, eight bf16 channels per access
  // (one tile of eight vector columns).
  GeneratedFusion rows =
      emit(forward("tensor<20000x64xbf16>", "tensor<64xbf16>"),
           "tensor<20000x64xbf16>, tensor<64xbf16>, tensor<64xbf16>",
           "tensor<20000x64xbf16>, tensor<64xbf16>, tensor<64xbf16>");
  EXPECT_EQ(rows.launches[0].grid[0], 1u);
  EXPECT_GT(rows.launches[0].grid[1], 1u);
  EXPECT_NE(rows.kernels[0].configuration.find("columns=8x8"),
            std::string::npos)
      << rows.kernels[0].configuration;
  EXPECT_NE(rows.kernels[0].configuration.find("vector=8"), std::string::npos);
}

TEST_F(BatchNormEmitterTest, ShortSegmentsAreColumns) {
  // [N, C, L] with L = 3 < 32: the [N, C * L] columns are reduced and each
  // channel combines its three.
  GeneratedFusion g =
      emit(forward("tensor<64x10x3xf32>", "tensor<10xf32>"),
           "tensor<64x10x3xf32>, tensor<10xf32>, tensor<10xf32>",
           "tensor<64x10x3xf32>, tensor<10xf32>, tensor<10xf32>");
  EXPECT_NE(g.kernels[0].configuration.find("columns=32"), std::string::npos);
  EXPECT_TRUE(layout::column_mode(3));
  EXPECT_FALSE(layout::column_mode(32));
}

TEST_F(BatchNormEmitterTest, BackwardAllGradients) {
  for (auto [x, c, dim] :
       {std::tuple{"tensor<4x6x5x7xf32>", "tensor<6xf32>", "1"},
        std::tuple{"tensor<4x5x7x6xbf16>", "tensor<6xbf16>", "3"},
        std::tuple{"tensor<4096x32xf16>", "tensor<32xf16>", "1"}}) {
    std::string types = std::string(x) + ", " + x + ", " + c;
    GeneratedFusion g = emit(
        std::string("kiln.batch_norm_backward %arg0, %arg1, %arg2 dim = ") +
            dim + " : " + x + ", " + c,
        types, std::string(x) + ", " + c + ", " + c);
    // The statistics come with the gradient sums, in one pass.
    EXPECT_EQ(templates(g),
              (std::vector<std::string>{"bn_grad_partial", "bn_grad_final",
                                        "bn_input_grad"}));
  }
}

TEST_F(BatchNormEmitterTest, BackwardWithoutInputGradient) {
  // Only gamma's and beta's gradients (the input is no parameter).
  GeneratedFusion g = emitYielding(
      "kiln.batch_norm_backward %arg0, %arg1, %arg2 : tensor<4x6x5x7xf32>, "
      "tensor<6xf32>",
      "tensor<4x6x5x7xf32>, tensor<4x6x5x7xf32>, tensor<6xf32>", 3, {1, 2},
      "tensor<6xf32>, tensor<6xf32>");
  EXPECT_EQ(templates(g),
            (std::vector<std::string>{"bn_grad_partial", "bn_grad_final"}));
}

TEST_F(BatchNormEmitterTest, LayoutHelpers) {
  // One split when the blocks fill the GPU or the range is short.
  EXPECT_EQ(layout::chunk_of(4, 512, 49, 264), 4 * 49);
  EXPECT_EQ(layout::splits_of(4, 512, 49, 4 * 49), 1);
  // Long channels split into chunks of about kSegmentMinChunk or more (the
  // splits share the range evenly).
  long long chunk = layout::chunk_of(32, 4, 56 * 56, 264);
  EXPECT_GE(chunk, layout::kSegmentMinChunk / 2);
  EXPECT_GT(layout::splits_of(32, 4, 56 * 56, chunk), 1);
  EXPECT_EQ(layout::splits_of(32, 4, 56 * 56, chunk),
            ::kiln::reduce::ceil_div(32 * 56 * 56, chunk));
  // Columns: 64 channels -> 2 tiles of 32, 8 row lanes each.
  EXPECT_EQ(layout::tiles_of(64, 1), 2);
  EXPECT_EQ(layout::lanes_of(64, 1), 8);
  EXPECT_EQ(layout::partials_per_split(64, 1), 64);
  // No elements per channel: nothing to split.
  EXPECT_EQ(layout::splits_of(0, 8, 1, 1), 0);
}

TEST_F(BatchNormEmitterTest, OtherKindsAreNotMatched) {
  EXPECT_FALSE(emitter->matches(fusionOf(
      "reduction", "kiln.reduce_sum %arg0 dims = [1] : tensor<4x8xf32>",
      "tensor<4x8xf32>", "tensor<4xf32>")));
}

TEST_F(BatchNormEmitterTest, RegistryDispatchesBatchNorm) {
  FusionOp fusion =
      fusionOf("batch_norm", forward("tensor<4x3xf32>", "tensor<3xf32>"),
               "tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>",
               "tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>");
  ASSERT_TRUE(fusion);
  FailureOr<GeneratedFusion> g = emitFusion(fusion, CodegenOptions());
  ASSERT_TRUE(succeeded(g)) << diagnostics;
  EXPECT_EQ(g->launches.size(), 3u);
}

} // namespace
} // namespace mlir::kiln::codegen
