//===- RnnEmitter_test.cc - kernels of "rnn" fusions ----------------------===//
//
// kiln.rnn and kiln.rnn_backward: the plan for heads owned by one block, a
// thread-block cluster and a cooperative grid group (launch shapes,
// counters, the launch per wave of groups), the backward pass's sequence of
// kernels, splat initial states and zero result gradients taken as values,
// each kernel compiled to PTX and an sm_90 cubin; the planner over every
// head size it must cover. What the kernels compute is checked on the GPU
// against kiln-ref in f64 (tests/gpu/rnn).
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/EmitterTestUtils.h"
#include "codegen/cuda/rnn/RnnPlan.h"

#include "kiln/rnn_layout.cuh"

#include "llvm/Support/FormatVariadic.h"

namespace mlir::kiln::codegen {
namespace {

namespace layout = ::kiln::rnn;

struct Layer {
  const char *function;
  int64_t b, t, nh, d;
  const char *type;
  int64_t gw() const {
    return llvm::StringRef(function) == "elman" ? 1
           : llvm::StringRef(function) == "gru" ? 3
                                                : 4;
  }
  int64_t gb() const { return llvm::StringRef(function) == "elman" ? 1 : 4; }
  int64_t s() const {
    return llvm::StringRef(function) == "lstm"    ? 2
           : llvm::StringRef(function) == "slstm" ? 4
                                                  : 1;
  }
  std::string tensor(std::initializer_list<int64_t> shape) const {
    std::string text = "tensor<";
    for (int64_t d : shape)
      text += std::to_string(d) + "x";
    return text + type + ">";
  }
  std::string wx() const { return tensor({b, t, gw(), nh, d}); }
  std::string r() const { return tensor({gw(), nh, d, d}); }
  std::string bias() const { return tensor({gb(), nh, d}); }
  std::string states0() const { return tensor({s(), b, nh, d}); }
  std::string all() const { return tensor({s(), b, t, nh, d}); }
};

class RnnEmitterTest : public EmitterTest {
protected:
  std::unique_ptr<KernelEmitter> emitter = createRnnEmitter();

  /// The forward fusion of `l`; with `splat`, its initial states are a zero
  /// constant inside the fusion.
  FusionOp forward(const Layer &l, bool splat) {
    std::string s0 = splat ? "%z" : "%a3";
    std::string operands = "%x0, %x1, %x2" + std::string(splat ? "" : ", %x3");
    std::string types = l.wx() + ", " + l.r() + ", " + l.bias() +
                        (splat ? "" : ", " + l.states0());
    std::string blockArgs = "%a0: " + l.wx() + ", %a1: " + l.r() +
                            ", %a2: " + l.bias() +
                            (splat ? "" : ", %a3: " + l.states0());
    std::string source = llvm::formatv(
        R"mlir(func.func @f(%x0: {0}, %x1: {1}, %x2: {2}{3}) {{
  %f:2 = kiln.fusion "rnn" ({4}) : ({5}) -> ({6}, {7}) {{
  ^bb0({8}):
    %z = kiln.constant dense<0.0> : {7}
    %all, %last = kiln.rnn %a0, %a1, %a2, {9} function = {10} : {0}, {1}, {2}, {7}
    kiln.yield %all, %last : {6}, {7}
  }
  return
}
)mlir",
        l.wx(), l.r(), l.bias(), splat ? "" : ", %x3: " + l.states0(), operands,
        types, l.all(), l.states0(), blockArgs, s0, l.function);
    lastSource = source;
    return parseFusion(source);
  }

  /// The backward fusion of `l` yielding every gradient; with `lastOnly`
  /// the gradient of every state is a zero constant.
  FusionOp backward(const Layer &l, bool lastOnly) {
    std::string dAll = lastOnly ? "%z" : "%a5";
    std::string source = llvm::formatv(
        R"mlir(func.func @f(%x0: {0}, %x1: {1}, %x2: {2}, %x3: {3}, %x4: {4}, %x5: {4}, %x6: {3}) {{
  %f:4 = kiln.fusion "rnn" (%x0, %x1, %x2, %x3, %x4, %x5, %x6) : ({0}, {1}, {2}, {3}, {4}, {4}, {3}) -> ({0}, {1}, {2}, {3}) {{
  ^bb0(%a0: {0}, %a1: {1}, %a2: {2}, %a3: {3}, %a4: {4}, %a5: {4}, %a6: {3}):
    %z = kiln.constant dense<0.0> : {4}
    %dwx, %dr, %db, %ds0 = kiln.rnn_backward %a0, %a1, %a2, %a3, %a4, {5}, %a6 function = {6} : {0}, {1}, {2}, {3}, {4}
    kiln.yield %dwx, %dr, %db, %ds0 : {0}, {1}, {2}, {3}
  }
  return
}
)mlir",
        l.wx(), l.r(), l.bias(), l.states0(), l.all(), dAll, l.function);
    lastSource = source;
    return parseFusion(source);
  }

  GeneratedFusion emit(FusionOp fusion) {
    GeneratedFusion g = emitAndCompile(*emitter, fusion);
    if (fusion)
      expectWritesEveryResult(fusion, g);
    return g;
  }
  static std::vector<std::string> templatesOf(const GeneratedFusion &g) {
    std::vector<std::string> names;
    for (const GeneratedLaunch &launch : g.launches)
      names.push_back(g.kernels[launch.kernel].templateName);
    return names;
  }
  static const GeneratedLaunch &persistent(const GeneratedFusion &g,
                                           llvm::StringRef name) {
    for (const GeneratedLaunch &launch : g.launches)
      if (g.kernels[launch.kernel].templateName == name)
        return launch;
    ADD_FAILURE() << "no " << name.str() << " launch";
    return g.launches.front();
  }
};

TEST_F(RnnEmitterTest, SmallHeadsRunOneBlockEach) {
  Layer l{"lstm", 16, 1024, 12, 64, "bf16"};
  GeneratedFusion g = emit(forward(l, /*splat=*/true));
  ASSERT_EQ(templatesOf(g), std::vector<std::string>{"rnn_forward"});
  const GeneratedLaunch &launch = g.launches[0];
  EXPECT_EQ(launch.grid, (std::array<uint32_t, 3>{1, 12, 1}));
  EXPECT_EQ(launch.cluster, (std::array<uint32_t, 3>{1, 1, 1}));
  EXPECT_FALSE(launch.cooperative);
  EXPECT_NE(g.kernels[0].configuration.find("sync=block"), std::string::npos);
  // The zero initial states are a value: no operand 3, a null pointer.
  for (const LaunchArg &arg : launch.args)
    EXPECT_FALSE(arg.kind == LaunchArg::Kind::Operand && arg.index == 3);
  EXPECT_NE(g.kernels[0].source.find("(const __nv_bfloat16 *)nullptr"),
            std::string::npos);
}

TEST_F(RnnEmitterTest, MidSizeHeadsRunAsClusters) {
  Layer l{"lstm", 16, 256, 1, 256, "bf16"};
  GeneratedFusion g = emit(forward(l, /*splat=*/false));
  ASSERT_EQ(g.launches.size(), 1u);
  const GeneratedLaunch &launch = g.launches[0];
  EXPECT_GT(launch.cluster[0], 1u);
  EXPECT_LE(launch.cluster[0], 8u);
  EXPECT_EQ(launch.grid[0], launch.cluster[0]);
  EXPECT_FALSE(launch.cooperative);
  EXPECT_TRUE(g.kernels[0].part.code.empty())
      << "never part of a merged kernel";
}

TEST_F(RnnEmitterTest, WideHeadsRunAsCooperativeGridGroups) {
  Layer l{"lstm", 16, 1024, 1, 768, "bf16"};
  GeneratedFusion g = emit(forward(l, /*splat=*/true));
  EXPECT_EQ(templatesOf(g),
            (std::vector<std::string>{"rnn_zero_counters", "rnn_forward"}));
  const GeneratedLaunch &launch = persistent(g, "rnn_forward");
  EXPECT_TRUE(launch.cooperative);
  EXPECT_EQ(launch.cluster, (std::array<uint32_t, 3>{1, 1, 1}));
  EXPECT_LE(uint64_t(launch.grid[0]) * launch.grid[1], 132u);
  // The counters the zeroing kernel clears are the ones the layer waits on.
  EXPECT_EQ(g.launches[0].args[0].kind, LaunchArg::Kind::Scratch);
  bool sameCounters = false;
  for (const LaunchArg &arg : launch.args)
    sameCounters |= arg.kind == LaunchArg::Kind::Scratch &&
                    arg.index == g.launches[0].args[0].index;
  EXPECT_TRUE(sameCounters);
}

TEST_F(RnnEmitterTest, GroupsBeyondOneWaveRunAsFurtherLaunches) {
  // 12 heads of 768: each group spans most of the GPU.
  Layer l{"gru", 16, 64, 12, 768, "bf16"};
  FailureOr<RnnPlan> plan = [&]() -> FailureOr<RnnPlan> {
    RnnProblem p{layout::kGru, 16, 64, 12, 768, layout::kBf16, false};
    std::optional<RnnPlan> found = planRnn(p, *GpuTarget::forArch("sm_90"));
    if (!found)
      return failure();
    return *found;
  }();
  ASSERT_TRUE(succeeded(plan));
  GeneratedFusion g = emit(forward(l, /*splat=*/true));
  int64_t launches = 0, offsets = 0;
  for (const GeneratedLaunch &launch : g.launches) {
    if (g.kernels[launch.kernel].templateName != "rnn_forward")
      continue;
    ++launches;
    // The last argument is the launch's first group.
    EXPECT_EQ(launch.args.back().kind, LaunchArg::Kind::I32);
    EXPECT_EQ(int64_t(launch.args.back().scalarBits), offsets);
    offsets += launch.grid[1];
  }
  EXPECT_EQ(launches, plan->launches());
  EXPECT_EQ(offsets, 12);
}

TEST_F(RnnEmitterTest, BackwardIsTheRecurrenceThenWeightAndBiasSums) {
  Layer l{"gru", 5, 50, 2, 48, "f32"};
  GeneratedFusion g = emit(backward(l, /*lastOnly=*/false));
  EXPECT_EQ(templatesOf(g),
            (std::vector<std::string>{"rnn_backward", "rnn_weight_gradient",
                                      "rnn_sum_partials", "rnn_bias_partials",
                                      "rnn_sum_partials"}));
  // gru keeps the gradient of R_0 h in scratch for dR and db.
  EXPECT_NE(g.kernels[0].source.find("d_rh0"), std::string::npos);
  EXPECT_NE(g.kernels[0].configuration.find("sync="), std::string::npos);
  EXPECT_EQ(g.kernels[0].source.find("atomicAdd"), std::string::npos);
}

TEST_F(RnnEmitterTest, ZeroStateGradientsAreNotRead) {
  Layer l{"slstm", 3, 20, 2, 16, "bf16"};
  GeneratedFusion g = emit(backward(l, /*lastOnly=*/true));
  const GeneratedKernel &kernel = g.kernels[g.launches[0].kernel];
  EXPECT_NE(kernel.source.find("(const __nv_bfloat16 *)nullptr, d_last"),
            std::string::npos)
      << kernel.source;
  for (const LaunchArg &arg : g.launches[0].args)
    EXPECT_FALSE(arg.kind == LaunchArg::Kind::Operand && arg.index == 5);
}

TEST_F(RnnEmitterTest, WideF32BackwardFallsBackToARelaxedPlan) {
  // The fragments of 768 units in f32 exceed a block's registers with a
  // margin; the plan admits spills rather than refusing the layer.
  GeneratedFusion g = emit(backward(Layer{"lstm", 4, 8, 1, 768, "f32"}, false));
  ASSERT_FALSE(g.launches.empty());
  EXPECT_NE(g.kernels[persistent(g, "rnn_backward").kernel].configuration.find(
                "relaxed"),
            std::string::npos);
}

TEST(RnnPlanTest, EveryHeadSizeFitsInSixteenBitStorage) {
  const GpuTarget &h100 = *GpuTarget::forArch("sm_90");
  for (int function :
       {layout::kLstm, layout::kGru, layout::kElman, layout::kSlstm})
    for (int kind : {layout::kBf16, layout::kF16})
      for (bool backward : {false, true})
        for (int64_t d = 16; d <= 768; d += 8) {
          RnnProblem p{function, 13,   100,     768 / d > 4 ? 4 : 1,
                       d,        kind, backward};
          std::optional<RnnPlan> plan = planRnn(p, h100);
          ASSERT_TRUE(plan) << "function " << function << " D " << d
                            << (backward ? " backward" : " forward");
          EXPECT_GE(int64_t(plan->unitsPerBlock) * plan->blocksPerGroup, d);
          EXPECT_LE(plan->sharedBytes, int64_t(h100.sharedBytesPerBlock));
          EXPECT_LE(plan->threads, 1024);
          if (plan->sync == layout::kSyncCluster)
            EXPECT_LE(plan->blocksPerGroup, int(h100.maxClusterBlocks));
          if (plan->sync == layout::kSyncGrid)
            EXPECT_LE(plan->groupsPerLaunch * plan->blocksPerGroup,
                      int64_t(h100.smCount));
        }
}

TEST(RnnPlanTest, F32FitsEveryHeadSize) {
  const GpuTarget &h100 = *GpuTarget::forArch("sm_90");
  for (bool backward : {false, true})
    for (int64_t d = 16; d <= 768; d += 16) {
      RnnProblem p{layout::kLstm, 16, 64, 1, d, layout::kTf32x3, backward};
      std::optional<RnnPlan> plan = planRnn(p, h100);
      ASSERT_TRUE(plan) << "D " << d;
      // The forward up to 320 units and the backward up to 128 fit without
      // spilling (wider f32 heads admit spills).
      if (d <= (backward ? 128 : 320))
        EXPECT_FALSE(plan->relaxed) << "D " << d;
    }
}

TEST(RnnPlanTest, OlderTargetsUseNoClusters) {
  const GpuTarget &a100 = *GpuTarget::forArch("sm_80");
  RnnProblem p{layout::kLstm, 16, 64, 1, 256, layout::kBf16, false};
  std::optional<RnnPlan> plan = planRnn(p, a100);
  ASSERT_TRUE(plan);
  EXPECT_NE(plan->sync, int(layout::kSyncCluster));
}

} // namespace
} // namespace mlir::kiln::codegen
