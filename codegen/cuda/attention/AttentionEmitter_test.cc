//===- AttentionEmitter_test.cc - kernels of "attention" fusions ----------===//
//
// Flash-attention forward and the two backward kernels for the sine block
// (B4 H4 T32 D16, causal), the attention targets (B8 H16 T2048 D128 causal,
// D64 non-causal, bf16) on the tensor-core kernels with their tensor maps,
// the one-pass backward and where it does not apply,
// head dims and layouts they take and those left to CUDA cores, Tq != Tk
// with tails, f16/f32, large head dims on smaller tiles (chosen by the
// target's shared memory), and what the emitter rejects. Every kernel is
// compiled to PTX and an sm_90 (or sm_90a) cubin.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/EmitterTestUtils.h"
#include "codegen/cuda/attention/AttentionEmitter.h"
#include "codegen/cuda/attention/AttentionFusion.h"
#include "codegen/cuda/attention/AttentionPlanner.h"

namespace mlir::kiln::codegen {
namespace {

class AttentionEmitterTest : public EmitterTest {
protected:
  std::unique_ptr<KernelEmitter> emitter = createAttentionEmitter();
  CodegenOptions options;

  static std::string t(llvm::StringRef shape, llvm::StringRef elem) {
    return "tensor<" + shape.str() + "x" + elem.str() + ">";
  }

  GeneratedFusion forward(llvm::StringRef q, llvm::StringRef k,
                          llvm::StringRef v, llvm::StringRef o,
                          llvm::StringRef elem, llvm::StringRef attrs) {
    std::string types = t(q, elem) + ", " + t(k, elem) + ", " + t(v, elem);
    FusionOp fusion = fusionOf("attention",
                               "kiln.attention %arg0, %arg1, %arg2 " +
                                   attrs.str() + " : " + types,
                               types, t(o, elem));
    GeneratedFusion g = emitAndCompile(*emitter, fusion, options);
    if (fusion)
      expectWritesEveryResult(fusion, g);
    return g;
  }

  GeneratedFusion backward(llvm::StringRef q, llvm::StringRef k,
                           llvm::StringRef v, llvm::StringRef o,
                           llvm::StringRef elem, llvm::StringRef attrs) {
    std::string types =
        t(q, elem) + ", " + t(k, elem) + ", " + t(v, elem) + ", " + t(o, elem);
    FusionOp fusion =
        fusionOf("attention",
                 "kiln.attention_backward %arg0, %arg1, %arg2, %arg3, %arg4 " +
                     attrs.str() + " : " + types,
                 types + ", " + t(o, elem),
                 t(q, elem) + ", " + t(k, elem) + ", " + t(v, elem));
    GeneratedFusion g = emitAndCompile(*emitter, fusion, options);
    if (fusion)
      expectWritesEveryResult(fusion, g);
    return g;
  }
};

TEST_F(AttentionEmitterTest, SineBlockForwardAndBackward) {
  GeneratedFusion f = forward("4x4x32x16", "4x4x32x16", "4x4x32x16",
                              "4x4x32x16", "f32", "causal");
  ASSERT_EQ(f.launches.size(), 1u);
  // 32 queries: one 32-row tile per (batch, head).
  EXPECT_EQ(f.launches[0].grid[0], 16u);
  EXPECT_EQ(f.launches[0].block[0], 256u);
  EXPECT_NE(f.kernels[0].source.find("static constexpr bool causal = true;"),
            std::string::npos);
  EXPECT_NE(f.kernels[0].source.find("scale = 0.25f;"), std::string::npos);
  EXPECT_NE(f.kernels[0].source.find("static constexpr int tile = 32;"),
            std::string::npos);
  EXPECT_EQ(f.kernels[0].templateName, "attention_fwd");
  GeneratedFusion b = backward("4x4x32x16", "4x4x32x16", "4x4x32x16",
                               "4x4x32x16", "f32", "causal");
  ASSERT_EQ(b.launches.size(), 2u);
  // Row statistics travel through scratch from the dq kernel to dk/dv.
  EXPECT_GE(b.scratchBytes, 2u * 4 * 4 * 32 * 4);
  EXPECT_EQ(b.kernels[0].templateName, "attention_bwd_dq");
  EXPECT_EQ(b.kernels[1].templateName, "attention_bwd_dkdv");
  for (const GeneratedKernel &k : b.kernels) {
    EXPECT_EQ(k.source.find("atomic"), std::string::npos);
    // Rendered from a KernelSpec: launch merging may place it in a part.
    EXPECT_FALSE(k.part.code.empty());
    EXPECT_FALSE(k.configuration.empty());
  }
}

TEST_F(AttentionEmitterTest, TargetD128CausalBf16OnTensorCores) {
  // A block per unit of work (not persistent): the grid shows the tiles,
  // in causal pairs of a long and a short item of one head.
  options.persistentAttention = false;
  GeneratedFusion f = forward("8x16x2048x128", "8x16x2048x128", "8x16x2048x128",
                              "8x16x2048x128", "bf16", "causal");
  ASSERT_EQ(f.launches.size(), 1u);
  EXPECT_EQ(f.kernels[0].templateName, "attention_wgmma_fwd");
  EXPECT_TRUE(f.kernels[0].archSpecific);
  // 128 queries per item: a producer and two consumer warpgroups.
  EXPECT_EQ(f.launches[0].grid[0], 16u / 2 * 128);
  EXPECT_EQ(f.launches[0].persistentBlocksPerSm, 0u);
  EXPECT_EQ(f.launches[0].block[0], 384u);
  EXPECT_LE(f.launches[0].dynamicSharedBytes,
            CodegenOptions().target().sharedBytesPerBlock);
  std::vector<const TensorMapLayout *> maps = tensorMapsOf(f.launches[0]);
  ASSERT_EQ(maps.size(), 3u);
  // {head dim, T, heads, batch}, bytes per row, head and batch; boxes of one
  // 64-element panel by 128 queries or keys.
  for (const TensorMapLayout *map : maps) {
    EXPECT_EQ(map->dims, (std::vector<uint64_t>{128, 2048, 16, 8}));
    EXPECT_EQ(map->strides,
              (std::vector<uint64_t>{256, 256 * 2048, 256 * 2048 * 16}));
    EXPECT_EQ(map->box, (std::vector<uint32_t>{64, 128, 1, 1}));
    EXPECT_EQ(map->swizzleBytes, 128u);
  }

  GeneratedFusion b =
      backward("8x16x2048x128", "8x16x2048x128", "8x16x2048x128",
               "8x16x2048x128", "bf16", "causal");
  ASSERT_EQ(b.launches.size(), 2u);
  EXPECT_EQ(b.kernels[0].templateName, "attention_wgmma_bwd_dq");
  EXPECT_EQ(b.kernels[1].templateName, "attention_wgmma_bwd_dkdv");
  // Each kernel keeps 128 rows and streams 64-row tiles of the others: the
  // dq kernel's query map has 128-row boxes and its key map 64, the dk/dv
  // kernel's the other way round.
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(b.launches[i].grid[0], 16u / 2 * 128);
    EXPECT_EQ(b.kernels[i].source.find("atomic"), std::string::npos);
    std::vector<const TensorMapLayout *> maps = tensorMapsOf(b.launches[i]);
    ASSERT_EQ(maps.size(), 4u);
    EXPECT_EQ(maps[0]->box[1], i == 0 ? 128u : 64u) << i;
    EXPECT_EQ(maps[1]->box[1], i == 0 ? 64u : 128u) << i;
  }
  // The row statistics of every (batch, head) pass through scratch.
  EXPECT_GE(b.scratchBytes, 2u * 128 * 2048 * 4);
}

TEST_F(AttentionEmitterTest, PersistentKernelsLaunchOneBlockPerSm) {
  // By default the same kernels' blocks take the 16 x 128 work items (8 x
  // 128 causal pairs) in turn: one per SM, and one per pair where there
  // are fewer pairs.
  const unsigned sms = options.target().smCount;
  GeneratedFusion f = forward("8x16x2048x128", "8x16x2048x128", "8x16x2048x128",
                              "8x16x2048x128", "bf16", "causal");
  ASSERT_EQ(f.launches.size(), 1u);
  EXPECT_EQ(f.launches[0].grid[0], sms);
  // A device with fewer SMs may run fewer of them.
  EXPECT_EQ(f.launches[0].persistentBlocksPerSm, 1u);
  GeneratedFusion b =
      backward("8x16x2048x128", "8x16x2048x128", "8x16x2048x128",
               "8x16x2048x128", "bf16", "causal");
  ASSERT_EQ(b.launches.size(), 2u);
  for (const GeneratedLaunch &launch : b.launches)
    EXPECT_EQ(launch.grid[0], sms);
  GeneratedFusion few = forward("1x2x256x64", "1x2x256x64", "1x2x256x64",
                                "1x2x256x64", "bf16", "causal");
  ASSERT_EQ(few.launches.size(), 1u);
  EXPECT_EQ(few.launches[0].grid[0], 2u * 2 / 2);
  // Three query tiles per head: a pair and the middle one alone.
  GeneratedFusion odd = forward("1x2x384x64", "1x2x384x64", "1x2x384x64",
                                "1x2x384x64", "bf16", "causal");
  ASSERT_EQ(odd.launches.size(), 1u);
  EXPECT_EQ(odd.launches[0].grid[0], 2u * 2);
}

TEST_F(AttentionEmitterTest, ForwardConsumersTakeTurnsWhenAsked) {
  // With turns (pingpong), the forward's two consumer warpgroups wait for
  // their turn (bar.sync) and pass it on (bar.arrive) at named barriers;
  // cooperative, they do not.
  for (bool on : {false, true}) {
    options.attentionSchedule =
        on ? AttentionSchedule::PingPong : AttentionSchedule::Cooperative;
    GeneratedFusion f = forward("8x16x2048x64", "8x16x2048x64", "8x16x2048x64",
                                "8x16x2048x64", "bf16", "causal");
    ASSERT_EQ(f.kernels.size(), 1u);
    EXPECT_EQ(f.kernels[0].templateName, "attention_wgmma_fwd");
    EXPECT_NE(f.kernels[0].source.find(on ? "pingpong = true;"
                                          : "pingpong = false;"),
              std::string::npos);
    // --stats shows the choice.
    EXPECT_EQ(f.kernels[0].configuration.find("consumers take turns") !=
                  std::string::npos,
              on);
    CompiledKernel compiled;
    std::string error;
    ASSERT_TRUE(compileCuda(f.kernels[0].source, f.kernels[0].name,
                            archSpecificTarget("sm_90"), true, compiled,
                            error))
        << error;
    EXPECT_EQ(compiled.ptx.find("bar.arrive") != std::string::npos, on);
  }
  // The backward has no turns to take: its kernels are the same either way.
  options.attentionSchedule = AttentionSchedule::Cooperative;
  GeneratedFusion off = backward("2x4x256x64", "2x4x256x64", "2x4x256x64",
                                 "2x4x256x64", "bf16", "causal");
  options.attentionSchedule = AttentionSchedule::PingPong;
  GeneratedFusion on = backward("2x4x256x64", "2x4x256x64", "2x4x256x64",
                                "2x4x256x64", "bf16", "causal");
  ASSERT_EQ(on.kernels.size(), off.kernels.size());
  for (size_t i = 0; i < on.kernels.size(); ++i)
    EXPECT_EQ(on.kernels[i].source, off.kernels[i].source);
}

TEST_F(AttentionEmitterTest, ForwardTakesTurnsWhereCausalByDefault) {
  // Auto (the default) takes turns in causal forwards only, where they were
  // measured faster.
  ASSERT_EQ(options.attentionSchedule, AttentionSchedule::Auto);
  for (const char *mask : {"", "causal"}) {
    GeneratedFusion f = forward("8x16x2048x64", "8x16x2048x64", "8x16x2048x64",
                                "8x16x2048x64", "bf16", mask);
    ASSERT_EQ(f.kernels.size(), 1u);
    EXPECT_NE(f.kernels[0].source.find(*mask ? "pingpong = true;"
                                             : "pingpong = false;"),
              std::string::npos)
        << (*mask ? "causal" : "non-causal");
  }
}

/// A backward fusion of [B, H, T, D] bf16 tensors that reads the forward's
/// row log-sum-exp (as a training step pairs the two) when `lse`, and
/// yields every gradient.
static std::string backwardWithRowLse(llvm::StringRef shape, bool lse,
                                      llvm::StringRef attrs) {
  std::string t = "tensor<" + shape.str() + "xbf16>";
  llvm::StringRef rows = shape.rsplit('x').first;
  std::string l = "tensor<" + rows.str() + "xf32>";
  std::string in = lse ? ", " + l : "";
  return "func.func @f(%q: " + t + ", %k: " + t + ", %v: " + t + ", %o: " + t +
         ", %do: " + t + (lse ? ", %lse: " + l : "") + ") {\n" +
         "  %r:3 = kiln.fusion \"attention\" (%q, %k, %v, %o, %do" +
         (lse ? ", %lse" : "") + ") : (" + t + ", " + t + ", " + t + ", " + t +
         ", " + t + in + ") -> (" + t + ", " + t + ", " + t + ") {\n" +
         "  ^bb0(%a: " + t + ", %b: " + t + ", %c: " + t + ", %d: " + t +
         ", %e: " + t + (lse ? ", %f: " + l : "") + "):\n" +
         "    %g:3 = kiln.attention_backward %a, %b, %c, %d, %e " + attrs.str() +
         (lse ? " row_lse(%f : " + l + ")" : "") + " : " + t + ", " + t + ", " +
         t + ", " + t + "\n" + "    kiln.yield %g#0, %g#1, %g#2 : " + t + ", " +
         t + ", " + t + "\n  }\n  return\n}\n";
}

TEST_F(AttentionEmitterTest, OnePassBackwardAccumulatesDqByBulkReductions) {
  options.fusedAttentionBackward = true;
  FusionOp fusion = parseFusion(
      backwardWithRowLse("8x16x2048x128", true, "causal"));
  GeneratedFusion g = emitAndCompile(*emitter, fusion, options);
  expectWritesEveryResult(fusion, g);
  ASSERT_EQ(g.launches.size(), 3u);
  EXPECT_EQ(g.kernels[0].templateName, "attention_bwd_prep");
  EXPECT_EQ(g.kernels[1].templateName, "attention_wgmma_bwd_fused");
  EXPECT_EQ(g.kernels[2].templateName, "attention_bwd_dq_finish");
  // A warp per query row: the preparation covers the statistics' rows
  // (whole 64-query tiles), the conversion the queries.
  EXPECT_EQ(g.launches[0].grid[0], 128u * 2048 / 8);
  EXPECT_EQ(g.launches[2].grid[0], 128u * 2048 / 8);
  // The one-pass kernel keeps 128 keys per block and streams 64 queries:
  // the query map's boxes have 64 rows, the key map's 128.
  // Persistent: a block per SM takes the 16 x 128 key tiles in turn.
  EXPECT_EQ(g.launches[1].grid[0], options.target().smCount);
  EXPECT_EQ(g.launches[1].block[0], 384u);
  std::vector<const TensorMapLayout *> maps = tensorMapsOf(g.launches[1]);
  ASSERT_EQ(maps.size(), 4u);
  EXPECT_EQ(maps[0]->box[1], 64u);
  EXPECT_EQ(maps[1]->box[1], 128u);
  EXPECT_LE(g.launches[1].dynamicSharedBytes,
            CodegenOptions().target().sharedBytesPerBlock);
  EXPECT_NE(g.kernels[1].source.find("dq_stride = 132;"), std::string::npos);
  // Scratch: the rows' log-sum-exp and delta, and the f32 accumulator of
  // dQ with rows of 128 + 4 elements.
  EXPECT_GE(g.scratchBytes, 128u * 2048 * 4 * (2 + 132));

  // Without the forward's statistics, with a head dim over 128 or with the
  // option off, the backward stays two deterministic kernels.
  for (auto [shape, lse, on] :
       {std::tuple<const char *, bool, bool>{"2x4x256x128", false, true},
        {"2x4x256x256", true, true},
        {"2x4x256x64", true, false}}) {
    options.fusedAttentionBackward = on;
    FusionOp other = parseFusion(backwardWithRowLse(shape, lse, ""));
    GeneratedFusion two = emitAndCompile(*emitter, other, options);
    ASSERT_GE(two.kernels.size(), 2u) << shape;
    EXPECT_EQ(two.kernels[0].templateName, "attention_wgmma_bwd_dq") << shape;
    for (const GeneratedKernel &k : two.kernels)
      EXPECT_EQ(k.templateName.find("fused"), std::string::npos) << shape;
  }
}

TEST_F(AttentionEmitterTest, TensorCoreKernelsOverHeadDimsAndLayouts) {
  // Head dims pad to whole 64-element panels; 256 computes dk and dv in
  // launches of their own (both accumulators would not fit in registers).
  GeneratedFusion b = backward("1x2x100x256", "1x2x130x256", "1x2x130x256",
                               "1x2x100x256", "f16", "causal");
  ASSERT_EQ(b.launches.size(), 3u);
  EXPECT_EQ(b.kernels[0].templateName, "attention_wgmma_bwd_dq");
  EXPECT_EQ(b.kernels[1].templateName, "attention_wgmma_bwd_dk");
  EXPECT_EQ(b.kernels[2].templateName, "attention_wgmma_bwd_dv");
  GeneratedFusion f =
      forward("2x2x33x40", "2x2x70x40", "2x2x70x24", "2x2x33x24", "bf16", "");
  EXPECT_EQ(f.kernels[0].templateName, "attention_wgmma_fwd");
  std::vector<const TensorMapLayout *> maps = tensorMapsOf(f.launches[0]);
  ASSERT_EQ(maps.size(), 3u);
  EXPECT_EQ(maps[0]->dims, (std::vector<uint64_t>{40, 33, 2, 2}));
  EXPECT_EQ(maps[2]->dims, (std::vector<uint64_t>{24, 70, 2, 2}));

  // Interleaved heads ([B, T, H, D] in memory): rows H * D apart.
  FusionOp interleaved = parseFusion(R"mlir(
    func.func @f(%q: tensor<2x64x4x64xbf16>, %k: tensor<2x64x4x64xbf16>, %v: tensor<2x64x4x64xbf16>) {
      %o = kiln.fusion "attention" (%q, %k, %v)
          : (tensor<2x64x4x64xbf16>, tensor<2x64x4x64xbf16>, tensor<2x64x4x64xbf16>) -> tensor<2x64x4x64xbf16> {
      ^bb0(%a: tensor<2x64x4x64xbf16>, %b: tensor<2x64x4x64xbf16>, %c: tensor<2x64x4x64xbf16>):
        %ta = kiln.transpose %a perm = [0, 2, 1, 3] : tensor<2x64x4x64xbf16>
        %tb = kiln.transpose %b perm = [0, 2, 1, 3] : tensor<2x64x4x64xbf16>
        %tc = kiln.transpose %c perm = [0, 2, 1, 3] : tensor<2x64x4x64xbf16>
        %r = kiln.attention %ta, %tb, %tc causal
            : tensor<2x4x64x64xbf16>, tensor<2x4x64x64xbf16>, tensor<2x4x64x64xbf16>
        %t = kiln.transpose %r perm = [0, 2, 1, 3] : tensor<2x4x64x64xbf16>
        kiln.yield %t : tensor<2x64x4x64xbf16>
      }
      return
    })mlir");
  GeneratedFusion g = emitAndCompile(*emitter, interleaved);
  ASSERT_EQ(g.launches.size(), 1u);
  maps = tensorMapsOf(g.launches[0]);
  ASSERT_EQ(maps.size(), 3u);
  EXPECT_EQ(maps[0]->dims, (std::vector<uint64_t>{64, 64, 4, 2}));
  EXPECT_EQ(maps[0]->strides,
            (std::vector<uint64_t>{4 * 64 * 2, 64 * 2, 64 * 4 * 64 * 2}));
}

TEST_F(AttentionEmitterTest, CudaCoresWhereTensorCoresCannot) {
  // f32; a head dim whose rows are not whole 16-byte units; over 256.
  for (auto [shape, elem] :
       {std::pair{"1x2x40x64", "f32"}, std::pair{"1x2x40x36", "bf16"},
        std::pair{"1x2x40x320", "bf16"}}) {
    GeneratedFusion f = forward(shape, shape, shape, shape, elem, "causal");
    ASSERT_EQ(f.kernels.size(), 1u);
    EXPECT_EQ(f.kernels[0].templateName, "attention_fwd") << shape << elem;
  }
  // Not sm_90, or TMA turned off.
  std::string types = t("1x2x64x64", "bf16") + ", " + t("1x2x64x64", "bf16") +
                      ", " + t("1x2x64x64", "bf16");
  FusionOp fusion =
      fusionOf("attention", "kiln.attention %arg0, %arg1, %arg2 : " + types,
               types, t("1x2x64x64", "bf16"));
  ASSERT_TRUE(fusion);
  for (auto [arch, tma] : {std::pair{"sm_80", true}, std::pair{"sm_90", false},
                           std::pair{"sm_90", true}}) {
    CodegenOptions options;
    options.arch = arch;
    options.allowTma = tma;
    FailureOr<GeneratedFusion> g = emitter->emit(fusion, options);
    ASSERT_TRUE(succeeded(g)) << diagnostics;
    bool hopper = llvm::StringRef(arch) == "sm_90" && tma;
    EXPECT_EQ(g->kernels[0].templateName,
              hopper ? "attention_wgmma_fwd" : "attention_fwd")
        << arch << tma;
  }
}

TEST_F(AttentionEmitterTest, TargetD64NonCausalBf16) {
  forward("8x16x2048x64", "8x16x2048x64", "8x16x2048x64", "8x16x2048x64",
          "bf16", "");
  backward("8x16x2048x64", "8x16x2048x64", "8x16x2048x64", "8x16x2048x64",
           "bf16", "");
}

TEST_F(AttentionEmitterTest, TailsAndDifferentLengthsF16) {
  GeneratedFusion f =
      forward("2x3x17x40", "2x3x50x40", "2x3x50x24", "2x3x17x24", "f16",
              "causal scale = 1.250000e-01");
  EXPECT_NE(f.kernels[0].source.find("scale = 0.125f;"), std::string::npos);
  backward("2x3x17x40", "2x3x50x40", "2x3x50x24", "2x3x17x24", "f16",
           "causal scale = 1.250000e-01");
  forward("1x2x33x8", "1x2x7x8", "1x2x7x72", "1x2x33x72", "f32", "");
  backward("1x2x33x8", "1x2x7x8", "1x2x7x72", "1x2x33x72", "f32", "");
  forward("1x1x1x1", "1x1x1x1", "1x1x1x1", "1x1x1x1", "bf16", "causal");
}

TEST_F(AttentionEmitterTest, LargeHeadDimsUseSmallerTiles) {
  const GpuTarget &target = CodegenOptions().target();
  GeneratedFusion f = forward("2x2x100x320", "2x2x100x320", "2x2x100x320",
                              "2x2x100x320", "bf16", "causal");
  ASSERT_EQ(f.launches.size(), 1u);
  EXPECT_NE(f.kernels[0].source.find("static constexpr int tile = 32;"),
            std::string::npos);
  EXPECT_EQ(f.launches[0].grid[0], 4u * 4);
  // 64-row tiles would not fit in a block's shared memory; 32-row ones do,
  // and the launch asks for exactly what the kernel's buffers take.
  AttentionProblem p;
  p.d = p.dv = 320;
  EXPECT_GT(attentionForwardSharedBytes(p, 64), target.sharedBytesPerBlock);
  EXPECT_EQ(f.launches[0].dynamicSharedBytes,
            attentionForwardSharedBytes(p, 32));

  GeneratedFusion b = backward("1x2x40x512", "1x2x40x512", "1x2x40x512",
                               "1x2x40x512", "f32", "");
  ASSERT_EQ(b.launches.size(), 2u);
  EXPECT_NE(b.kernels[0].source.find("static constexpr int tile = 16;"),
            std::string::npos);
  p.backward = true;
  p.d = p.dv = 512;
  EXPECT_GT(attentionBackwardDkDvSharedBytes(p, 32),
            target.sharedBytesPerBlock);
  EXPECT_EQ(b.launches[0].dynamicSharedBytes,
            attentionBackwardDqSharedBytes(p, 16));
  EXPECT_EQ(b.launches[1].dynamicSharedBytes,
            attentionBackwardDkDvSharedBytes(p, 16));
}

TEST_F(AttentionEmitterTest, TilesFollowTheTargetsSharedMemory) {
  // d = 224 takes 64-row tiles within sm_90's shared memory per block, but
  // not within sm_80's.
  std::string types = t("1x2x256x224", "bf16") + ", " +
                      t("1x2x256x224", "bf16") + ", " +
                      t("1x2x256x224", "bf16");
  FusionOp fusion =
      fusionOf("attention", "kiln.attention %arg0, %arg1, %arg2 : " + types,
               types, t("1x2x256x224", "bf16"));
  ASSERT_TRUE(fusion);
  FailureOr<AttentionFusion> single = analyzeAttentionFusion(fusion);
  ASSERT_TRUE(succeeded(single));
  for (auto [arch, tile] : {std::pair{"sm_90", 64}, std::pair{"sm_80", 32}}) {
    CodegenOptions options;
    options.arch = arch;
    // (On sm_90 the tensor-core kernels would take it.)
    options.allowTma = false;
    const GpuTarget &target = options.target();
    EXPECT_EQ(*chooseAttentionTile(single->problem, target), tile) << arch;
    EXPECT_LE(attentionForwardSharedBytes(single->problem, tile),
              target.sharedBytesPerBlock);
    FailureOr<GeneratedFusion> g = emitter->emit(fusion, options);
    ASSERT_TRUE(succeeded(g)) << diagnostics;
    EXPECT_NE(g->kernels[0].source.find(
                  "static constexpr int tile = " + std::to_string(tile) + ";"),
              std::string::npos)
        << arch;
    EXPECT_EQ(g->launches[0].dynamicSharedBytes,
              attentionForwardSharedBytes(single->problem, tile));
  }
}

TEST_F(AttentionEmitterTest, BackwardWithOnlySomeGradients) {
  FusionOp fusion = parseFusion(R"mlir(
    func.func @f(%q: tensor<1x2x20x16xf32>, %k: tensor<1x2x20x16xf32>,
                 %v: tensor<1x2x20x16xf32>, %o: tensor<1x2x20x16xf32>,
                 %do: tensor<1x2x20x16xf32>) {
      %dv = kiln.fusion "attention" (%q, %k, %v, %o, %do)
          : (tensor<1x2x20x16xf32>, tensor<1x2x20x16xf32>, tensor<1x2x20x16xf32>,
             tensor<1x2x20x16xf32>, tensor<1x2x20x16xf32>) -> tensor<1x2x20x16xf32> {
      ^bb0(%a: tensor<1x2x20x16xf32>, %b: tensor<1x2x20x16xf32>, %c: tensor<1x2x20x16xf32>,
           %d: tensor<1x2x20x16xf32>, %e: tensor<1x2x20x16xf32>):
        %r:3 = kiln.attention_backward %a, %b, %c, %d, %e causal
            : tensor<1x2x20x16xf32>, tensor<1x2x20x16xf32>, tensor<1x2x20x16xf32>,
              tensor<1x2x20x16xf32>
        kiln.yield %r#2 : tensor<1x2x20x16xf32>
      }
      return
    })mlir");
  GeneratedFusion g = emitAndCompile(*emitter, fusion, options);
  ASSERT_EQ(g.launches.size(), 2u);
  EXPECT_EQ(g.kernels[0].source.find("d_query"), std::string::npos);
  EXPECT_NE(g.kernels[0].source.find("has_dq = false"), std::string::npos);
  EXPECT_EQ(g.kernels[1].source.find("d_key"), std::string::npos);
  EXPECT_NE(g.kernels[1].source.find("has_dk = false, has_dv = true"),
            std::string::npos);
  EXPECT_NE(g.kernels[1].source.find("d_value_layout"), std::string::npos);
}

TEST_F(AttentionEmitterTest, ReadsAndWritesThroughHeadDimKeepingTransposes) {
  // The sine block's attention as the fusion pass groups it: q, k, v, the
  // output and its gradient stay [B, T, H, D] in memory.
  FusionOp forward = parseFusion(R"mlir(
    func.func @f(%q: tensor<4x32x4x16xf32>, %k: tensor<4x32x4x16xf32>, %v: tensor<4x4x32x16xf32>) {
      %o = kiln.fusion "attention" (%q, %k, %v)
          : (tensor<4x32x4x16xf32>, tensor<4x32x4x16xf32>, tensor<4x4x32x16xf32>) -> tensor<4x32x4x16xf32> {
      ^bb0(%a: tensor<4x32x4x16xf32>, %b: tensor<4x32x4x16xf32>, %c: tensor<4x4x32x16xf32>):
        %ta = kiln.transpose %a perm = [0, 2, 1, 3] : tensor<4x32x4x16xf32>
        %tb = kiln.transpose %b perm = [0, 2, 1, 3] : tensor<4x32x4x16xf32>
        %r = kiln.attention %ta, %tb, %c causal
            : tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>
        %t = kiln.transpose %r perm = [0, 2, 1, 3] : tensor<4x4x32x16xf32>
        kiln.yield %t : tensor<4x32x4x16xf32>
      }
      return
    })mlir");
  // v, given as [B, H, T, D], is read densely.
  GeneratedFusion f = emitAndCompile(*emitter, forward);
  ASSERT_EQ(f.kernels.size(), 1u);
  const std::string &fs = f.kernels[0].source;
  // Heads, batch, head and row strides: q rows are H * D apart, heads D.
  EXPECT_NE(fs.find("strided<idx_t, 4, 2048, 16, 64> q_layout;"),
            std::string::npos)
      << fs;
  EXPECT_NE(fs.find("strided<idx_t, 4, 2048, 512, 16> v_layout;"),
            std::string::npos);
  EXPECT_NE(fs.find("strided<idx_t, 4, 2048, 16, 64> out_layout;"),
            std::string::npos);
  // One block per (batch, head) of the op's [4, 4, 32, 16] view.
  EXPECT_EQ(f.launches[0].grid[0], 16u);

  FusionOp backward = parseFusion(R"mlir(
    func.func @f(%q: tensor<4x32x4x16xf32>, %k: tensor<4x32x4x16xf32>, %v: tensor<4x32x4x16xf32>,
                 %o: tensor<4x32x4x16xf32>, %do: tensor<4x32x4x16xf32>) {
      %g:3 = kiln.fusion "attention" (%q, %k, %v, %o, %do)
          : (tensor<4x32x4x16xf32>, tensor<4x32x4x16xf32>, tensor<4x32x4x16xf32>,
             tensor<4x32x4x16xf32>, tensor<4x32x4x16xf32>)
          -> (tensor<4x32x4x16xf32>, tensor<4x4x32x16xf32>, tensor<4x32x4x16xf32>) {
      ^bb0(%a: tensor<4x32x4x16xf32>, %b: tensor<4x32x4x16xf32>, %c: tensor<4x32x4x16xf32>,
           %d: tensor<4x32x4x16xf32>, %e: tensor<4x32x4x16xf32>):
        %ta = kiln.transpose %a perm = [0, 2, 1, 3] : tensor<4x32x4x16xf32>
        %tb = kiln.transpose %b perm = [0, 2, 1, 3] : tensor<4x32x4x16xf32>
        %tc = kiln.transpose %c perm = [0, 2, 1, 3] : tensor<4x32x4x16xf32>
        %td = kiln.transpose %d perm = [0, 2, 1, 3] : tensor<4x32x4x16xf32>
        %te = kiln.transpose %e perm = [0, 2, 1, 3] : tensor<4x32x4x16xf32>
        %r:3 = kiln.attention_backward %ta, %tb, %tc, %td, %te causal
            : tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>,
              tensor<4x4x32x16xf32>
        %dq = kiln.transpose %r#0 perm = [0, 2, 1, 3] : tensor<4x4x32x16xf32>
        %dv = kiln.transpose %r#2 perm = [0, 2, 1, 3] : tensor<4x4x32x16xf32>
        kiln.yield %dq, %r#1, %dv : tensor<4x32x4x16xf32>, tensor<4x4x32x16xf32>, tensor<4x32x4x16xf32>
      }
      return
    })mlir");
  GeneratedFusion b = emitAndCompile(*emitter, backward);
  ASSERT_EQ(b.launches.size(), 2u);
  expectWritesEveryResult(backward, b);
  const std::string &bs = b.kernels[1].source;
  for (const char *name : {"q", "k", "v", "d_out", "d_value"})
    EXPECT_NE(bs.find(std::string("strided<idx_t, 4, 2048, 16, 64> ") + name +
                      "_layout;"),
              std::string::npos)
        << name;
  EXPECT_NE(bs.find("strided<idx_t, 4, 2048, 512, 16> d_key_layout;"),
            std::string::npos);
  EXPECT_NE(
      b.kernels[0].source.find("strided<idx_t, 4, 2048, 16, 64> out_layout;"),
      std::string::npos);
}

TEST_F(AttentionEmitterTest, Rejects) {
  std::string types =
      "tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>";
  EXPECT_FALSE(emitter->matches(
      fusionOf("reduction", "kiln.attention %arg0, %arg1, %arg2 : " + types,
               types, "tensor<1x1x4x8xf32>")));
  EXPECT_FALSE(emitter->matches(
      fusionOf("attention", "kiln.softmax %arg0 dim = 1 : tensor<4x8xf32>",
               "tensor<4x8xf32>", "tensor<4x8xf32>")));
  // Head dims beyond what 16-row tiles hold in shared memory.
  std::string huge =
      "tensor<1x1x4x4096xf32>, tensor<1x1x4x4096xf32>, tensor<1x1x4x4096xf32>";
  FusionOp fusion =
      fusionOf("attention", "kiln.attention %arg0, %arg1, %arg2 : " + huge,
               huge, "tensor<1x1x4x4096xf32>");
  ASSERT_TRUE(fusion);
  EXPECT_FALSE(emitter->matches(fusion));
  EXPECT_TRUE(failed(emitter->emit(fusion, CodegenOptions())));
  // A transpose that moves the head dim (rows would not be contiguous), and
  // one whose value is also yielded.
  for (const char *yielded : {"%r", "%r, %t"}) {
    std::string body = std::string(R"mlir(
      func.func @f(%q: tensor<1x1x8x4xf32>, %k: tensor<1x1x4x8xf32>) {
        %o = kiln.fusion "attention" (%q, %k) : (tensor<1x1x8x4xf32>, tensor<1x1x4x8xf32>)
            -> TYPES {
        ^bb0(%a: tensor<1x1x8x4xf32>, %b: tensor<1x1x4x8xf32>):
          %t = kiln.transpose %a perm = [0, 1, 3, 2] : tensor<1x1x8x4xf32>
          %r = kiln.attention %t, %b, %b : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>
          kiln.yield YIELDED : YTYPES
        }
        return
      })mlir");
    bool both = std::string(yielded).find("%t") != std::string::npos;
    auto replace = [&](const std::string &from, const std::string &to) {
      body.replace(body.find(from), from.size(), to);
    };
    replace("TYPES", both ? "(tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>)"
                          : "tensor<1x1x4x8xf32>");
    replace("YIELDED", yielded);
    replace("YTYPES", both ? "tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>"
                           : "tensor<1x1x4x8xf32>");
    if (both)
      replace("%o =", "%o:2 =");
    FusionOp bad = parseFusion(body);
    ASSERT_TRUE(bad);
    EXPECT_FALSE(emitter->matches(bad)) << yielded;
  }
}

TEST_F(AttentionEmitterTest, IdenticalFusionsGiveIdenticalKernels) {
  GeneratedFusion a =
      forward("1x2x9x8", "1x2x9x8", "1x2x9x8", "1x2x9x8", "f32", "causal");
  GeneratedFusion b =
      forward("1x2x9x8", "1x2x9x8", "1x2x9x8", "1x2x9x8", "f32", "causal");
  GeneratedFusion c =
      forward("1x2x9x8", "1x2x9x8", "1x2x9x8", "1x2x9x8", "f32", "");
  ASSERT_EQ(a.kernels.size(), 1u);
  EXPECT_EQ(a.kernels[0].source, b.kernels[0].source);
  EXPECT_NE(a.kernels[0].name, c.kernels[0].name);
}

TEST_F(AttentionEmitterTest, RegistryDispatchesAttention) {
  std::string types =
      "tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>";
  FusionOp fusion =
      fusionOf("attention", "kiln.attention %arg0, %arg1, %arg2 : " + types,
               types, "tensor<1x1x4x8xf32>");
  ASSERT_TRUE(fusion);
  FailureOr<GeneratedFusion> g = emitFusion(fusion, CodegenOptions());
  ASSERT_TRUE(succeeded(g)) << diagnostics;
  EXPECT_EQ(g->kernels.size(), 1u);
}

} // namespace
} // namespace mlir::kiln::codegen
