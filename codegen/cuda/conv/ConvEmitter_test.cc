//===- ConvEmitter_test.cc - kernels of "conv" fusions --------------------===//
//
// The planner's choices for each pass and layout (16-byte copies or element
// gathers, wgmma on sm_90, channels-first passes run as channels last,
// depthwise kernels, split reductions) and the kernels themselves: each is
// compiled to PTX and an sm_90 cubin, its launches checked against its
// parameters, and its emission deterministic.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/EmitterTestUtils.h"
#include "codegen/cuda/conv/ConvEmitter.h"
#include "codegen/cuda/conv/ConvPlan.h"

#include "kiln/batch_norm_layout.cuh"

namespace mlir::kiln::codegen {
namespace {

class ConvEmitterTest : public EmitterTest {
protected:
  std::unique_ptr<KernelEmitter> emitter = createConvEmitter();

  GeneratedFusion emit(llvm::StringRef op, llvm::StringRef operands,
                       llvm::StringRef result) {
    FusionOp fusion = fusionOf("conv", op, operands, result);
    GeneratedFusion g = emitAndCompile(*emitter, fusion);
    if (fusion)
      expectWritesEveryResult(fusion, g);
    return g;
  }

  /// The plan of the conv fusion of `op`, configured for sm_90.
  ConvPlan plan(llvm::StringRef op, llvm::StringRef operands,
                llvm::StringRef result, bool tf32 = false) {
    FusionOp fusion = fusionOf("conv", op, operands, result);
    std::string why;
    FailureOr<ConvPlan> p = analyzeConv(fusion, why);
    EXPECT_TRUE(succeeded(p)) << why;
    if (failed(p))
      return {};
    EXPECT_TRUE(succeeded(configureConv(*p, CodegenOptions().target(), tf32,
                                        /*allowWgmma=*/true, why)))
        << why;
    return *p;
  }

  static std::string templates(const GeneratedFusion &g) {
    std::string names;
    for (const GeneratedKernel &k : g.kernels)
      names += k.templateName + " ";
    return names;
  }
};

TEST_F(ConvEmitterTest, ChannelsLastPassesCopySixteenByteRuns) {
  std::string x = "tensor<2x14x14x64xbf16>", w = "tensor<32x3x3x64xbf16>",
              y = "tensor<2x14x14x32xbf16>";
  const char *attrs = " layout = nhwc padding = [1, 1, 1, 1]";
  ConvPlan forward = plan(std::string("kiln.conv2d %arg0, %arg1") + attrs +
                              " : " + x + ", " + w,
                          x + ", " + w, y);
  EXPECT_EQ(forward.rows, 2 * 14 * 14);
  EXPECT_EQ(forward.cols, 32);
  EXPECT_EQ(forward.k, 9 * 64);
  EXPECT_TRUE(forward.aVec && forward.bVec && forward.aKMajor &&
              forward.bKMajor);
  EXPECT_EQ(forward.kind, ConvKind::Bf16);

  ConvPlan input = plan(std::string("kiln.conv2d_backward_input %arg0, %arg1") +
                            attrs + " : " + y + ", " + w + " -> " + x,
                        y + ", " + w, x);
  EXPECT_TRUE(input.aVec && input.bVec && input.aKMajor && !input.bKMajor);

  // The filter gradient sums over every pixel: its reduction is split
  // (tests/lit/select_kernels/conv.mlir).
  std::string bx = "tensor<32x56x56x64xbf16>", bw = "tensor<64x3x3x64xbf16>";
  ConvPlan filter =
      plan(std::string("kiln.conv2d_backward_filter %arg0, %arg1") + attrs +
               " : " + bx + ", " + bx + " -> " + bw,
           bx + ", " + bx, bw);
  EXPECT_EQ(filter.k, 32 * 56 * 56);

  GeneratedFusion g = emit(std::string("kiln.conv2d_backward_filter %arg0, "
                                       "%arg1") +
                               attrs + " : " + bx + ", " + bx + " -> " + bw,
                           bx + ", " + bx, bw);
  // The split partials and their ordered sum.
  ASSERT_EQ(g.launches.size(), 2u);
  EXPECT_GE(g.scratchBytes, 4ull * filter.choice.split * 64 * 9 * 64);
}

TEST_F(ConvEmitterTest, SixteenByteHalfPassesRunOnWgmmaOnSm90) {
  std::string x = "tensor<8x28x28x64xbf16>", w = "tensor<128x3x3x64xbf16>",
              y = "tensor<8x28x28x128xbf16>";
  const char *attrs = " layout = nhwc padding = [1, 1, 1, 1]";
  std::string forward =
      std::string("kiln.conv2d %arg0, %arg1") + attrs + " : " + x + ", " + w;
  ConvPlan p = plan(forward, x + ", " + w, y);
  EXPECT_TRUE(p.wgmmaAllowed);
  // The forward pass's operands are copied by the TMA (the next test); the
  // threads gather them where it may not.
  CodegenOptions noTma;
  noTma.allowTma = false;
  FailureOr<GeneratedFusion> gathered =
      emitter->emit(fusionOf("conv", forward, x + ", " + w, y), noTma);
  ASSERT_TRUE(succeeded(gathered));
  GeneratedFusion &g = *gathered;
  ASSERT_EQ(g.kernels.size(), 1u);
  EXPECT_EQ(g.kernels[0].templateName, "conv_wgmma");
  EXPECT_TRUE(g.kernels[0].archSpecific);
  // Persistent: no more blocks than the SMs hold.
  EXPECT_LE(g.launches[0].grid[0], CodegenOptions().target().smCount);

  // Both gradients: dy and the filter's N-major rows (input), dy and x
  // both M/N-major (filter, its reduction split).
  std::string input = std::string("kiln.conv2d_backward_input %arg0, %arg1") +
                      attrs + " : " + y + ", " + w + " -> " + x;
  EXPECT_EQ(templates(emit(input, y + ", " + w, x)), "conv_wgmma ");
  std::string filter = std::string("kiln.conv2d_backward_filter %arg0, %arg1") +
                       attrs + " : " + y + ", " + x + " -> " + w;
  ConvPlan f = plan(filter, y + ", " + x, w);
  EXPECT_FALSE(f.aKMajor || f.bKMajor);

  // f32 and gathered operands stay on mma.sync, as does any other arch.
  std::string fx = "tensor<8x28x28x64xf32>", fw = "tensor<128x3x3x64xf32>",
              fy = "tensor<8x28x28x128xf32>";
  ConvPlan f32 = plan(std::string("kiln.conv2d %arg0, %arg1") + attrs + " : " +
                          fx + ", " + fw,
                      fx + ", " + fw, fy);
  EXPECT_FALSE(f32.wgmmaAllowed);
  std::string sx = "tensor<8x28x28x12xbf16>", sw = "tensor<128x3x3x12xbf16>";
  EXPECT_FALSE(plan(std::string("kiln.conv2d %arg0, %arg1") + attrs + " : " +
                        sx + ", " + sw,
                    sx + ", " + sw, y)
                   .wgmmaAllowed);
  FusionOp fusion = fusionOf("conv", forward, x + ", " + w, y);
  CodegenOptions sm80;
  sm80.arch = "sm_80";
  FailureOr<GeneratedFusion> older = emitter->emit(fusion, sm80);
  ASSERT_TRUE(succeeded(older));
  EXPECT_EQ(templates(*older), "conv_igemm ");
  EXPECT_NE(older->kernels[0].source.find(kWaitForPredecessor.str()),
            std::string::npos);
}

TEST_F(ConvEmitterTest, ForwardChannelsLastCopiesOperandsByTma) {
  std::string x = "tensor<8x28x28x64xbf16>", w = "tensor<128x3x3x64xbf16>",
              y = "tensor<8x28x28x128xbf16>";
  std::string forward = "kiln.conv2d %arg0, %arg1 layout = nhwc padding = "
                        "[1, 1, 1, 1] : " +
                        x + ", " + w;
  GeneratedFusion g = emit(forward, x + ", " + w, y);
  ASSERT_EQ(g.kernels.size(), 1u);
  EXPECT_EQ(g.kernels[0].templateName, "conv_tma");
  EXPECT_NE(g.kernels[0].configuration.find("TMA producer"), std::string::npos)
      << g.kernels[0].configuration;
  EXPECT_NE(g.kernels[0].source.find("const __grid_constant__ "
                                     "kiln::tensor_map a_map"),
            std::string::npos);
  // Persistent blocks of one wave: launched after their predecessor, never
  // beside it.
  EXPECT_EQ(g.kernels[0].source.find(kWaitForPredecessor.str()),
            std::string::npos);
  const ConvPlan p = plan(forward, x + ", " + w, y);
  const GemmTileConfig &tile = p.choice.config;
  // The consumer warpgroups and the producer's.
  EXPECT_EQ(g.launches[0].block[0], uint32_t(tile.bm / 64 * 128 + 128));
  std::vector<const TensorMapLayout *> maps = tensorMapsOf(g.launches[0]);
  ASSERT_EQ(maps.size(), 2u);
  // The input: im2col columns of BM output pixels by 64 channels, the box
  // of window origins that of the output (pad 1 on each side of 3 taps).
  const TensorMapLayout &in = *maps[0];
  EXPECT_TRUE(in.im2col);
  EXPECT_EQ(in.dims, (std::vector<uint64_t>{64, 28, 28, 8}));
  EXPECT_EQ(in.strides, (std::vector<uint64_t>{128, 28 * 128, 28 * 28 * 128}));
  EXPECT_EQ(in.elementStrides, (std::vector<uint32_t>{1, 1, 1, 1}));
  EXPECT_EQ(in.lowerCorner, (std::vector<int32_t>{-1, -1}));
  EXPECT_EQ(in.upperCorner, (std::vector<int32_t>{-1, -1}));
  EXPECT_EQ(in.channelsPerPixel, 64u);
  EXPECT_EQ(in.pixelsPerColumn, uint32_t(tile.bm));
  EXPECT_EQ(in.swizzleBytes, 128u);
  // The filter: boxes of 64 taps by BN output channels.
  const TensorMapLayout &filter = *maps[1];
  EXPECT_FALSE(filter.im2col);
  EXPECT_EQ(filter.dims, (std::vector<uint64_t>{9 * 64, 128}));
  EXPECT_EQ(filter.strides, (std::vector<uint64_t>{9 * 64 * 2}));
  EXPECT_EQ(filter.box, (std::vector<uint32_t>{64, uint32_t(tile.bn)}));

  // Stride [2, 1], padding [0, 1, 1, 2] on 13 x 11: the origins' box is
  // 6 rows from 0 in steps of 2 and 12 columns from -1.
  std::string ax = "tensor<2x13x11x64xbf16>", aw = "tensor<64x3x3x64xbf16>",
              ay = "tensor<2x6x12x64xbf16>";
  GeneratedFusion strided =
      emit("kiln.conv2d %arg0, %arg1 layout = nhwc stride = [2, 1] padding = "
           "[0, 1, 1, 2] : " +
               ax + ", " + aw,
           ax + ", " + aw, ay);
  ASSERT_EQ(templates(strided), "conv_tma ");
  const TensorMapLayout &asym = *tensorMapsOf(strided.launches[0])[0];
  EXPECT_EQ(asym.elementStrides, (std::vector<uint32_t>{1, 1, 2, 1}));
  EXPECT_EQ(asym.lowerCorner, (std::vector<int32_t>{-1, 0}));
  EXPECT_EQ(asym.upperCorner, (std::vector<int32_t>{0, -2}));

  // Few output tiles: the reduction is split, and the kernel that sums the
  // partials takes no maps.
  std::string px = "tensor<1x25x25x64xbf16>", pw = "tensor<64x5x5x64xbf16>";
  GeneratedFusion split = emit(
      "kiln.conv2d %arg0, %arg1 layout = nhwc padding = [2, 2, 2, 2] : " + px +
          ", " + pw,
      px + ", " + pw, px);
  ASSERT_EQ(templates(split), "conv_tma conv_igemm ");
  EXPECT_EQ(tensorMapsOf(split.launches[0]).size(), 2u);
  EXPECT_TRUE(tensorMapsOf(split.launches[1]).empty());

  // Channels that are not whole K steps of 64, the gradients, channels
  // first and any other architecture gather their operands.
  std::string sx = "tensor<8x28x28x32xbf16>", sw = "tensor<128x3x3x32xbf16>";
  EXPECT_EQ(templates(emit("kiln.conv2d %arg0, %arg1 layout = nhwc padding = "
                           "[1, 1, 1, 1] : " +
                               sx + ", " + sw,
                           sx + ", " + sw, y)),
            "conv_wgmma ");
  EXPECT_EQ(templates(emit("kiln.conv2d_backward_input %arg0, %arg1 layout = "
                           "nhwc padding = [1, 1, 1, 1] : " +
                               y + ", " + w + " -> " + x,
                           y + ", " + w, x)),
            "conv_wgmma ");
}

/// A forward convolution of `x` by `w` (16 channels in, 3x3) followed by
/// a training batch norm of its result, which the fusion also yields.
std::string convBatchNorm(const std::string &x, const std::string &w,
                          const std::string &y, const std::string &c,
                          bool nhwc) {
  std::string layout = nhwc ? "nhwc" : "nchw";
  std::string results = y + ", " + y + ", " + c + ", " + c;
  return "func.func @f(%a0: " + x + ", %a1: " + w + ", %a2: " + c +
         ", %a3: " + c +
         ") {\n  %r:4 = kiln.fusion \"conv\" (%a0, %a1, "
         "%a2, %a3) : (" +
         x + ", " + w + ", " + c + ", " + c + ") -> (" + results +
         ") {\n  ^bb0(%x: " + x + ", %w: " + w + ", %g: " + c + ", %b: " + c +
         "):\n    %y = kiln.conv2d %x, %w layout = " + layout +
         " padding = [1, 1, 1, 1] : " + x + ", " + w +
         "\n    %n, %m, %v = kiln.batch_norm %y, %g, %b dim = " +
         (nhwc ? "3" : "1") + " : " + y + ", " + c + ", " + c +
         "\n    kiln.yield %y, %n, %m, %v : " + results +
         "\n  }\n  return\n}\n";
}

TEST_F(ConvEmitterTest, BatchNormStatisticsComeFromTheWgmmaEpilogue) {
  // 4 x 15 x 15 pixels: eight row tiles of 128, the last of 4 rows.
  std::string x = "tensor<4x15x15x16xbf16>", w = "tensor<64x3x3x16xbf16>",
              y = "tensor<4x15x15x64xbf16>", c = "tensor<64xbf16>";
  FusionOp fusion = parseFusion(convBatchNorm(x, w, y, c, /*nhwc=*/true));
  ASSERT_TRUE(fusion);
  GeneratedFusion g = emitAndCompile(*emitter, fusion);
  expectWritesEveryResult(fusion, g);
  // No statistics pass of its own: the conv kernel's epilogue takes the
  // partials of every stored tile, batch norm combines them and normalises.
  EXPECT_EQ(templates(g), "conv_wgmma bn_stats_final bn_normalize ");
  ASSERT_EQ(g.kernels.size(), 3u);
  EXPECT_NE(g.kernels[0].source.find("STATS = true"), std::string::npos);
  EXPECT_NE(g.kernels[1].source.find("shifted = false"), std::string::npos);
  EXPECT_NE(g.kernels[1].source.find("config<idx_t, 900, 64, 1, 128"),
            std::string::npos)
      << "a split per row tile of the conv";
  // The conv writes the partials the final kernel reads: one scratch
  // offset in both launches.
  auto scratchOf = [](const GeneratedLaunch &launch) {
    for (const LaunchArg &arg : launch.args)
      if (arg.kind == LaunchArg::Kind::Scratch)
        return arg.index;
    return int64_t(-1);
  };
  EXPECT_GE(scratchOf(g.launches[0]), 0);
  EXPECT_EQ(scratchOf(g.launches[0]), scratchOf(g.launches[1]));

  // On mma.sync (sm_80) and channels first, batch norm reads the
  // activation for its statistics.
  CodegenOptions sm80;
  sm80.arch = "sm_80";
  FailureOr<GeneratedFusion> older = emitter->emit(fusion, sm80);
  ASSERT_TRUE(succeeded(older));
  EXPECT_EQ(templates(*older),
            "conv_igemm bn_stats_partial bn_stats_final bn_normalize ");
  std::string cx = "tensor<4x16x15x15xbf16>", cw = "tensor<64x16x3x3xbf16>",
              cy = "tensor<4x64x15x15xbf16>";
  FusionOp first = parseFusion(convBatchNorm(cx, cw, cy, c, /*nhwc=*/false));
  ASSERT_TRUE(first);
  GeneratedFusion nchw = emitAndCompile(*emitter, first);
  expectWritesEveryResult(first, nchw);
  EXPECT_NE(templates(nchw).find("bn_stats_partial"), std::string::npos);
}

TEST_F(ConvEmitterTest, TmaStagesLeaveRoomForTheStatisticsEpilogue) {
  // 64 channels in: the TMA kernel, on the largest tile, whose stages fill
  // the shared memory but for the epilogue's static statistics.
  std::string x = "tensor<8x28x28x64xbf16>", w = "tensor<128x3x3x64xbf16>",
              y = "tensor<8x28x28x128xbf16>", c = "tensor<128xbf16>";
  FusionOp fusion = parseFusion(convBatchNorm(x, w, y, c, /*nhwc=*/true));
  ASSERT_TRUE(fusion);
  const GemmTileConfig &large = convWgmmaConfigs().front();
  ASSERT_EQ(large.bm, 128);
  FailureOr<std::optional<ConvKernelChoice>> kernel =
      forceConvTile(fusion, CodegenOptions(), large, 1);
  ASSERT_TRUE(succeeded(kernel));
  FailureOr<GeneratedFusion> g = emitConv(fusion, CodegenOptions(), *kernel);
  ASSERT_TRUE(succeeded(g));
  EXPECT_EQ(templates(*g), "conv_tma bn_stats_final bn_normalize ");
  const GpuTarget &target = CodegenOptions().target();
  uint32_t statics = ::kiln::bn::tile_stats_shared_bytes(256);
  EXPECT_LE(g->launches[0].dynamicSharedBytes + statics,
            target.sharedBytesPerBlock);
  EXPECT_GT(g->launches[0].dynamicSharedBytes + statics + 32768,
            target.sharedBytesPerBlock)
      << "as many stages as fit";
}

TEST_F(ConvEmitterTest, ThreeChannelsAreGathered) {
  std::string x = "tensor<2x32x32x3xbf16>", w = "tensor<64x7x7x3xbf16>",
              y = "tensor<2x16x16x64xbf16>";
  std::string op = "kiln.conv2d %arg0, %arg1 layout = nhwc stride = [2, 2] "
                   "padding = [3, 3, 3, 3] : " +
                   x + ", " + w;
  ConvPlan p = plan(op, x + ", " + w, y);
  EXPECT_FALSE(p.aVec);
  EXPECT_FALSE(p.bVec);
  EXPECT_FALSE(p.viaChannelsLast);
  GeneratedFusion g = emit(op, x + ", " + w, y);
  EXPECT_EQ(templates(g), "conv_igemm ");
}

TEST_F(ConvEmitterTest, ChannelsFirstRunsAsChannelsLastWhereThatCopiesRuns) {
  std::string x = "tensor<2x64x14x14xf32>", w = "tensor<32x64x3x3xf32>",
              y = "tensor<2x32x14x14xf32>";
  std::string op = "kiln.conv2d %arg0, %arg1 layout = nchw padding = [1, 1, "
                   "1, 1] : " +
                   x + ", " + w;
  ConvPlan p = plan(op, x + ", " + w, y);
  EXPECT_TRUE(p.viaChannelsLast);
  EXPECT_TRUE(p.geometry.NHWC);
  EXPECT_EQ(p.kind, ConvKind::Tf32x3);
  EXPECT_EQ(p.aCopy.batch, 2);
  EXPECT_EQ(p.aCopy.rows, 64);
  EXPECT_EQ(p.aCopy.cols, 14 * 14);
  EXPECT_EQ(p.bCopy.batch, 32);
  EXPECT_EQ(p.bCopy.cols, 9);
  GeneratedFusion g = emit(op, x + ", " + w, y);
  // The copies of x and w, then the GEMM (and the sum of its split).
  EXPECT_EQ(templates(g).rfind("conv_layout_change conv_layout_change "
                               "conv_igemm ",
                               0),
            0u)
      << templates(g);
  EXPECT_EQ(plan(op, x + ", " + w, y, /*tf32=*/true).kind, ConvKind::Tf32);

  // Both gradients too: dy and w (input), dy and x (filter; the filter
  // gradient stored channels first).
  std::string attrs = " layout = nchw padding = [1, 1, 1, 1]";
  std::string input = "kiln.conv2d_backward_input %arg0, %arg1" + attrs +
                      " : " + y + ", " + w + " -> " + x;
  ConvPlan i = plan(input, y + ", " + w, x);
  EXPECT_TRUE(i.viaChannelsLast);
  EXPECT_EQ(i.aCopy.rows, 32);  // dy's channels
  EXPECT_EQ(i.bCopy.batch, 32); // the filter's output channels
  emit(input, y + ", " + w, x);
  std::string filter = "kiln.conv2d_backward_filter %arg0, %arg1" + attrs +
                       " : " + y + ", " + x + " -> " + w;
  ConvPlan f = plan(filter, y + ", " + x, w);
  EXPECT_TRUE(f.viaChannelsLast);
  EXPECT_EQ(f.aCopy.rows, 32);
  EXPECT_EQ(f.bCopy.rows, 64); // x's channels
  emit(filter, y + ", " + x, w);

  // Channels that no copy makes 16-byte runs stay channels first.
  std::string sx = "tensor<2x5x9x9xf32>", sw = "tensor<7x5x3x3xf32>",
              sy = "tensor<2x7x7x7xf32>";
  std::string small =
      "kiln.conv2d %arg0, %arg1 layout = nchw : " + sx + ", " + sw;
  ConvPlan s = plan(small, sx + ", " + sw, sy);
  EXPECT_FALSE(s.viaChannelsLast);
  EXPECT_FALSE(s.geometry.NHWC);
  emit(small, sx + ", " + sw, sy);
}

TEST_F(ConvEmitterTest, DepthwiseRunsDirectKernels) {
  std::string x = "tensor<2x9x9x16xf16>", w = "tensor<16x3x3x1xf16>",
              y = "tensor<2x5x5x16xf16>";
  const char *attrs =
      " layout = nhwc stride = [2, 2] padding = [1, 1, 1, 1] groups = 16";
  GeneratedFusion f = emit(std::string("kiln.conv2d %arg0, %arg1") + attrs +
                               " : " + x + ", " + w,
                           x + ", " + w, y);
  EXPECT_EQ(templates(f), "conv_depthwise ");
  GeneratedFusion i =
      emit(std::string("kiln.conv2d_backward_input %arg0, %arg1") + attrs +
               " : " + y + ", " + w + " -> " + x,
           y + ", " + w, x);
  EXPECT_EQ(templates(i), "conv_depthwise ");
  GeneratedFusion d =
      emit(std::string("kiln.conv2d_backward_filter %arg0, %arg1") + attrs +
               " : " + y + ", " + x + " -> " + w,
           y + ", " + x, w);
  // Partials over pixel slices, then their ordered sum.
  EXPECT_EQ(templates(d), "conv_depthwise conv_depthwise ");
  EXPECT_GT(d.scratchBytes, 0u);
}

} // namespace
} // namespace mlir::kiln::codegen
