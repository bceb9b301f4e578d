//===- PoolEmitter_test.cc - kernels of "pool" fusions --------------------===//
//
// max_pool2d, avg_pool2d and their gradients in f32/bf16/f16, NCHW and
// NHWC, with and without padding: each kernel is compiled to PTX and an
// sm_90 cubin, launches are checked against the kernels' parameters and
// emission is deterministic. The window arithmetic the gathering gradients
// rely on is checked against the reference's clipped windows.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/EmitterTestUtils.h"

#include "kiln/pool_layout.cuh"

#include <algorithm>

namespace mlir::kiln::codegen {
namespace {

class PoolEmitterTest : public EmitterTest {
protected:
  std::unique_ptr<KernelEmitter> emitter = createPoolEmitter();

  GeneratedFusion emit(llvm::StringRef op, llvm::StringRef operands,
                       llvm::StringRef results) {
    FusionOp fusion = fusionOf("pool", op, operands, results);
    GeneratedFusion g = emitAndCompile(*emitter, fusion);
    if (fusion)
      expectWritesEveryResult(fusion, g);
    for (const GeneratedKernel &k : g.kernels)
      EXPECT_EQ(k.source.find("atomic"), std::string::npos) << k.source;
    return g;
  }

  static std::string tensor(llvm::StringRef shape, llvm::StringRef type) {
    return ("tensor<" + shape + "x" + type + ">").str();
  }

  static int64_t maxBlocks() {
    return CodegenOptions().target().blocksForWaves(4, 8);
  }
};

TEST_F(PoolEmitterTest, MaxPoolInEveryTypeAndLayout) {
  for (llvm::StringRef type : {"f32", "bf16", "f16"}) {
    std::string x = tensor("2x3x9x11", type), y = tensor("2x3x5x6", type);
    GeneratedFusion g =
        emit("kiln.max_pool2d %arg0 layout = nchw kernel = [3, 3] stride = "
             "[2, 2] padding = [1, 1, 1, 1] : " +
                 x,
             x, y);
    ASSERT_EQ(g.launches.size(), 1u);
    EXPECT_EQ(g.kernels[0].templateName, "max_pool_forward");
    EXPECT_EQ(g.scratchBytes, 0u);
    // One thread per output element: 180 of them in 192 threads.
    EXPECT_EQ(g.launches[0].block[0], 192u);
    EXPECT_EQ(g.launches[0].grid[0], 1u);

    std::string xn = tensor("2x9x11x3", type), yn = tensor("2x4x3x3", type);
    GeneratedFusion n = emit("kiln.max_pool2d %arg0 layout = nhwc kernel = "
                             "[2, 3] stride = [2, 3] : " +
                                 xn,
                             xn, yn);
    ASSERT_EQ(n.launches.size(), 1u);
    EXPECT_NE(n.kernels[0].configuration.find("nhwc"), std::string::npos);
  }
}

TEST_F(PoolEmitterTest, AvgPoolCountsPaddingOnlyWhenAsked) {
  std::string x = tensor("2x3x9x11", "f32"), y = tensor("2x3x5x6", "f32");
  GeneratedFusion included =
      emit("kiln.avg_pool2d %arg0 layout = nchw kernel = [3, 3] stride = [2, "
           "2] padding = [1, 1, 1, 1] count_include_pad : " +
               x,
           x, y);
  ASSERT_EQ(included.launches.size(), 1u);
  EXPECT_EQ(included.kernels[0].templateName, "avg_pool_forward");
  EXPECT_NE(included.kernels[0].configuration.find("include_pad"),
            std::string::npos);
  EXPECT_NE(included.kernels[0].source.find(", 1, true>"), std::string::npos);

  std::string xn = tensor("2x9x11x3", "bf16"), yn = tensor("2x5x6x3", "bf16");
  GeneratedFusion clipped =
      emit("kiln.avg_pool2d %arg0 layout = nhwc kernel = [3, 3] stride = [2, "
           "2] padding = [1, 1, 1, 1] : " +
               xn,
           xn, yn);
  EXPECT_EQ(clipped.kernels[0].configuration.find("include_pad"),
            std::string::npos);
  EXPECT_NE(clipped.kernels[0].source.find(", 1, false>"), std::string::npos);
}

TEST_F(PoolEmitterTest, MaxPoolGradientRecomputesSmallWindows) {
  // Windows that do not overlap: each element recomputes the argmax of the
  // one window that holds it, in one launch over the input.
  for (llvm::StringRef type : {"f32", "bf16", "f16"}) {
    std::string g = tensor("2x3x4x3", type), x = tensor("2x3x8x7", type);
    GeneratedFusion f = emit(
        "kiln.max_pool2d_backward %arg0, %arg1 layout = nchw kernel = [2, 2] "
        "stride = [2, 2] : " +
            g + ", " + x,
        g + ", " + x, x);
    ASSERT_EQ(f.launches.size(), 1u);
    EXPECT_EQ(f.kernels[0].templateName, "max_pool_backward");
    EXPECT_EQ(f.scratchBytes, 0u);
    // 336 input elements in 256-thread blocks.
    EXPECT_EQ(f.launches[0].block[0], 256u);
    EXPECT_EQ(f.launches[0].grid[0], 2u);
  }
  std::string g = tensor("2x4x3x3", "f32"), x = tensor("2x9x11x3", "f32");
  GeneratedFusion f = emit("kiln.max_pool2d_backward %arg0, %arg1 layout = "
                           "nhwc kernel = [2, 3] stride = [2, 3] : " +
                               g + ", " + x,
                           g + ", " + x, x);
  ASSERT_EQ(f.launches.size(), 1u);
  EXPECT_EQ(f.kernels[0].templateName, "max_pool_backward");
}

TEST_F(PoolEmitterTest, MaxPoolGradientOfOverlappingWindowsGathersArgmax) {
  for (llvm::StringRef type : {"f32", "bf16"}) {
    std::string g = tensor("2x3x5x6", type), x = tensor("2x3x9x11", type);
    GeneratedFusion f = emit(
        "kiln.max_pool2d_backward %arg0, %arg1 layout = nchw kernel = [3, 3] "
        "stride = [2, 2] padding = [1, 1, 1, 1] : " +
            g + ", " + x,
        g + ", " + x, x);
    ASSERT_EQ(f.launches.size(), 2u);
    ASSERT_EQ(f.kernels.size(), 2u);
    EXPECT_EQ(f.kernels[0].templateName, "max_pool_argmax");
    EXPECT_EQ(f.kernels[1].templateName, "max_pool_backward_indexed");
    // The argmax of every window (one int each) goes through scratch.
    EXPECT_GE(f.scratchBytes, 180u * 4);
    const GeneratedLaunch &argmax = f.launches[0], &gather = f.launches[1];
    ASSERT_EQ(argmax.args.size(), 2u);
    EXPECT_EQ(argmax.args[0].kind, LaunchArg::Kind::Operand);
    EXPECT_EQ(argmax.args[0].index, 1);
    EXPECT_EQ(argmax.args[1].kind, LaunchArg::Kind::Scratch);
    ASSERT_EQ(gather.args.size(), 3u);
    EXPECT_EQ(gather.args[0].index, 0);
    EXPECT_EQ(gather.args[1].kind, LaunchArg::Kind::Scratch);
    EXPECT_EQ(gather.args[1].index, argmax.args[1].index);
    EXPECT_EQ(gather.args[2].kind, LaunchArg::Kind::Result);
    // The argmax kernel runs over outputs, the gather over inputs.
    EXPECT_EQ(argmax.grid[0], 1u);
    EXPECT_EQ(gather.grid[0], 3u);
  }
  // Stride 1: every element is in up to nine windows.
  std::string g = tensor("1x6x6x16", "f16"), x = tensor("1x8x8x16", "f16");
  GeneratedFusion f = emit("kiln.max_pool2d_backward %arg0, %arg1 layout = "
                           "nhwc kernel = [3, 3] : " +
                               g + ", " + x,
                           g + ", " + x, x);
  EXPECT_EQ(f.launches.size(), 2u);
}

TEST_F(PoolEmitterTest, AvgPoolGradientInBothLayouts) {
  std::string g = tensor("2x3x5x6", "f32"), x = tensor("2x3x9x11", "f32");
  GeneratedFusion f =
      emit("kiln.avg_pool2d_backward %arg0 layout = nchw kernel = [3, 3] "
           "stride = [2, 2] padding = [1, 1, 1, 1] count_include_pad : " +
               g + " -> " + x,
           g, x);
  ASSERT_EQ(f.launches.size(), 1u);
  EXPECT_EQ(f.kernels[0].templateName, "avg_pool_backward");
  EXPECT_NE(f.kernels[0].configuration.find("include_pad"), std::string::npos);
  // Rows and columns no window holds (stride above the kernel) get zeros.
  std::string gn = tensor("2x3x4x5", "bf16"), xn = tensor("2x10x11x5", "bf16");
  emit("kiln.avg_pool2d_backward %arg0 layout = nhwc kernel = [2, 2] stride "
       "= [3, 3] : " +
           gn + " -> " + xn,
       gn, xn);
}

TEST_F(PoolEmitterTest, NhwcChannelsMoveInVectors) {
  // 16 bytes of channels per thread where they divide C.
  struct Case {
    const char *type;
    int64_t c;
    int vec;
  } cases[] = {{"bf16", 64, 8}, {"f16", 24, 8}, {"f32", 64, 4},
               {"f32", 6, 2},   {"bf16", 12, 4}, {"f32", 3, 1}};
  for (const Case &c : cases) {
    std::string ch = std::to_string(c.c);
    std::string x = tensor("2x8x8x" + ch, c.type),
                y = tensor("2x4x4x" + ch, c.type);
    GeneratedFusion f = emit("kiln.max_pool2d %arg0 layout = nhwc kernel = "
                             "[2, 2] stride = [2, 2] : " +
                                 x,
                             x, y);
    ASSERT_EQ(f.kernels.size(), 1u);
    EXPECT_NE(f.kernels[0].configuration.find("vec=" + std::to_string(c.vec)),
              std::string::npos)
        << c.type << " C=" << c.c << ": " << f.kernels[0].configuration;
    EXPECT_EQ(::kiln::pool::channel_vector(true, c.c,
                                           std::string(c.type) == "f32" ? 4
                                                                        : 2),
              c.vec);
    int64_t items = 2 * 4 * 4 * c.c / c.vec;
    EXPECT_EQ(f.launches[0].block[0],
              uint32_t(::kiln::pool::block_threads(items)));
    // The gradient moves the same vectors.
    GeneratedFusion b =
        emit("kiln.avg_pool2d_backward %arg0 layout = nhwc kernel = [2, 2] "
             "stride = [2, 2] : " +
                 y + " -> " + x,
             y, x);
    EXPECT_NE(b.kernels[0].configuration.find("vec=" + std::to_string(c.vec)),
              std::string::npos);
  }
  // NCHW windows are strided: one element per thread.
  EXPECT_EQ(::kiln::pool::channel_vector(false, 64, 2), 1);
  std::string x = tensor("2x64x8x8", "bf16"), y = tensor("2x64x4x4", "bf16");
  GeneratedFusion f =
      emit("kiln.avg_pool2d %arg0 layout = nchw kernel = [2, 2] stride = [2, "
           "2] : " +
               x,
           x, y);
  EXPECT_NE(f.kernels[0].configuration.find("vec=1"), std::string::npos);
}

TEST_F(PoolEmitterTest, LargeTensorsUse64BitIndicesAndACappedGrid) {
  std::string x = tensor("128x64x512x512", "bf16"),
              y = tensor("128x64x256x256", "bf16");
  GeneratedFusion f =
      emit("kiln.max_pool2d %arg0 layout = nchw kernel = [2, 2] stride = [2, "
           "2] : " +
               x,
           x, y);
  ASSERT_EQ(f.launches.size(), 1u);
  EXPECT_NE(f.kernels[0].source.find("typedef long long idx_t;"),
            std::string::npos);
  EXPECT_EQ(f.launches[0].block[0], 256u);
  EXPECT_EQ(int64_t(f.launches[0].grid[0]), maxBlocks());

  std::string small = tensor("2x3x9x11", "f32"),
              pooled = tensor("2x3x5x6", "f32");
  GeneratedFusion s =
      emit("kiln.max_pool2d %arg0 layout = nchw kernel = [3, 3] stride = [2, "
           "2] padding = [1, 1, 1, 1] : " +
               small,
           small, pooled);
  EXPECT_NE(s.kernels[0].source.find("typedef int idx_t;"), std::string::npos);
}

TEST_F(PoolEmitterTest, MatchesOnlyPoolFusionsOfOnePoolingOp) {
  std::string x = tensor("2x3x8x8", "f32"), y = tensor("2x3x4x4", "f32");
  std::string op = "kiln.max_pool2d %arg0 layout = nchw kernel = [2, 2] "
                   "stride = [2, 2] : " +
                   x;
  EXPECT_TRUE(emitter->matches(fusionOf("pool", op, x, y)));
  EXPECT_FALSE(emitter->matches(fusionOf("reduction", op, x, y)));
  EXPECT_FALSE(emitter->matches(fusionOf(
      "pool", "kiln.neg %arg0 : " + x, x, x)));
}

// The gradients gather: input i adds outputs [first_window, last_window].
// That must be exactly the outputs whose clipped windows hold i, as the
// reference's scatter loop visits them, for every geometry the verifier
// accepts (padding at most half the window on each side).
TEST(PoolLayoutTest, GatherVisitsTheReferenceWindows) {
  namespace pool = ::kiln::pool;
  int checked = 0;
  for (long long size = 1; size <= 13; ++size)
    for (long long k = 1; k <= 6; ++k)
      for (long long s = 1; s <= 5; ++s)
        for (long long front = 0; front <= k / 2; ++front)
          for (long long back = 0; back <= k / 2; ++back) {
            long long outputs = pool::output_size(size, k, s, front, back);
            if (size + front + back < k || outputs < 1)
              continue;
            for (long long o = 0; o < outputs; ++o) {
              long long begin = pool::window_begin(o, s, front);
              long long end = pool::window_end(o, k, s, front, size);
              // Reference: max(o*s - front, 0), min(o*s - front + k, size).
              EXPECT_EQ(begin, std::max(o * s - front, 0ll));
              EXPECT_EQ(end, std::min(o * s - front + k, size));
              EXPECT_LT(begin, end) << "an empty window";
            }
            for (long long i = 0; i < size; ++i) {
              long long first = pool::first_window(i, k, s, front);
              long long last = pool::last_window(i, s, front, outputs);
              for (long long o = 0; o < outputs; ++o) {
                bool holds = pool::window_begin(o, s, front) <= i &&
                             i < pool::window_end(o, k, s, front, size);
                EXPECT_EQ(holds, o >= first && o <= last)
                    << "size " << size << " k " << k << " s " << s << " pad "
                    << front << "," << back << " i " << i << " o " << o;
              }
              EXPECT_LE(last - first + 1, pool::windows_per_element(k, s));
              ++checked;
            }
          }
  EXPECT_GT(checked, 1000);
}

TEST(PoolLayoutTest, RecomputeOnlyWhereWindowsOverlapLittle) {
  namespace pool = ::kiln::pool;
  EXPECT_TRUE(pool::recompute_argmax(2, 2, 2, 2));  // 4 reads per element
  EXPECT_TRUE(pool::recompute_argmax(3, 3, 3, 3));  // 9
  EXPECT_TRUE(pool::recompute_argmax(2, 2, 1, 1));  // 16
  EXPECT_FALSE(pool::recompute_argmax(3, 3, 2, 2)); // 36
  EXPECT_FALSE(pool::recompute_argmax(3, 3, 1, 1)); // 81
  EXPECT_EQ(pool::block_threads(1), 32);
  EXPECT_EQ(pool::block_threads(100000), 256);
  EXPECT_EQ(pool::grid_blocks(100000, 256, 50), 50);
  EXPECT_EQ(pool::grid_blocks(1000, 256, 50), 4);
}

} // namespace
} // namespace mlir::kiln::codegen
