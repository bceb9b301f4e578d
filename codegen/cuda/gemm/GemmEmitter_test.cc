// The GEMM emitter: every variant is generated and compiled to PTX and a
// sm_90 cubin; launches and arguments are checked (the choice of kernels
// and tiles, which --kiln-select-kernels records, by the lit tests of
// tests/lit/select_kernels); the
// index math of both kernels is replayed on the host (tile mapping, zero-
// filled tails, ldmatrix / mma fragment layouts, split-K) against a direct
// matrix product.

#include "codegen/cuda/EmitterTestUtils.h"
#include "codegen/cuda/KernelEmitter.h"
#include "codegen/cuda/Nvrtc.h"
#include "kiln/gemm_layout.cuh"

#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>
#include <nvJitLink.h>

#include <map>
#include <random>
#include <regex>
#include <set>

namespace mlir::kiln::codegen {
namespace {

struct Arg {
  std::string name, type;
};

/// A module with one function that calls one fusion of `kind` over `args`
/// (block arguments named as given) with `body` and the yielded values.
std::string fusionModule(const std::vector<Arg> &args, const std::string &body,
                         const std::vector<Arg> &yields,
                         const std::string &kind = "gemm") {
  std::string funcArgs, operands, operandTypes, blockArgs, resultTypes,
      yieldNames;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string sep = i ? ", " : "";
    funcArgs += sep + "%f" + std::to_string(i) + ": " + args[i].type;
    operands += sep + "%f" + std::to_string(i);
    operandTypes += sep + args[i].type;
    blockArgs += sep + "%" + args[i].name + ": " + args[i].type;
  }
  for (size_t i = 0; i < yields.size(); ++i) {
    std::string sep = i ? ", " : "";
    resultTypes += sep + yields[i].type;
    yieldNames += sep + "%" + yields[i].name;
  }
  std::string results =
      yields.size() == 1 ? resultTypes : "(" + resultTypes + ")";
  std::string returned;
  for (size_t i = 0; i < yields.size(); ++i)
    returned += (i ? ", %r#" : "%r#") + std::to_string(i);
  if (yields.size() == 1)
    returned = "%r";
  std::string lhs =
      yields.size() == 1 ? "%r" : "%r:" + std::to_string(yields.size());
  return "func.func @f(" + funcArgs + ") -> " + results + " {\n  " + lhs +
         " = kiln.fusion \"" + kind + "\" (" + operands + ") : (" +
         operandTypes + ") -> " + results + " {\n  ^bb0(" + blockArgs + "):\n" +
         body + "    kiln.yield " + yieldNames + " : " + resultTypes +
         "\n  }\n  return " + returned + " : " + resultTypes + "\n}\n";
}

std::string tensor(std::vector<int64_t> shape, const std::string &element) {
  std::string text = "tensor<";
  for (int64_t d : shape)
    text += std::to_string(d) + "x";
  return text + element + ">";
}

/// A static constexpr member of the generated configuration struct, e.g.
/// "BM".
int64_t constant(const std::string &source, const std::string &name) {
  std::smatch match;
  std::regex pattern("\\b" + name + " = (-?[0-9]+)");
  if (!std::regex_search(source, match, pattern))
    return -1;
  return std::stoll(match[1]);
}
bool flag(const std::string &source, const std::string &name) {
  return source.find(name + " = true") != std::string::npos;
}

class GemmEmitterTest : public ::testing::Test {
protected:
  GemmEmitterTest() {
    context.loadDialect<KilnDialect, func::FuncDialect>();
    context.getDiagEngine().registerHandler([this](Diagnostic &diag) {
      diagnostics += diag.str() + "\n";
      return success();
    });
  }

  FusionOp parse(const std::string &source) {
    modules.push_back(parseSourceString<ModuleOp>(source, &context));
    EXPECT_TRUE(modules.back()) << diagnostics << "\n" << source;
    if (!modules.back())
      return nullptr;
    FusionOp fusion;
    modules.back()->walk([&](FusionOp op) { fusion = op; });
    return fusion;
  }

  bool matches(const std::string &source) {
    FusionOp fusion = parse(source);
    return fusion && emitter->matches(fusion);
  }

  /// Emits the fusion and compiles every kernel to PTX and a cubin for the
  /// options' architecture (its arch-specific variant for wgmma kernels).
  GeneratedFusion emitAndCompile(const std::string &source,
                                 CodegenOptions options = {}) {
    FusionOp fusion = parse(source);
    if (!fusion)
      return {};
    EXPECT_TRUE(emitter->matches(fusion)) << source;
    FailureOr<GeneratedFusion> generated = emitter->emit(fusion, options);
    EXPECT_TRUE(succeeded(generated)) << diagnostics;
    if (failed(generated))
      return {};
    for (const GeneratedKernel &kernel : generated->kernels) {
      EXPECT_EQ(kernel.archSpecific, kernel.templateName == "gemm_wgmma" ||
                                         kernel.templateName == "gemm_tma");
      std::string arch =
          kernel.archSpecific ? archSpecificTarget(options.arch) : options.arch;
      CompiledKernel compiled;
      std::string error;
      EXPECT_TRUE(
          compileCuda(kernel.source, kernel.name, arch, true, compiled, error))
          << error << "\n"
          << kernel.source;
      EXPECT_NE(compiled.ptx.find(".entry " + kernel.name), std::string::npos);
      EXPECT_EQ(kernel.archSpecific,
                compiled.ptx.find("wgmma.mma_async") != std::string::npos);
      EXPECT_FALSE(kernel.configuration.empty());
      ptx[kernel.name] = compiled.ptx;
      EXPECT_GT(compiled.cubin.size(), 0u);
      EXPECT_EQ(compiled.log.find("warning"), std::string::npos)
          << compiled.log;
    }
    checkLaunches(*generated, fusion);
    // Deterministic: the same fusion gives the same sources.
    FailureOr<GeneratedFusion> again = emitter->emit(fusion, options);
    EXPECT_TRUE(succeeded(again));
    if (succeeded(again)) {
      EXPECT_EQ(again->kernels.size(), generated->kernels.size());
      for (size_t i = 0; i < again->kernels.size(); ++i)
        EXPECT_EQ(again->kernels[i].source, generated->kernels[i].source);
    }
    return *generated;
  }

  /// Geometry within CUDA limits; arguments: operands, results, scratch.
  void checkLaunches(const GeneratedFusion &generated, FusionOp fusion) {
    for (const GeneratedLaunch &launch : generated.launches) {
      ASSERT_LT(launch.kernel, generated.kernels.size());
      EXPECT_GE(launch.grid[0], 1u);
      EXPECT_LE(launch.grid[1], 65535u);
      EXPECT_LE(launch.grid[2], 65535u);
      EXPECT_LE(launch.block[0] * launch.block[1] * launch.block[2], 1024u);
      EXPECT_LE(launch.dynamicSharedBytes, 227u * 1024);
      size_t inputs = fusion.getInputs().size(),
             results = fusion.getNumResults();
      bool split = generated.scratchBytes > 0;
      // The TMA kernel's maps come last, two per problem, then at most one
      // of a result (TMA stores).
      size_t maps = 0, resultMaps = 0;
      for (const LaunchArg &arg : launch.args) {
        maps += arg.kind == LaunchArg::Kind::TensorMap;
        resultMaps += arg.kind == LaunchArg::Kind::TensorMap && arg.mapsResult;
      }
      EXPECT_EQ((maps - resultMaps) % 2, 0u);
      EXPECT_LE(resultMaps, 1u);
      if (resultMaps) {
        EXPECT_TRUE(launch.args.back().mapsResult);
      }
      ASSERT_EQ(launch.args.size(), inputs + results + (split ? 1 : 0) + maps);
      for (size_t i = 0; i < inputs; ++i) {
        EXPECT_EQ(launch.args[i].kind, LaunchArg::Kind::Operand);
        EXPECT_EQ(launch.args[i].index, static_cast<int64_t>(i));
      }
      for (size_t i = 0; i < results; ++i) {
        EXPECT_EQ(launch.args[inputs + i].kind, LaunchArg::Kind::Result);
        EXPECT_EQ(launch.args[inputs + i].index, static_cast<int64_t>(i));
      }
      if (split) {
        EXPECT_EQ(launch.args[inputs + results].kind, LaunchArg::Kind::Scratch);
      }
    }
  }

  /// The PTX of a kernel emitAndCompile compiled.
  const std::string &ptxOf(const GeneratedKernel &kernel) {
    return ptx[kernel.name];
  }

  MLIRContext context;
  std::string diagnostics;
  std::map<std::string, std::string> ptx;
  std::vector<OwningOpRef<ModuleOp>> modules;
  std::unique_ptr<KernelEmitter> emitter = createGemmEmitter();
};

/// A matmul (optionally transposed) of `element` with an optional epilogue.
std::string matmulModule(std::vector<int64_t> lhs, std::vector<int64_t> rhs,
                         const std::string &element, bool transposeLhs,
                         bool transposeRhs, std::vector<int64_t> out) {
  std::string attrs = std::string(transposeLhs ? " transpose_lhs" : "") +
                      (transposeRhs ? " transpose_rhs" : "");
  std::string body = "    %m = kiln.matmul %a, %b" + attrs + " : " +
                     tensor(lhs, element) + ", " + tensor(rhs, element) + "\n";
  return fusionModule(
      {{"a", tensor(lhs, element)}, {"b", tensor(rhs, element)}}, body,
      {{"m", tensor(out, element)}});
}

//===----------------------------------------------------------------------===//
// Targets and samples
//===----------------------------------------------------------------------===//

std::string biasGelu(int64_t m, int64_t n, int64_t k, bool transposeRhs) {
  std::string x = tensor({m, k}, "bf16");
  std::string w =
      transposeRhs ? tensor({n, k}, "bf16") : tensor({k, n}, "bf16");
  std::string y = tensor({m, n}, "bf16"), bias = tensor({n}, "bf16");
  std::string body = "    %m = kiln.matmul %x, %w" +
                     std::string(transposeRhs ? " transpose_rhs" : "") + " : " +
                     x + ", " + w + "\n" +
                     "    %s = kiln.add %m, %bias : " + y + ", " + bias + "\n" +
                     "    %g = kiln.gelu %s approximate = tanh : " + y + "\n";
  return fusionModule({{"x", x}, {"w", w}, {"bias", bias}}, body, {{"g", y}});
}

TEST_F(GemmEmitterTest, LargeBiasGeluTanhBf16UsesWgmmaOnSm90) {
  for (const char *arch : {"sm_90", "sm_90a"})
    for (bool transposeRhs : {false, true}) {
      SCOPED_TRACE(std::string(arch) + (transposeRhs ? " transpose_rhs" : ""));
      CodegenOptions options;
      options.arch = arch;
      options.gemmSchedule = GemmSchedule::Cooperative;
      options.gemmCluster = 0; // clusters where they pair tile rows
      GeneratedFusion generated =
          emitAndCompile(biasGelu(8192, 4096, 4096, transposeRhs), options);
      ASSERT_EQ(generated.kernels.size(), 1u);
      const GeneratedKernel &kernel = generated.kernels[0];
      EXPECT_TRUE(kernel.archSpecific);
      EXPECT_NE(ptxOf(kernel).find(
                    "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16"),
                std::string::npos);
      // transpose-a 0; transpose-b 1 for the N-major [K][N] weight.
      EXPECT_NE(ptxOf(kernel).find(std::string("p, 1, 1, 0, ") +
                                   (transposeRhs ? "0" : "1") + ";"),
                std::string::npos);
      EXPECT_NE(kernel.source.find("kiln::op::gelu_tanh("), std::string::npos);
      ASSERT_EQ(generated.launches.size(), 1u);
      const GeneratedLaunch &launch = generated.launches[0];
      // Persistent: one block per SM for the 64 x 16 tiles, two consumer
      // warpgroups and the TMA producer; clusters of two blocks on adjacent
      // tile rows share the rhs tile.
      EXPECT_EQ(kernel.templateName, "gemm_tma");
      EXPECT_EQ(launch.cluster, (std::array<uint32_t, 3>{2, 1, 1}));
      EXPECT_EQ(launch.grid[0], 132u);
      EXPECT_EQ(launch.persistentBlocksPerSm, 1u);
      EXPECT_EQ(launch.grid[2], 1u);
      EXPECT_EQ(launch.block[0], 384u);
      // Every tile lies inside the output: no bounds tests in the epilogue.
      EXPECT_EQ(constant(kernel.source, "ROWS") % 128, 0);
      EXPECT_EQ(constant(kernel.source, "N") % 256, 0);
      // 4 stages of A 128x64 and B 256x64 bf16, the alignment slack, the
      // epilogue's staging (16 rows of 128 bf16 per consumer warp) and a
      // full and an empty barrier per stage.
      EXPECT_TRUE(flag(kernel.source, "STAGED_EPILOGUE"));
      EXPECT_EQ(launch.dynamicSharedBytes,
                4u * (128 + 256) * 64 * 2 + 1024 + 8 * 16 * 128 * 2 + 4 * 16);
      EXPECT_EQ(generated.scratchBytes, 0u);
      // A [M][K] in boxes of 64 k by 128 rows; B [K][N] in boxes of 64
      // columns by 64 k, or [N][K] in boxes of 64 k by 128 rows (each block
      // of a cluster copies half the tile's 256 into both).
      std::vector<const TensorMapLayout *> maps = tensorMapsOf(launch);
      ASSERT_EQ(maps.size(), 2u);
      EXPECT_EQ(maps[0]->dims, (std::vector<uint64_t>{4096, 8192}));
      EXPECT_EQ(maps[0]->strides, (std::vector<uint64_t>{4096 * 2}));
      EXPECT_EQ(maps[0]->box, (std::vector<uint32_t>{64, 128}));
      EXPECT_EQ(maps[1]->dims, (std::vector<uint64_t>{4096, 4096}));
      EXPECT_EQ(maps[1]->box, transposeRhs ? (std::vector<uint32_t>{64, 128})
                                           : (std::vector<uint32_t>{64, 64}));
      for (const TensorMapLayout *map : maps)
        EXPECT_EQ(map->swizzleBytes, 128u);
    }
}

TEST_F(GemmEmitterTest, ClustersOnlyWhenAskedAndWhereTileRowsPair) {
  // By default every block copies its whole rhs tile itself.
  CodegenOptions options;
  options.gemmSchedule = GemmSchedule::Cooperative;
  GeneratedFusion alone =
      emitAndCompile(biasGelu(8192, 4096, 4096, true), options);
  ASSERT_EQ(alone.kernels.size(), 1u);
  EXPECT_EQ(constant(alone.kernels[0].source, "CLUSTER_M"), 1);
  EXPECT_EQ(alone.launches[0].cluster, (std::array<uint32_t, 3>{1, 1, 1}));
  EXPECT_EQ(tensorMapsOf(alone.launches[0])[1]->box,
            (std::vector<uint32_t>{64, 256}));
  // Asked for, a product of one tile row has none to pair.
  options.gemmCluster = 2;
  // (It splits K: a GEMM kernel and the reduce of its partials.)
  GeneratedFusion row = emitAndCompile(biasGelu(128, 4096, 4096, true), options);
  ASSERT_FALSE(row.launches.empty());
  EXPECT_EQ(constant(row.kernels[0].source, "CLUSTER_M"), 1);
  EXPECT_EQ(row.launches[0].cluster, (std::array<uint32_t, 3>{1, 1, 1}));
  // Nine tile rows: the last cluster's second block lies past the rows.
  GeneratedFusion odd =
      emitAndCompile(biasGelu(9 * 128, 4096, 4096, true), options);
  ASSERT_EQ(odd.kernels.size(), 1u);
  EXPECT_EQ(constant(odd.kernels[0].source, "CLUSTER_M"), 2);
  EXPECT_EQ(odd.launches[0].cluster, (std::array<uint32_t, 3>{2, 1, 1}));
  EXPECT_EQ(odd.launches[0].grid[0] % 2, 0u);
}

TEST_F(GemmEmitterTest, PingPongAndCpAsyncWgmmaKernels) {
  // K = 1024: the ping-pong schedule (tests/lit/select_kernels/gemm.mlir).
  GeneratedFusion generated = emitAndCompile(biasGelu(8192, 4096, 1024, false));
  ASSERT_EQ(generated.kernels.size(), 1u);
  const GeneratedKernel &kernel = generated.kernels[0];
  EXPECT_EQ(kernel.templateName, "gemm_tma");
  // One block of two tiles in flight per SM: no launch bounds beyond one.
  EXPECT_EQ(constant(kernel.source, "MIN_BLOCKS"), 1);
  EXPECT_NE(ptxOf(kernel).find("bar.arrive"), std::string::npos);
  EXPECT_EQ(generated.launches[0].block[0], 384u);
  EXPECT_EQ(generated.launches[0].grid[0], 132u);
  EXPECT_NE(kernel.configuration.find("ping-pong"), std::string::npos);

  // Without TMA: the cp.async kernel, whose warpgroups share each tile.
  CodegenOptions noTma;
  noTma.allowTma = false;
  noTma.gemmSchedule = GemmSchedule::PingPong;
  generated = emitAndCompile(biasGelu(8192, 4096, 4096, false), noTma);
  ASSERT_EQ(generated.kernels.size(), 1u);
  EXPECT_EQ(generated.kernels[0].templateName, "gemm_wgmma");
  EXPECT_TRUE(tensorMapsOf(generated.launches[0]).empty());
  EXPECT_EQ(generated.launches[0].block[0], 256u);
}

TEST_F(GemmEmitterTest, EpilogueInputsOfTheProductsShapeArePrefetched) {
  // As the gradient through an activation: the product scaled by a tensor
  // of its shape (read element for element at the output's position); a
  // bias is not of the product's shape, the product's operands are the
  // TMA's.
  std::string dy = tensor({8192, 1024}, "bf16"), w = tensor({4096, 1024}, "bf16");
  std::string y = tensor({8192, 4096}, "bf16"), bias = tensor({4096}, "bf16");
  std::string body = "    %m = kiln.matmul %dy, %w transpose_rhs : " + dy +
                     ", " + w + "\n" +
                     "    %d = kiln.mul %m, %pre : " + y + ", " + y + "\n" +
                     "    %s = kiln.add %d, %bias : " + y +
                     ", " + bias + "\n";
  for (GemmSchedule schedule :
       {GemmSchedule::PingPong, GemmSchedule::Cooperative}) {
    CodegenOptions options;
    options.gemmSchedule = schedule;
    GeneratedFusion generated = emitAndCompile(
        fusionModule({{"dy", dy}, {"w", w}, {"pre", y}, {"bias", bias}}, body,
                     {{"s", y}}),
        options);
    ASSERT_EQ(generated.kernels.size(), 1u);
    const GeneratedKernel &kernel = generated.kernels[0];
    EXPECT_EQ(kernel.templateName, "gemm_tma");
    EXPECT_TRUE(flag(kernel.source, "STAGED_EPILOGUE"));
    EXPECT_TRUE(flag(kernel.source, "kPrefetch"));
    EXPECT_NE(kernel.source.find(
                  "kiln::gemm::prefetch_l2(p.in2 + r * Config::N + c, "),
              std::string::npos)
        << kernel.source;
    EXPECT_EQ(kernel.source.find("prefetch_l2(p.in0"), std::string::npos);
    EXPECT_EQ(kernel.source.find("prefetch_l2(p.in1"), std::string::npos);
    EXPECT_EQ(kernel.source.find("prefetch_l2(p.in3"), std::string::npos);
    EXPECT_NE(ptxOf(kernel).find("prefetch.global.L2"),
              std::string::npos);
  }
  // Split K: fragment stores, whose epilogue (shared with the reduction
  // kernel) prefetches nothing.
  std::string x3 = tensor({256, 1024}, "bf16"), w3 = tensor({384, 1024}, "bf16");
  std::string y3 = tensor({256, 384}, "bf16");
  GeneratedFusion split = emitAndCompile(fusionModule(
      {{"x", x3}, {"w", w3}, {"res", y3}},
      "    %m = kiln.matmul %x, %w transpose_rhs : " + x3 + ", " + w3 + "\n" +
          "    %s = kiln.add %m, %res : " + y3 + ", " + y3 + "\n",
      {{"s", y3}}));
  ASSERT_EQ(split.kernels.size(), 2u);
  EXPECT_EQ(split.kernels[1].templateName, "gemm_splitk");
  EXPECT_FALSE(flag(split.kernels[0].source, "STAGED_EPILOGUE"));
  EXPECT_FALSE(flag(split.kernels[0].source, "kPrefetch"));
  EXPECT_EQ(split.kernels[1].source.find("prefetch_l2("), std::string::npos);
  // Only a bias: nothing to prefetch.
  GeneratedFusion plain = emitAndCompile(biasGelu(8192, 4096, 1024, false));
  ASSERT_EQ(plain.kernels.size(), 1u);
  EXPECT_FALSE(flag(plain.kernels[0].source, "kPrefetch"));
  EXPECT_EQ(ptxOf(plain.kernels[0]).find("prefetch.global.L2"),
            std::string::npos);
}

TEST_F(GemmEmitterTest, TmaMapsEveryProblemsOperands) {
  // q, k and v of one input (stacked), and the sum of their input
  // gradients: two maps per problem, the lhs maps first.
  std::string x = tensor({1024, 512}, "bf16"), w = tensor({512, 384}, "bf16");
  std::string y = tensor({1024, 384}, "bf16");
  std::string body;
  for (const char *name : {"q", "k", "v"})
    body += std::string("    %") + name + " = kiln.matmul %x, %w" + name +
            " : " + x + ", " + w + "\n";
  GeneratedFusion grouped =
      emitAndCompile(fusionModule({{"x", x}, {"wq", w}, {"wk", w}, {"wv", w}},
                                  body, {{"q", y}, {"k", y}, {"v", y}}));
  ASSERT_EQ(grouped.kernels.size(), grouped.launches.size());
  EXPECT_EQ(grouped.kernels[0].templateName, "gemm_tma");
  EXPECT_EQ(constant(grouped.kernels[0].source, "GROUPS"), 3);
  std::vector<const TensorMapLayout *> maps = tensorMapsOf(grouped.launches[0]);
  ASSERT_EQ(maps.size(), 6u);
  std::vector<int64_t> buffers;
  for (const LaunchArg &arg : grouped.launches[0].args)
    if (arg.kind == LaunchArg::Kind::TensorMap)
      buffers.push_back(arg.index);
  EXPECT_EQ(buffers, (std::vector<int64_t>{0, 0, 0, 1, 2, 3}));
  EXPECT_EQ(maps[0]->dims, (std::vector<uint64_t>{512, 1024}));
  EXPECT_EQ(maps[3]->dims, (std::vector<uint64_t>{384, 512}));
  EXPECT_NE(grouped.kernels[0].source.find("const kiln::tensor_map *a_map[3];"),
            std::string::npos);
  EXPECT_NE(grouped.kernels[0].source.find("{&a_map0, &a_map1, &a_map2}, "
                                           "{&b_map0, &b_map1, &b_map2}"),
            std::string::npos);

  std::string g = tensor({1024, 384}, "bf16"), dx = tensor({1024, 512}, "bf16");
  std::string sum =
      "    %a = kiln.matmul %dq, %wq transpose_rhs : " + g + ", " + w + "\n" +
      "    %b = kiln.matmul %dk, %wk transpose_rhs : " + g + ", " + w + "\n" +
      "    %s = kiln.add %a, %b : " + dx + ", " + dx + "\n";
  GeneratedFusion summed = emitAndCompile(fusionModule(
      {{"dq", g}, {"wq", w}, {"dk", g}, {"wk", w}}, sum, {{"s", dx}}));
  ASSERT_GE(summed.kernels.size(), 1u);
  EXPECT_EQ(summed.kernels[0].templateName, "gemm_tma");
  EXPECT_EQ(constant(summed.kernels[0].source, "KSUMS"), 2);
  maps = tensorMapsOf(summed.launches[0]);
  ASSERT_EQ(maps.size(), 4u);
  // The rhs [N][K] = w [512][384]: K-major, boxes of 64 k by BN rows.
  EXPECT_EQ(maps[2]->dims, (std::vector<uint64_t>{384, 512}));
  EXPECT_EQ(maps[2]->box[0], 64u);

  // More problems than the kernel's parameters take maps for, or a batch
  // of GEMMs: the kernels without TMA.
  std::string many;
  std::vector<Arg> args = {{"x", x}};
  std::vector<Arg> yields;
  for (int i = 0; i < 5; ++i) {
    std::string n = std::to_string(i);
    many += "    %p" + n + " = kiln.matmul %x, %w" + n + " : " + x + ", " + w +
            "\n";
    args.push_back({"w" + n, w});
    yields.push_back({"p" + n, y});
  }
  GeneratedFusion five = emitAndCompile(fusionModule(args, many, yields));
  ASSERT_GE(five.kernels.size(), 1u);
  EXPECT_NE(five.kernels[0].templateName, "gemm_tma");
  std::string bx = tensor({4, 512, 512}, "bf16"),
              bw = tensor({4, 512, 384}, "bf16");
  GeneratedFusion batched = emitAndCompile(
      fusionModule({{"x", bx}, {"w", bw}},
                   "    %m = kiln.matmul %x, %w : " + bx + ", " + bw + "\n",
                   {{"m", tensor({4, 512, 384}, "bf16")}}));
  ASSERT_GE(batched.kernels.size(), 1u);
  EXPECT_NE(batched.kernels[0].templateName, "gemm_tma");
}

TEST_F(GemmEmitterTest, TmaStoresTheFirstResultWhenAsked) {
  // By default every lane stores its runs.
  GeneratedFusion runs = emitAndCompile(biasGelu(8192, 4096, 1024, false));
  ASSERT_EQ(runs.kernels.size(), 1u);
  EXPECT_FALSE(flag(runs.kernels[0].source, "TMA_STORE"));
  EXPECT_EQ(tensorMapsOf(runs.launches[0]).size(), 2u);

  CodegenOptions options;
  options.gemmTmaStore = true;
  for (GemmSchedule schedule :
       {GemmSchedule::PingPong, GemmSchedule::Cooperative}) {
    options.gemmSchedule = schedule;
    // Rows and columns that end inside tiles: the copy engine drops the
    // overhang.
    GeneratedFusion stored =
        emitAndCompile(biasGelu(1100, 1000, 1024, false), options);
    ASSERT_EQ(stored.kernels.size(), 1u);
    const GeneratedKernel &kernel = stored.kernels[0];
    EXPECT_TRUE(flag(kernel.source, "TMA_STORE"));
    EXPECT_NE(kernel.source.find("const kiln::tensor_map *o_map;"),
              std::string::npos);
    EXPECT_NE(kernel.source.find("store_run_staged("), std::string::npos);
    EXPECT_NE(kernel.source.find("{&b_map0}, &o_map}"), std::string::npos)
        << kernel.source;
    const LaunchArg &map = stored.launches[0].args.back();
    ASSERT_EQ(map.kind, LaunchArg::Kind::TensorMap);
    EXPECT_TRUE(map.mapsResult);
    EXPECT_EQ(map.index, 0);
    EXPECT_EQ(map.tensorMap->dims, (std::vector<uint64_t>{1000, 1100}));
    EXPECT_EQ(map.tensorMap->strides, (std::vector<uint64_t>{2000}));
    EXPECT_EQ(map.tensorMap->box, (std::vector<uint32_t>{64, 16}));
    EXPECT_EQ(map.tensorMap->swizzleBytes, 128u);
    EXPECT_NE(ptxOf(kernel).find(
                  "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group"),
              std::string::npos);
    EXPECT_NE(ptxOf(kernel).find("cp.async.bulk.wait_group 0"),
              std::string::npos);
  }

  // Two results: the first stored by TMA, the second as runs.
  std::string x = tensor({2048, 1024}, "bf16"), w = tensor({1024, 768}, "bf16");
  std::string y = tensor({2048, 768}, "bf16"), bias = tensor({768}, "bf16");
  std::string pair = "    %m = kiln.matmul %x, %w : " + x + ", " + w + "\n" +
                     "    %s = kiln.add %m, %bias : " + y + ", " + bias + "\n" +
                     "    %g = kiln.gelu %s approximate = tanh : " + y + "\n";
  GeneratedFusion two = emitAndCompile(
      fusionModule({{"x", x}, {"w", w}, {"bias", bias}}, pair,
                   {{"g", y}, {"s", y}}),
      options);
  ASSERT_EQ(two.kernels.size(), 1u);
  EXPECT_TRUE(flag(two.kernels[0].source, "TMA_STORE"));
  EXPECT_NE(two.kernels[0].source.find(
                "kiln::gemm::store_run<1>(p.out1 + r * Config::N + c, res);\n"
                "  }\n"),
            std::string::npos);

  // Not where the first result is wider than the staging (f32), nor for
  // stacked problems (an output each).
  std::string y32 = tensor({2048, 768}, "f32");
  GeneratedFusion wide = emitAndCompile(
      fusionModule({{"x", x}, {"w", w}},
                   "    %m = kiln.matmul %x, %w : " + x + ", " + w + "\n" +
                       "    %f = kiln.cast %m : " + y + " to " + y32 + "\n",
                   {{"f", y32}}),
      options);
  ASSERT_EQ(wide.kernels.size(), 1u);
  EXPECT_FALSE(flag(wide.kernels[0].source, "TMA_STORE"));
  std::string qkv;
  for (const char *name : {"q", "k", "v"})
    qkv += std::string("    %") + name + " = kiln.matmul %x, %w" + name +
           " : " + x + ", " + w + "\n";
  GeneratedFusion grouped = emitAndCompile(
      fusionModule({{"x", x}, {"wq", w}, {"wk", w}, {"wv", w}}, qkv,
                   {{"q", y}, {"k", y}, {"v", y}}),
      options);
  ASSERT_EQ(grouped.kernels.size(), 1u);
  EXPECT_EQ(constant(grouped.kernels[0].source, "GROUPS"), 3);
  EXPECT_FALSE(flag(grouped.kernels[0].source, "TMA_STORE"));
}

TEST_F(GemmEmitterTest, LargeBiasGeluTanhBf16UsesBigMmaSyncTilesElsewhere) {
  CodegenOptions options;
  options.arch = "sm_80";
  for (bool transposeRhs : {false, true}) {
    GeneratedFusion generated =
        emitAndCompile(biasGelu(8192, 4096, 4096, transposeRhs), options);
    ASSERT_EQ(generated.kernels.size(), 1u);
    const std::string &source = generated.kernels[0].source;
    EXPECT_EQ(generated.kernels[0].templateName, "gemm_mma");
    EXPECT_NE(ptxOf(generated.kernels[0])
                  .find("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"),
              std::string::npos);
    EXPECT_NE(source.find("kiln::op::gelu_tanh("), std::string::npos);
    EXPECT_TRUE(flag(source, "A_VEC"));
    EXPECT_TRUE(flag(source, "B_VEC"));
    EXPECT_EQ(flag(source, "B_KMAJOR"), transposeRhs);
    ASSERT_EQ(generated.launches.size(), 1u);
    const GeneratedLaunch &launch = generated.launches[0];
    EXPECT_EQ(launch.grid[0], 64u * 16u);
    EXPECT_EQ(launch.grid[2], 1u);
    EXPECT_EQ(launch.block[0], 256u);
    // 4 stages of A 128x(32+8) and B 256x(32+8) (or 32x(256+8)) bf16.
    EXPECT_EQ(launch.dynamicSharedBytes, transposeRhs
                                             ? 4u * (128 * 40 + 256 * 40) * 2
                                             : 4u * (128 * 40 + 32 * 264) * 2);
    EXPECT_EQ(generated.scratchBytes, 0u);
    EXPECT_FALSE(generated.kernels[0].archSpecific);
  }
}

TEST_F(GemmEmitterTest, WgmmaOnlyWhereItsTilesFit) {
  auto kernelOf = [&](const std::string &module, const char *arch,
                      bool tf32 = false) {
    CodegenOptions options;
    options.arch = arch;
    options.allowTf32 = tf32;
    GeneratedFusion generated = emitAndCompile(module, options);
    return generated.kernels.empty() ? GeneratedKernel{} : generated.kernels[0];
  };
  // Large and aligned: wgmma on sm_90, for bf16 and f16 and every transpose.
  for (const char *element : {"bf16", "f16"})
    for (int transposes = 0; transposes < 4; ++transposes) {
      bool tl = transposes & 1, tr = transposes & 2;
      SCOPED_TRACE(std::string(element) + " transposes " +
                   std::to_string(transposes));
      std::vector<int64_t> lhs = tl ? std::vector<int64_t>{1024, 2048}
                                    : std::vector<int64_t>{2048, 1024};
      std::vector<int64_t> rhs = tr ? std::vector<int64_t>{1536, 1024}
                                    : std::vector<int64_t>{1024, 1536};
      GeneratedKernel kernel = kernelOf(
          matmulModule(lhs, rhs, element, tl, tr, {2048, 1536}), "sm_90");
      EXPECT_TRUE(kernel.archSpecific);
      EXPECT_NE(ptxOf(kernel).find(std::string("p, 1, 1, ") + (tl ? "1" : "0") +
                                   ", " + (tr ? "0" : "1") + ";"),
                std::string::npos);
    }
  std::string aligned = biasGelu(2048, 1024, 1024, false);
  // Other architectures keep mma.sync.
  for (const char *arch : {"sm_80", "sm_89", "sm_100"}) {
    GeneratedKernel kernel = kernelOf(aligned, arch);
    EXPECT_FALSE(kernel.archSpecific) << arch;
    EXPECT_NE(ptxOf(kernel).find("mma.sync.aligned.m16n8k16"),
              std::string::npos)
        << arch;
  }
  // K not a multiple of 8 (no whole 16-byte chunks of A): mma.sync.
  GeneratedKernel unaligned =
      kernelOf(matmulModule({2048, 1020}, {1020, 1024}, "bf16", false, false,
                            {2048, 1024}),
               "sm_90");
  EXPECT_FALSE(unaligned.archSpecific);
  EXPECT_TRUE(flag(unaligned.source, "B_VEC"));
  EXPECT_FALSE(flag(unaligned.source, "A_VEC"));
  // N-major B with N not a multiple of 8: mma.sync.
  EXPECT_FALSE(kernelOf(matmulModule({2048, 1024}, {1024, 1027}, "bf16", false,
                                     false, {2048, 1027}),
                        "sm_90")
                   .archSpecific);
  // Small products: the smaller mma.sync tiles win.
  EXPECT_FALSE(
      kernelOf(matmulModule({64, 64}, {64, 64}, "bf16", false, false, {64, 64}),
               "sm_90")
          .archSpecific);
  // f32, exact or TF32: unchanged.
  std::string f32 = matmulModule({2048, 1024}, {1024, 1024}, "f32", false,
                                 false, {2048, 1024});
  EXPECT_EQ(kernelOf(f32, "sm_90").templateName, "gemm_simt");
  EXPECT_NE(
      ptxOf(kernelOf(f32, "sm_90", true)).find("m16n8k8.row.col.f32.tf32"),
      std::string::npos);
}

TEST_F(GemmEmitterTest, SmallBiasGeluTanhBf16SplitsK) {
  GeneratedFusion generated = emitAndCompile(biasGelu(512, 1024, 4096, true));
  ASSERT_EQ(generated.kernels.size(), 2u);
  ASSERT_EQ(generated.launches.size(), 2u);
  const std::string &source = generated.kernels[0].source;
  int64_t split = constant(source, "SPLIT");
  int64_t bm = constant(source, "BM"), bn = constant(source, "BN");
  EXPECT_GT(split, 1);
  int64_t blocks = ((512 + bm - 1) / bm) * ((1024 + bn - 1) / bn) * split;
  EXPECT_GE(blocks, 100) << "too little parallelism for 132 SMs";
  EXPECT_EQ(generated.launches[0].grid[0] * generated.launches[0].grid[2],
            static_cast<uint64_t>(blocks));
  // The product's blocks take the (tile, split) items in turn, so a device
  // with fewer SMs may run fewer of them; the reduction's grid stays.
  EXPECT_EQ(generated.launches[0].persistentBlocksPerSm, 1u);
  EXPECT_EQ(generated.launches[1].persistentBlocksPerSm, 0u);
  EXPECT_EQ(generated.scratchBytes, 4ull * split * 512 * 1024);
  EXPECT_EQ(generated.launches[1].kernel, 1u);
  EXPECT_EQ(generated.launches[1].block[0], 256u);
  EXPECT_EQ(generated.kernels[1].templateName, "gemm_splitk");
  // 512 x 1024 outputs, four per thread.
  EXPECT_EQ(generated.launches[1].grid[0], 512u);
  EXPECT_NE(generated.kernels[0].name, generated.kernels[1].name);
}

TEST_F(GemmEmitterTest, SineSampleShapesFoldTheBatch) {
  // [4,32,64] x [64,256] + bias, then gelu: the rhs is shared, so the batch
  // is folded into 128 rows.
  std::string x = tensor({4, 32, 64}, "f32"), w = tensor({64, 256}, "f32");
  std::string y = tensor({4, 32, 256}, "f32"), bias = tensor({256}, "f32");
  std::string body = "    %m = kiln.matmul %x, %w : " + x + ", " + w + "\n" +
                     "    %s = kiln.add %m, %bias : " + y + ", " + bias + "\n" +
                     "    %g = kiln.gelu %s : " + y + "\n";
  std::string module =
      fusionModule({{"x", x}, {"w", w}, {"bias", bias}}, body, {{"g", y}});
  for (bool tf32 : {false, true}) {
    CodegenOptions options;
    options.allowTf32 = tf32;
    GeneratedFusion generated = emitAndCompile(module, options);
    ASSERT_GE(generated.kernels.size(), 1u);
    const std::string &source = generated.kernels[0].source;
    EXPECT_EQ(constant(source, "ROWS"), 128);
    EXPECT_EQ(constant(source, "GEMM_BATCH"), 1);
    EXPECT_NE(source.find("kiln::op::gelu("), std::string::npos);
    EXPECT_EQ(ptxOf(generated.kernels[0])
                      .find("mma.sync.aligned.m16n8k8.row.col.f32.tf32") !=
                  std::string::npos,
              tf32);
    EXPECT_EQ(generated.kernels[0].templateName == "gemm_simt", !tf32);
  }
  // The other sample matmuls: [4,32,1] x [1,64], [4,32,64] x [64,1].
  emitAndCompile(
      matmulModule({4, 32, 1}, {1, 64}, "f32", false, false, {4, 32, 64}));
  emitAndCompile(
      matmulModule({4, 32, 64}, {64, 1}, "f32", false, false, {4, 32, 1}));
  emitAndCompile(
      matmulModule({4, 32, 256}, {256, 64}, "f32", false, false, {4, 32, 64}));
}

//===----------------------------------------------------------------------===//
// Types, transposes, tails, batching
//===----------------------------------------------------------------------===//

TEST_F(GemmEmitterTest, EveryTypeAndTransposeWithTails) {
  struct Case {
    std::string element;
    bool tf32;
  };
  for (Case c : {Case{"bf16", false}, Case{"f16", false}, Case{"f32", false},
                 Case{"f32", true}})
    for (bool tl : {false, true})
      for (bool tr : {false, true})
        // Aligned (K, M, N multiples of 8) and unaligned tails.
        for (std::array<int64_t, 3> mnk :
             {std::array<int64_t, 3>{72, 40, 56},
              std::array<int64_t, 3>{77, 45, 53}}) {
          int64_t m = mnk[0], n = mnk[1], k = mnk[2];
          std::vector<int64_t> lhs =
              tl ? std::vector<int64_t>{k, m} : std::vector<int64_t>{m, k};
          std::vector<int64_t> rhs =
              tr ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n};
          CodegenOptions options;
          options.allowTf32 = c.tf32;
          SCOPED_TRACE(c.element + (c.tf32 ? " tf32" : "") +
                       (tl ? " transpose_lhs" : "") +
                       (tr ? " transpose_rhs" : "") +
                       " m=" + std::to_string(m));
          GeneratedFusion generated = emitAndCompile(
              matmulModule(lhs, rhs, c.element, tl, tr, {m, n}), options);
          ASSERT_GE(generated.kernels.size(), 1u);
          const std::string &source = generated.kernels[0].source;
          EXPECT_EQ(flag(source, "A_KMAJOR"), !tl);
          EXPECT_EQ(flag(source, "B_KMAJOR"), tr);
          if (c.element != "f32" || c.tf32) {
            int vec = c.element == "f32" ? 4 : 8;
            EXPECT_EQ(flag(source, "A_VEC"), (tl ? m : k) % vec == 0);
            EXPECT_EQ(flag(source, "B_VEC"), (tr ? k : n) % vec == 0);
          }
        }
}

TEST_F(GemmEmitterTest, BroadcastBatchesWithResidualAndBias) {
  // lhs [2,1,33,48] x rhs [3,48,24] -> [2,3,33,24]; + residual [2,3,33,24],
  // + bias [24], * a [3,1,1] scale, then relu.
  std::string a = tensor({2, 1, 33, 48}, "bf16"),
              b = tensor({3, 48, 24}, "bf16");
  std::string y = tensor({2, 3, 33, 24}, "bf16");
  std::string bias = tensor({24}, "bf16"), scale = tensor({3, 1, 1}, "bf16");
  std::string body = "    %m = kiln.matmul %a, %b : " + a + ", " + b + "\n" +
                     "    %r = kiln.add %res, %m : " + y + ", " + y + "\n" +
                     "    %s = kiln.add %r, %bias : " + y + ", " + bias + "\n" +
                     "    %t = kiln.mul %s, %scale : " + y + ", " + scale +
                     "\n" + "    %u = kiln.relu %t : " + y + "\n";
  GeneratedFusion generated = emitAndCompile(fusionModule(
      {{"a", a}, {"b", b}, {"res", y}, {"bias", bias}, {"scale", scale}}, body,
      {{"u", y}}));
  ASSERT_EQ(generated.kernels.size(), 1u);
  const std::string &source = generated.kernels[0].source;
  EXPECT_EQ(constant(source, "GEMM_BATCH"), 6);
  EXPECT_EQ(constant(source, "ROWS"), 33);
  EXPECT_EQ(generated.launches[0].grid[2], 6u);
  // Output batch b = (i, j) of [2, 3]: lhs at i * 33*48, rhs at j * 48*24.
  EXPECT_NE(source.find("idx lhs_batch(idx b) {\n"
                        "    idx rest = b, off = 0;\n"
                        "    rest /= 3;\n"
                        "    off += (rest % 2) * 1584;\n"),
            std::string::npos)
      << source;
  EXPECT_NE(source.find("idx rhs_batch(idx b) {\n"
                        "    idx rest = b, off = 0;\n"
                        "    off += (rest % 3) * 1152;\n"),
            std::string::npos);
  // The residual is dense (read at the output's own position), the bias
  // follows the column, the scale j = (r / 33) % 3.
  EXPECT_NE(source.find("kiln_load(p.in2[(r * Config::N + c)])"),
            std::string::npos)
      << source;
  EXPECT_NE(source.find("kiln_load(p.in3[c])"), std::string::npos);
  EXPECT_NE(source.find("kiln_load(p.in4[((r / 33) % 3)])"), std::string::npos);
}

TEST_F(GemmEmitterTest, BatchedBothSidesTransposedAndManyBatches) {
  emitAndCompile(matmulModule({5, 7, 24, 40}, {5, 7, 16, 24}, "f16", true, true,
                              {5, 7, 40, 16}));
  // More batches than grid.z allows: the kernel loops over z.
  GeneratedFusion generated = emitAndCompile(matmulModule(
      {70000, 16, 8}, {70000, 8, 16}, "bf16", false, false, {70000, 16, 16}));
  ASSERT_EQ(generated.launches.size(), 1u);
  EXPECT_EQ(generated.launches[0].grid[2], 65535u);
  EXPECT_EQ(generated.kernels[0].templateName, "gemm_mma");
  // A block per tile and batch: not a persistent grid.
  EXPECT_EQ(generated.launches[0].persistentBlocksPerSm, 0u);
}

TEST_F(GemmEmitterTest, EmptyProductsAndEmptyK) {
  GeneratedFusion none = emitAndCompile(
      matmulModule({0, 8}, {8, 16}, "bf16", false, false, {0, 16}));
  EXPECT_TRUE(none.kernels.empty());
  EXPECT_TRUE(none.launches.empty());
  // K = 0: the product is zero, the epilogue still runs.
  GeneratedFusion zeroK = emitAndCompile(
      matmulModule({4, 0}, {0, 16}, "f32", false, false, {4, 16}));
  ASSERT_EQ(zeroK.launches.size(), 1u);
  EXPECT_EQ(constant(zeroK.kernels[0].source, "SPLIT"), 1);
}

//===----------------------------------------------------------------------===//
// Epilogues
//===----------------------------------------------------------------------===//

TEST_F(GemmEmitterTest, EveryEpilogueOp) {
  std::string a = tensor({40, 24}, "bf16"), b = tensor({24, 56}, "bf16");
  std::string y = tensor({40, 56}, "bf16"), row = tensor({56}, "bf16");
  std::vector<std::pair<std::string, std::string>> ops = {
      {"kiln.add %m, %v : " + y + ", " + row, "kiln::op::add(v0, kg_e0_in_0)"},
      {"kiln.sub %m, %v : " + y + ", " + row, "kiln::op::sub(v0, kg_e0_in_0)"},
      {"kiln.mul %v, %m : " + row + ", " + y, "kiln::op::mul(kg_e0_in_0, v0)"},
      {"kiln.div %m, %v : " + y + ", " + row, "kiln::op::div(v0, kg_e0_in_0)"},
      {"kiln.max %m, %v : " + y + ", " + row, "kiln::op::max(v0, kg_e0_in_0)"},
      {"kiln.min %m, %v : " + y + ", " + row, "kiln::op::min(v0, kg_e0_in_0)"},
      {"kiln.neg %m : " + y, "kiln::op::neg(v0)"},
      {"kiln.abs %m : " + y, "kiln::op::abs(v0)"},
      {"kiln.relu %m : " + y, "kiln::op::relu(v0)"},
      {"kiln.exp %m : " + y, "kiln::op::exp(v0)"},
      {"kiln.log %m : " + y, "kiln::op::log(v0)"},
      {"kiln.sqrt %m : " + y, "kiln::op::sqrt(v0)"},
      {"kiln.rsqrt %m : " + y, "kiln::op::rsqrt(v0)"},
      {"kiln.sin %m : " + y, "kiln::op::sin(v0)"},
      {"kiln.cos %m : " + y, "kiln::op::cos(v0)"},
      {"kiln.tanh %m : " + y, "kiln::op::tanh(v0)"},
      {"kiln.sigmoid %m : " + y, "kiln::op::sigmoid(v0)"},
      {"kiln.silu %m : " + y, "kiln::op::silu(v0)"},
      {"kiln.gelu %m : " + y, "kiln::op::gelu(v0)"},
      {"kiln.gelu %m approximate = tanh : " + y, "kiln::op::gelu_tanh(v0)"},
      {"kiln.leaky_relu %m alpha = 2.000000e-01 : " + y,
       "kiln::op::leaky_relu(v0, 0.200000003f)"},
  };
  for (const auto &[op, expected] : ops) {
    SCOPED_TRACE(op);
    std::string body = "    %m = kiln.matmul %a, %b : " + a + ", " + b + "\n" +
                       "    %e = " + op + "\n";
    GeneratedFusion generated = emitAndCompile(
        fusionModule({{"a", a}, {"b", b}, {"v", row}}, body, {{"e", y}}));
    ASSERT_EQ(generated.kernels.size(), 1u);
    const std::string &source = generated.kernels[0].source;
    EXPECT_NE(source.find(expected), std::string::npos) << source;
    // The product and the value are rounded to bf16 as the reference
    // stores them.
    EXPECT_NE(
        source.find("const float v0 = kiln_load(__float2bfloat16_rn(acc))"),
        std::string::npos);
    if (op.find("kiln.abs") == std::string::npos &&
        op.find("kiln.neg") == std::string::npos &&
        op.find("kiln.relu") == std::string::npos &&
        op.find("kiln.max") == std::string::npos &&
        op.find("kiln.min") == std::string::npos) {
      EXPECT_NE(source.find("kiln_round_bf16("), std::string::npos) << source;
    }
  }
}

TEST_F(GemmEmitterTest, MultiResultEpilogueWithCasts) {
  // f16 product + bias -> pre-activation (f16), gelu -> activation cast to
  // f32, and the product itself: three results of two element types.
  std::string a = tensor({3, 50, 64}, "f16"), b = tensor({96, 64}, "f16");
  std::string y = tensor({3, 50, 96}, "f16"), y32 = tensor({3, 50, 96}, "f32");
  std::string bias = tensor({96}, "f16");
  std::string body =
      "    %m = kiln.matmul %a, %b transpose_rhs : " + a + ", " + b + "\n" +
      "    %pre = kiln.add %m, %bias : " + y + ", " + bias + "\n" +
      "    %act = kiln.gelu %pre approximate = tanh : " + y + "\n" +
      "    %wide = kiln.cast %act : " + y + " to " + y32 + "\n";
  GeneratedFusion generated =
      emitAndCompile(fusionModule({{"a", a}, {"b", b}, {"bias", bias}}, body,
                                  {{"pre", y}, {"wide", y32}, {"m", y}}));
  ASSERT_EQ(generated.kernels.size(), 1u);
  const std::string &source = generated.kernels[0].source;
  EXPECT_NE(
      source.find("__half *__restrict__ out0,\n    float *__restrict__ out1,\n"
                  "    __half *__restrict__ out2"),
      std::string::npos)
      << source;
  // The pre-activation rounded to f16, the activation's widening cast
  // exact, the product itself.
  EXPECT_NE(source.find("kiln_round_f16(kiln::op::add(v0, kg_e0_in_0))"),
            std::string::npos)
      << source;
  EXPECT_NE(source.find("const float kg_e0_cast_3 = kg_e0_gelu_2;"),
            std::string::npos);
  EXPECT_NE(source.find("res[0] = kg_e0_add_1;\n    res[1] = kg_e0_cast_3;\n   "
                        " res[2] = v0;"),
            std::string::npos);
  EXPECT_EQ(constant(source, "ROWS"), 150);

  // f32 -> bf16 narrowing cast in an f32 epilogue, on the SIMT path.
  std::string c = tensor({33, 17}, "f32"), d = tensor({17, 9}, "f32");
  std::string z = tensor({33, 9}, "f32"), zb = tensor({33, 9}, "bf16");
  std::string body2 = "    %m = kiln.matmul %c, %d : " + c + ", " + d + "\n" +
                      "    %n = kiln.cast %m : " + z + " to " + zb + "\n";
  GeneratedFusion narrow = emitAndCompile(
      fusionModule({{"c", c}, {"d", d}}, body2, {{"n", zb}, {"m", z}}));
  ASSERT_EQ(narrow.kernels.size(), 1u);
  EXPECT_NE(narrow.kernels[0].source.find("kiln_round_bf16(v0)"),
            std::string::npos)
      << narrow.kernels[0].source;
  // N is odd: no paired stores.
  EXPECT_EQ(narrow.kernels[0].source.find("kiln::gemm::store2(p.out"),
            std::string::npos);
}

TEST_F(GemmEmitterTest, SideValuesAndConstantsInTheEpilogue) {
  // The gradient of a mean squared error fused after the read-out matmul:
  // (p - y) * (1 / 64) with p = x w + b. The negated target is computed per
  // element from its input; splat constants become literals, a dense one a
  // table.
  std::string x = tensor({4, 32, 64}, "f32"), w = tensor({64, 1}, "f32");
  std::string p = tensor({4, 32, 1}, "f32"), b = tensor({1}, "f32");
  std::string body =
      "    %minus = kiln.constant dense<-1.000000e+00> : tensor<f32>\n"
      "    %ny = kiln.mul %y, %minus : " +
      p + ", tensor<f32>\n" + "    %m = kiln.matmul %x, %w : " + x + ", " + w +
      "\n" + "    %p = kiln.add %m, %b : " + p + ", " + b + "\n" +
      "    %d = kiln.add %p, %ny : " + p + ", " + p + "\n" +
      "    %scale = kiln.constant dense<1.562500e-02> : tensor<f32>\n" +
      "    %g = kiln.mul %d, %scale : " + p + ", tensor<f32>\n" +
      "    %steps = kiln.constant dense<[[[1.0]], [[2.0]], [[3.0]], [[4.0]]]> "
      ": tensor<4x1x1xf32>\n" +
      "    %h = kiln.mul %g, %steps : " + p + ", tensor<4x1x1xf32>\n";
  GeneratedFusion generated = emitAndCompile(fusionModule(
      {{"x", x}, {"w", w}, {"b", b}, {"y", p}}, body, {{"p", p}, {"h", p}}));
  ASSERT_EQ(generated.kernels.size(), 1u);
  const std::string &source = generated.kernels[0].source;
  EXPECT_NE(source.find(", -1.0f)"), std::string::npos) << source;
  EXPECT_NE(source.find(", 0.015625f)"), std::string::npos);
  EXPECT_NE(source.find("static __device__ const float kg_e0_const_0[4] = {"),
            std::string::npos);
  // The target at the output's own element; the table along the batch.
  EXPECT_NE(source.find("kiln_load(p.in3[(r * Config::N + c)])"),
            std::string::npos);
  EXPECT_NE(source.find("kg_e0_const_0[(r / 32)]"), std::string::npos);
}

TEST_F(GemmEmitterTest, ProjectionsOfOneInputAreOneGroupedLaunch) {
  // q, k and v of the sine block: three [4, 32, 64] x [64, 64] products of
  // one input in one launch; one of them with a bias. Also bf16, and a
  // small deep bf16 problem whose split-K reduction covers every problem.
  struct Case {
    std::vector<int64_t> lhs, rhs, out;
    std::string element;
    bool transposeLhs;
  };
  for (Case c : {Case{{4, 32, 64}, {64, 64}, {4, 32, 64}, "f32", false},
                 Case{{4, 32, 64}, {64, 64}, {4, 32, 64}, "bf16", false},
                 Case{{128, 64}, {128, 64}, {64, 64}, "f32", true},
                 Case{{96, 1000}, {1000, 40}, {96, 40}, "bf16", false}}) {
    SCOPED_TRACE(c.element + " " + std::to_string(c.lhs[0]));
    std::string a = tensor(c.lhs, c.element), w = tensor(c.rhs, c.element);
    std::string y = tensor(c.out, c.element),
                bias = tensor({c.out.back()}, c.element);
    std::string flags = c.transposeLhs ? " transpose_lhs" : "";
    std::string body;
    for (const char *name : {"q", "k", "v"})
      body += std::string("    %") + name + " = kiln.matmul %a, %w" + name +
              flags + " : " + a + ", " + w + "\n";
    body += "    %kb = kiln.add %k, %bias : " + y + ", " + bias + "\n";
    GeneratedFusion generated = emitAndCompile(fusionModule(
        {{"a", a}, {"wq", w}, {"wk", w}, {"wv", w}, {"bias", bias}}, body,
        {{"q", y}, {"kb", y}, {"v", y}}));
    ASSERT_GE(generated.kernels.size(), 1u);
    const std::string &source = generated.kernels[0].source;
    EXPECT_EQ(constant(source, "GROUPS"), 3);
    int64_t split = constant(source, "SPLIT");
    EXPECT_EQ(generated.launches.size(), split > 1 ? 2u : 1u);
    EXPECT_EQ(
        generated.launches[0].grid[2],
        static_cast<uint32_t>(3 * constant(source, "GEMM_BATCH") * split));
    // The rhs of each problem; the lhs is shared.
    EXPECT_NE(source.find("case 0: return p.in1 + rhs_batch(b);\n"
                          "    case 1: return p.in2 + rhs_batch(b);\n"
                          "    default: return p.in3 + rhs_batch(b);\n"),
              std::string::npos)
        << source;
    EXPECT_NE(source.find("case 1: return p.in0 + lhs_batch(b);"),
              std::string::npos);
    // Stacked rows dispatch to each problem's stores; only problem 1 adds
    // the bias.
    EXPECT_NE(source.find("const idx g = r / Config::OUT_ROWS;"),
              std::string::npos);
    EXPECT_NE(source.find("case 2: store_pair2(p, r, c, acc0, acc1); break;"),
              std::string::npos);
    EXPECT_NE(source.find("kiln_store(p.out1 + r * Config::N + c, res[0]);"),
              std::string::npos);
    EXPECT_NE(source.find("kg_e1_in_0 = kiln_load(p.in4[c])"),
              std::string::npos);
    EXPECT_EQ(source.find("kg_e0_in_"), std::string::npos);
    if (split > 1) {
      EXPECT_EQ(generated.scratchBytes,
                static_cast<uint64_t>(4 * split * 3 * c.out[0] * c.out[1]));
    }
  }
}

TEST_F(GemmEmitterTest, SummedProductsAreOneProductOverTheConcatenatedK) {
  // The gradient of the input of the q, k and v projections: three
  // products added, one launch whose K loop runs over all three (tile kt
  // belongs to problem kt / KT), then the epilogue on the sum. Also
  // bf16 with a K that leaves a tail in every problem, and a small deep
  // bf16 problem that splits K across the problems.
  struct Case {
    std::vector<int64_t> lhs, rhs, out;
    std::string element;
    bool tf32;
  };
  for (Case c : {Case{{4, 32, 64}, {64, 64}, {4, 32, 64}, "f32", false},
                 Case{{4, 32, 64}, {64, 64}, {4, 32, 64}, "f32", true},
                 Case{{100, 70}, {72, 70}, {100, 72}, "bf16", false},
                 Case{{96, 1000}, {40, 1000}, {96, 40}, "bf16", false}}) {
    SCOPED_TRACE(c.element + " " + std::to_string(c.lhs.back()));
    CodegenOptions options;
    options.allowTf32 = c.tf32;
    std::string a = tensor(c.lhs, c.element), w = tensor(c.rhs, c.element);
    std::string y = tensor(c.out, c.element),
                bias = tensor({c.out.back()}, c.element);
    std::string body =
        "    %q = kiln.matmul %dq, %wq transpose_rhs : " + a + ", " + w + "\n" +
        "    %k = kiln.matmul %dk, %wk transpose_rhs : " + a + ", " + w + "\n" +
        "    %s = kiln.add %q, %k : " + y + ", " + y + "\n" +
        "    %v = kiln.matmul %dv, %wv transpose_rhs : " + a + ", " + w + "\n" +
        "    %t = kiln.add %s, %v : " + y + ", " + y + "\n" +
        "    %u = kiln.add %t, %bias : " + y + ", " + bias + "\n";
    GeneratedFusion generated = emitAndCompile(fusionModule({{"dq", a},
                                                             {"wq", w},
                                                             {"dk", a},
                                                             {"wk", w},
                                                             {"dv", a},
                                                             {"wv", w},
                                                             {"bias", bias}},
                                                            body, {{"u", y}}),
                                               options);
    ASSERT_GE(generated.kernels.size(), 1u);
    const std::string &source = generated.kernels[0].source;
    EXPECT_EQ(constant(source, "KSUMS"), 3);
    EXPECT_EQ(constant(source, "GROUPS"), 1);
    int64_t split = constant(source, "SPLIT");
    EXPECT_EQ(generated.launches.size(), split > 1 ? 2u : 1u);
    EXPECT_EQ(generated.launches[0].grid[2],
              static_cast<uint32_t>(constant(source, "GEMM_BATCH") * split));
    // Every K tile of every problem is covered by the splits.
    int64_t kt =
        (c.lhs.back() + constant(source, "BK") - 1) / constant(source, "BK");
    EXPECT_GE(split * constant(source, "KT_PER_SPLIT"), 3 * kt);
    EXPECT_NE(source.find("default: return p.in4 + lhs_batch(b);"),
              std::string::npos)
        << source;
    EXPECT_NE(source.find("case 1: return p.in3 + rhs_batch(b);"),
              std::string::npos);
    // One epilogue, on the sum, with the bias.
    EXPECT_NE(source.find("// the sum of the products, rounded once"),
              std::string::npos);
    EXPECT_EQ(source.find("store_pair1"), std::string::npos);
    EXPECT_NE(source.find("kiln_load(p.in6[c])"), std::string::npos);
  }
  // A product also used besides the sum is not summed.
  std::string a = tensor({8, 16}, "f32"), w = tensor({16, 8}, "f32"),
              y = tensor({8, 8}, "f32");
  EXPECT_FALSE(matches(
      fusionModule({{"a", a}, {"w1", w}, {"w2", w}},
                   "    %p = kiln.matmul %a, %w1 : " + a + ", " + w + "\n" +
                       "    %q = kiln.matmul %a, %w2 : " + a + ", " + w + "\n" +
                       "    %s = kiln.add %p, %q : " + y + ", " + y + "\n",
                   {{"s", y}, {"p", y}})));
}

TEST_F(GemmEmitterTest, ScalarOperandsOfRankZero) {
  std::string a = tensor({64, 32}, "f32"), b = tensor({32, 48}, "f32");
  std::string y = tensor({64, 48}, "f32"), s = "tensor<f32>";
  std::string body = "    %m = kiln.matmul %a, %b : " + a + ", " + b + "\n" +
                     "    %t = kiln.mul %m, %s : " + y + ", " + s + "\n" +
                     "    %u = kiln.sigmoid %t : " + y + "\n";
  GeneratedFusion generated = emitAndCompile(
      fusionModule({{"a", a}, {"b", b}, {"s", s}}, body, {{"u", y}, {"t", y}}));
  ASSERT_EQ(generated.kernels.size(), 1u);
  EXPECT_NE(generated.kernels[0].source.find("kiln_load(p.in2[0])"),
            std::string::npos)
      << generated.kernels[0].source;
}

TEST_F(GemmEmitterTest, IdenticalFusionsGiveIdenticalKernels) {
  std::string module = biasGelu(256, 128, 64, true);
  GeneratedFusion first = emitAndCompile(module);
  GeneratedFusion second = emitAndCompile(module);
  ASSERT_EQ(first.kernels.size(), second.kernels.size());
  EXPECT_EQ(first.kernels[0].name, second.kernels[0].name);
  EXPECT_EQ(first.kernels[0].source, second.kernels[0].source);
  GeneratedFusion other = emitAndCompile(biasGelu(256, 128, 64, false));
  EXPECT_NE(first.kernels[0].name, other.kernels[0].name);
}

/// ptxas's resource report and warnings for `ptx` assembled for `arch`
/// (nvJitLink -verbose).
std::string ptxasReport(const std::string &ptx, const std::string &arch) {
  std::string archOption = "-arch=" + arch;
  const char *options[] = {archOption.c_str(), "-verbose"};
  nvJitLinkHandle handle;
  if (nvJitLinkCreate(&handle, 2, options) != NVJITLINK_SUCCESS)
    return "nvJitLinkCreate failed";
  std::string log;
  if (nvJitLinkAddData(handle, NVJITLINK_INPUT_PTX, ptx.data(), ptx.size(),
                       "kernel.ptx") == NVJITLINK_SUCCESS &&
      nvJitLinkComplete(handle) == NVJITLINK_SUCCESS) {
    size_t size = 0;
    nvJitLinkGetInfoLogSize(handle, &size);
    log.assign(size, '\0');
    if (size)
      nvJitLinkGetInfoLog(handle, log.data());
    size = 0;
    nvJitLinkGetErrorLogSize(handle, &size);
    std::string warnings(size, '\0');
    if (size)
      nvJitLinkGetErrorLog(handle, warnings.data());
    log += warnings;
  } else {
    log = "nvJitLink failed";
  }
  nvJitLinkDestroy(&handle);
  return log;
}

/// A product with a bias, GELU (tanh) and both the pre-activation and the
/// activation as results: the register-heaviest common epilogue.
std::string biasGeluTwoResults(int64_t m, int64_t n, int64_t k,
                               const std::string &element, bool transposeLhs,
                               bool transposeRhs) {
  std::string x =
      transposeLhs ? tensor({k, m}, element) : tensor({m, k}, element);
  std::string w =
      transposeRhs ? tensor({n, k}, element) : tensor({k, n}, element);
  std::string y = tensor({m, n}, element), bias = tensor({n}, element);
  std::string body = "    %m = kiln.matmul %x, %w" +
                     std::string(transposeLhs ? " transpose_lhs" : "") +
                     std::string(transposeRhs ? " transpose_rhs" : "") + " : " +
                     x + ", " + w + "\n" +
                     "    %s = kiln.add %m, %bias : " + y + ", " + bias + "\n" +
                     "    %g = kiln.gelu %s approximate = tanh : " + y + "\n";
  return fusionModule({{"x", x}, {"w", w}, {"bias", bias}}, body,
                      {{"s", y}, {"g", y}});
}

TEST_F(GemmEmitterTest, TileConfigurationsDoNotSpill) {
  struct Case {
    int64_t m, n, k;
    std::string element;
    bool tf32;
  };
  std::set<std::string> seen;
  for (Case c :
       {Case{8192, 4096, 4096, "bf16", false},
        Case{512, 1024, 4096, "bf16", false},
        Case{1024, 512, 512, "f16", false}, Case{256, 512, 512, "bf16", false},
        Case{8192, 4096, 4096, "f32", true}, Case{1024, 512, 512, "f32", true},
        Case{64, 4096, 4096, "f32", true}, Case{4096, 32, 4096, "f32", false},
        Case{4096, 4096, 4096, "f32", false},
        Case{1024, 512, 512, "f32", false}, Case{64, 64, 64, "f32", false},
        Case{96, 40, 1000, "f32", false}, Case{64, 64, 128, "f32", false},
        Case{1024, 1024, 64, "f32", false}, Case{32768, 32, 256, "f32", false}})
    for (const char *arch : {"sm_90", "sm_80"})
      for (int variant = 0; variant < 8; ++variant) {
        // The second half: bf16/f16 on sm_90 with the TMA kernel's
        // cooperative schedule, which the cost model leaves for ping-pong.
        bool cooperative = variant >= 4;
        if (cooperative && (c.element == "f32" || std::string(arch) != "sm_90"))
          continue;
        int transposes = variant % 4;
        bool transposeLhs = transposes & 1, transposeRhs = transposes & 2;
        CodegenOptions options;
        options.arch = arch;
        options.allowTf32 = c.tf32;
        if (cooperative)
          options.gemmSchedule = GemmSchedule::Cooperative;
        FusionOp fusion = parse(biasGeluTwoResults(c.m, c.n, c.k, c.element,
                                                   transposeLhs, transposeRhs));
        ASSERT_TRUE(fusion);
        FailureOr<GeneratedFusion> generated = emitter->emit(fusion, options);
        ASSERT_TRUE(succeeded(generated)) << diagnostics;
        const GeneratedKernel &kernel = generated->kernels[0];
        int64_t slices = constant(kernel.source, "SLICES");
        seen.insert(c.element + (c.tf32 ? "/tf32 " : " ") +
                    (kernel.archSpecific ? "wgmma " : "") +
                    (flag(kernel.source, "PINGPONG") ? "ping-pong " : "") +
                    std::to_string(constant(kernel.source, "BM")) + "x" +
                    std::to_string(constant(kernel.source, "BN")) +
                    (slices > 1 ? "/" + std::to_string(slices) : ""));
        std::string target =
            kernel.archSpecific ? archSpecificTarget(arch) : arch;
        CompiledKernel compiled;
        std::string error;
        ASSERT_TRUE(compileCuda(kernel.source, kernel.name, target, false,
                                compiled, error))
            << error;
        std::string report = ptxasReport(compiled.ptx, target);
        SCOPED_TRACE(std::to_string(c.m) + "x" + std::to_string(c.n) + "x" +
                     std::to_string(c.k) + " " + c.element + " " + arch +
                     " transposes " + std::to_string(transposes) + "\n" +
                     report);
        // sm_80 is a fallback target: its 128x256 mma.sync tile with the
        // element-wise epilogue spills 16 bytes for some layouts (254
        // registers), and the tf32 64x64 tile (three blocks per SM, 168
        // registers) that its 108 SMs make the cost model choose for small
        // problems spills up to 40; the sm_90 kernels must not spill at all.
        std::smatch spill;
        ASSERT_TRUE(std::regex_search(
            report, spill, std::regex(", ([0-9]+) bytes spill stores")));
        int64_t spilled = std::stoll(spill[1]);
        if (std::string(arch) == "sm_90")
          EXPECT_EQ(spilled, 0);
        else
          EXPECT_LE(spilled, 40);
        // ptxas serialises wgmma (and says so) when the accumulators cannot
        // stay in registers across the asynchronous MMAs. nvJitLink
        // assembles as if for linking and ignores setmaxnreg (warning
        // C7504), so for a warp-specialised kernel it reports on registers
        // the cubin does not have: those are checked by check_templates
        // (nvcc's ptxas, as NVRTC assembles them).
        if (kernel.source.find("kiln/gemm_tma.cuh") == std::string::npos) {
          EXPECT_EQ(report.find("wgmma"), std::string::npos);
          EXPECT_EQ(report.find("arning"), std::string::npos);
        }
      }
  // Every tile size the kernels can choose is among them.
  for (const char *config :
       {"bf16 wgmma 128x256", "bf16 wgmma 128x128",
        "bf16 wgmma ping-pong 128x128", "bf16 128x256", "bf16 128x128",
        "bf16 64x64", "f32/tf32 128x128", "f32/tf32 64x128", "f32/tf32 64x64",
        "f32 128x128", "f32 64x64", "f32 32x32", "f32 32x32/4"})
    EXPECT_TRUE(seen.count(config)) << config;
}

//===----------------------------------------------------------------------===//
// Rejections
//===----------------------------------------------------------------------===//

TEST_F(GemmEmitterTest, RejectsWhatItDoesNotGenerate) {
  std::string a = tensor({16, 8}, "f32"), b = tensor({8, 32}, "f32");
  std::string y = tensor({16, 32}, "f32"),
              matmul = "    %m = kiln.matmul %a, %b : " + a + ", " + b + "\n";
  std::vector<Arg> args = {{"a", a}, {"b", b}};
  // Wrong kind.
  EXPECT_FALSE(matches(fusionModule(args, matmul, {{"m", y}}, "pointwise")));
  // An op before the matmul (a prologue).
  EXPECT_FALSE(matches(fusionModule(args,
                                    "    %e = kiln.exp %a : " + a +
                                        "\n    %m = kiln.matmul %e, %b : " + a +
                                        ", " + b + "\n",
                                    {{"m", y}})));
  // An op other than a sum that combines the products of two matmuls.
  EXPECT_FALSE(matches(fusionModule(
      args,
      matmul + "    %m2 = kiln.matmul %a, %b : " + a + ", " + b + "\n" +
          "    %s = kiln.mul %m, %m2 : " + y + ", " + y + "\n",
      {{"s", y}})));
  // Two matmuls of different shapes.
  EXPECT_FALSE(
      matches(fusionModule({{"a", a}, {"b", b}, {"c", tensor({8, 4}, "f32")}},
                           matmul + "    %n = kiln.matmul %a, %c : " + a +
                               ", " + tensor({8, 4}, "f32") + "\n",
                           {{"m", y}, {"n", tensor({16, 4}, "f32")}})));
  // A matmul whose product nothing yields.
  EXPECT_FALSE(matches(fusionModule(
      args, matmul + "    %m2 = kiln.matmul %a, %b : " + a + ", " + b + "\n",
      {{"m", y}})));
  // A value yielded that no matmul computes.
  EXPECT_FALSE(matches(fusionModule(
      {{"a", a}, {"b", b}, {"c", y}},
      matmul + "    %e = kiln.exp %c : " + y + "\n", {{"m", y}, {"e", y}})));
  // A reduction after the matmul.
  EXPECT_FALSE(matches(fusionModule(
      args, matmul + "    %r = kiln.reduce_sum %m dims = [1] : " + y + "\n",
      {{"r", tensor({16}, "f32")}})));
  // Two matmuls.
  EXPECT_FALSE(
      matches(fusionModule({{"a", a}, {"b", b}, {"c", tensor({32, 4}, "f32")}},
                           matmul + "    %n = kiln.matmul %m, %c : " + y +
                               ", " + tensor({32, 4}, "f32") + "\n",
                           {{"n", tensor({16, 4}, "f32")}})));
  // No matmul.
  EXPECT_FALSE(matches(fusionModule(
      {{"c", y}}, "    %e = kiln.exp %c : " + y + "\n", {{"e", y}})));
  // An epilogue operand that widens the result (extra batch dim).
  std::string wide = tensor({2, 16, 32}, "f32");
  EXPECT_FALSE(matches(fusionModule({{"a", a}, {"b", b}, {"c", wide}},
                                    matmul + "    %s = kiln.add %m, %c : " + y +
                                        ", " + wide + "\n",
                                    {{"s", wide}})));
  // A comparison (i1 values) in the epilogue.
  EXPECT_FALSE(matches(fusionModule(
      {{"a", a}, {"b", b}, {"c", y}},
      matmul + "    %s = kiln.compare lt, %m, %c : " + y + ", " + y + "\n",
      {{"s", tensor({16, 32}, "i1")}})));
  // A cast to i32.
  EXPECT_FALSE(matches(fusionModule(args,
                                    matmul + "    %s = kiln.cast %m : " + y +
                                        " to " + tensor({16, 32}, "i32") + "\n",
                                    {{"s", tensor({16, 32}, "i32")}})));
  // No results.
  EXPECT_FALSE(matches("func.func @f(%f0: " + a + ", %f1: " + b +
                       ") {\n"
                       "  kiln.fusion \"gemm\" (%f0, %f1) : (" +
                       a + ", " + b +
                       ") -> () {\n"
                       "  ^bb0(%a: " +
                       a + ", %b: " + b + "):\n" + matmul +
                       "    kiln.yield\n  }\n  return\n}\n"));
  // Yielding an argument.
  EXPECT_FALSE(matches(fusionModule(args, matmul, {{"m", y}, {"a", a}})));
  // And the plain case is accepted.
  EXPECT_TRUE(matches(fusionModule(args, matmul, {{"m", y}})));
}

TEST_F(GemmEmitterTest, RejectsOldArchitecturesWithADiagnostic) {
  FusionOp fusion =
      parse(matmulModule({16, 16}, {16, 16}, "bf16", false, false, {16, 16}));
  ASSERT_TRUE(fusion);
  CodegenOptions options;
  options.arch = "sm_75";
  EXPECT_TRUE(failed(emitter->emit(fusion, options)));
  EXPECT_NE(diagnostics.find("sm_80"), std::string::npos) << diagnostics;
}

TEST_F(GemmEmitterTest, RegistryPicksTheGemmEmitter) {
  FusionOp fusion = parse(biasGelu(64, 64, 64, false));
  ASSERT_TRUE(fusion);
  FailureOr<GeneratedFusion> generated = emitFusion(fusion, CodegenOptions{});
  ASSERT_TRUE(succeeded(generated)) << diagnostics;
  EXPECT_EQ(generated->kernels[0].name.rfind("kiln_gemm_", 0), 0u);
}

//===----------------------------------------------------------------------===//
// Host replay of the kernels' index math
//===----------------------------------------------------------------------===//
//
// The tile order, the shared tiles' shapes and the SIMT thread tiles are the
// functions of kernels/gemm_layout.cuh that the kernels call; the other
// formulas (tile loaders, ldmatrix addresses, fragment and accumulator
// layouts, split-K ranges) follow the templates kernels/gemm_mma.cuh and
// gemm_simt.cuh. The hardware side (what
// ldmatrix and mma.sync return) follows the PTX ISA's fragment tables. The
// replay computes the product of small integer matrices, so the result must
// equal the direct product exactly; shared memory starts as NaN, so a
// fragment that reads padding or a stage that was not filled shows up.

struct Problem {
  int64_t rows, n, k;
  bool aKMajor, bKMajor; // A stored [rows][K]; B stored [N][K]
  bool aVec, bVec;
};

struct Replay {
  int bm, bn, bk;
  int warpsM = 0, warpsN = 0; // tensor cores
  bool tf32 = false;
  int tm = 0, tn = 0; // SIMT
  int split = 1, ktPerSplit = 0;
  int slices = 1; // SIMT K slices (bk is their total depth)

  int threads() const {
    return tm ? (bm / tm) * (bn / tn) * slices : warpsM * warpsN * 32;
  }
};

/// The kernels' grouped tile order (kernels/gemm_layout.cuh), 8 tile rows
/// at a time.
void tileOf(int64_t pid, int64_t tilesM, int64_t tilesN, int64_t &tm,
            int64_t &tn) {
  ::kiln::gemm::grouped_tile<int64_t>(pid, tilesM, tilesN, 8, tm, tn);
}

/// kg_load_tile: rows [r0, r0+R) x cols [c0, c0+C) of a GROWS x GCOLS matrix
/// into s (leading dimension ld); every tile element written exactly once.
void loadTile(std::vector<double> &s, const std::vector<double> &g, int R,
              int C, int ld, int64_t growsTotal, int64_t gcols, int64_t r0,
              int64_t c0, bool vec, int vecElements, int threads) {
  std::vector<int> writes(R * C, 0);
  auto put = [&](int row, int col, double value) {
    ASSERT_LT(row, R);
    ASSERT_LT(col, C);
    s[row * ld + col] = value;
    writes[row * C + col]++;
  };
  if (vec) {
    int perRow = C / vecElements, chunks = R * perRow;
    ASSERT_EQ(chunks % threads, 0);
    ASSERT_EQ(gcols % vecElements, 0);
    for (int tid = 0; tid < threads; ++tid)
      for (int i = 0; i < chunks / threads; ++i) {
        int chunk = tid + i * threads;
        int row = chunk / perRow, col = (chunk % perRow) * vecElements;
        int64_t gr = r0 + row, gc = c0 + col;
        bool valid = gr < growsTotal && gc < gcols;
        for (int e = 0; e < vecElements; ++e)
          put(row, col + e, valid ? g[gr * gcols + gc + e] : 0.0);
      }
  } else {
    ASSERT_EQ(R * C % threads, 0);
    for (int tid = 0; tid < threads; ++tid)
      for (int i = 0; i < R * C / threads; ++i) {
        int e = tid + i * threads, row = e / C, col = e % C;
        int64_t gr = r0 + row, gc = c0 + col;
        put(row, col, gr < growsTotal && gc < gcols ? g[gr * gcols + gc] : 0.0);
      }
  }
  for (int w : writes)
    ASSERT_EQ(w, 1);
}

/// ldmatrix.x4 (optionally .trans) given each lane's row address: reg[lane][i]
/// holds the two b16 elements of matrix i that lane receives.
void ldmatrix(const std::vector<double> &s, const std::array<int, 32> &address,
              bool trans,
              std::array<std::array<std::array<double, 2>, 4>, 32> &reg) {
  for (int lane = 0; lane < 32; ++lane)
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 2; ++j) {
        int row = lane / 4, col = 2 * (lane % 4) + j;
        reg[lane][i][j] = trans ? s[address[8 * i + col] + row]
                                : s[address[8 * i + row] + col];
      }
}

/// Replays the tensor-core kernel on one GEMM (batch 1): returns C.
std::vector<double> replayTensorCore(const Replay &cfg, const Problem &pr,
                                     const std::vector<double> &a,
                                     const std::vector<double> &b) {
  const int vecElements = cfg.tf32 ? 4 : 8, kstep = cfg.tf32 ? 8 : 16;
  const int threads = cfg.threads();
  const int wm = cfg.bm / cfg.warpsM, wn = cfg.bn / cfg.warpsN;
  const int mtN = wm / 16, ntN = wn / 8;
  // The padded shared tiles of kernels/gemm_layout.cuh.
  using namespace ::kiln::gemm;
  const int aRows = mma_tile_rows(pr.aKMajor, cfg.bm, cfg.bk),
            aCols = mma_tile_cols(pr.aKMajor, cfg.bm, cfg.bk);
  const int aLd = mma_tile_ld(pr.aKMajor, cfg.bm, cfg.bk, cfg.tf32);
  const int bRows = mma_tile_rows(pr.bKMajor, cfg.bn, cfg.bk),
            bCols = mma_tile_cols(pr.bKMajor, cfg.bn, cfg.bk);
  const int bLd = mma_tile_ld(pr.bKMajor, cfg.bn, cfg.bk, cfg.tf32);
  EXPECT_EQ(mma_stage_elements(pr.aKMajor, cfg.bm, cfg.bk, cfg.tf32),
            aRows * aLd);
  const int64_t aGRows = pr.aKMajor ? pr.rows : pr.k,
                aGCols = pr.aKMajor ? pr.k : pr.rows;
  const int64_t bGRows = pr.bKMajor ? pr.n : pr.k,
                bGCols = pr.bKMajor ? pr.k : pr.n;
  const int64_t tilesM = (pr.rows + cfg.bm - 1) / cfg.bm,
                tilesN = (pr.n + cfg.bn - 1) / cfg.bn;
  const int kt = static_cast<int>((pr.k + cfg.bk - 1) / cfg.bk);
  const double nan = std::numeric_limits<double>::quiet_NaN();

  std::vector<double> partial(cfg.split * pr.rows * pr.n, nan);
  std::vector<int> stores(cfg.split * pr.rows * pr.n, 0);
  std::vector<int> tileSeen(tilesM * tilesN, 0);
  for (int64_t pid = 0; pid < tilesM * tilesN; ++pid) {
    int64_t tm, tn;
    tileOf(pid, tilesM, tilesN, tm, tn);
    EXPECT_TRUE(tm < tilesM && tn < tilesN);
    tileSeen[tm * tilesN + tn]++;
    const int64_t m0 = tm * cfg.bm, n0 = tn * cfg.bn;
    for (int split = 0; split < cfg.split; ++split) {
      int ktBegin = split * cfg.ktPerSplit;
      int ktEnd = std::min(kt, ktBegin + cfg.ktPerSplit);
      int nk = std::max(0, ktEnd - ktBegin);
      // acc[warp][lane][mt][nt][4]
      std::vector<double> acc(threads / 32 * 32 * mtN * ntN * 4, 0.0);
      auto accAt = [&](int warp, int lane, int mt, int nt, int e) -> double & {
        return acc[(((warp * 32 + lane) * mtN + mt) * ntN + nt) * 4 + e];
      };
      for (int i = 0; i < nk; ++i) {
        int64_t k0 = int64_t(ktBegin + i) * cfg.bk;
        std::vector<double> sA(aRows * aLd, nan), sB(bRows * bLd, nan);
        if (pr.aKMajor)
          loadTile(sA, a, aRows, aCols, aLd, aGRows, aGCols, m0, k0, pr.aVec,
                   vecElements, threads);
        else
          loadTile(sA, a, aRows, aCols, aLd, aGRows, aGCols, k0, m0, pr.aVec,
                   vecElements, threads);
        if (pr.bKMajor)
          loadTile(sB, b, bRows, bCols, bLd, bGRows, bGCols, n0, k0, pr.bVec,
                   vecElements, threads);
        else
          loadTile(sB, b, bRows, bCols, bLd, bGRows, bGCols, k0, n0, pr.bVec,
                   vecElements, threads);
        for (int kk = 0; kk < cfg.bk; kk += kstep)
          for (int warp = 0; warp < threads / 32; ++warp) {
            const int warpM = warp / cfg.warpsN, warpN = warp % cfg.warpsN;
            // Fragments per lane: af[lane][mt][reg][pair],
            // bf[lane][nt][reg][pair].
            std::vector<std::array<std::array<std::array<double, 2>, 4>, 32>>
                af(mtN), bq(ntN / 2);
            for (int mt = 0; mt < mtN; ++mt) {
              int mBase = warpM * wm + mt * 16;
              if (cfg.tf32) {
                for (int lane = 0; lane < 32; ++lane) {
                  int g = lane >> 2, q = lane & 3;
                  for (int r = 0; r < 4; ++r) {
                    int m = mBase + g + (r & 1) * 8, k = kk + q + (r >> 1) * 4;
                    af[mt][lane][r][0] =
                        pr.aKMajor ? sA[m * aLd + k] : sA[k * aLd + m];
                  }
                }
              } else {
                std::array<int, 32> address;
                for (int lane = 0; lane < 32; ++lane) {
                  int q = lane >> 3;
                  address[lane] =
                      pr.aKMajor
                          ? (mBase + (lane & 15)) * aLd + kk + (lane >> 4) * 8
                          : (kk + (q >> 1) * 8 + (lane & 7)) * aLd + mBase +
                                (q & 1) * 8;
                }
                ldmatrix(sA, address, !pr.aKMajor, af[mt]);
              }
            }
            for (int nt = 0; nt < ntN; nt += 2) {
              int nBase = warpN * wn + nt * 8;
              if (cfg.tf32) {
                for (int lane = 0; lane < 32; ++lane) {
                  int g = lane >> 2, q = lane & 3;
                  for (int j = 0; j < 2; ++j)
                    for (int r = 0; r < 2; ++r) {
                      int n = nBase + j * 8 + g, k = kk + q + r * 4;
                      bq[nt / 2][lane][j * 2 + r][0] =
                          pr.bKMajor ? sB[n * bLd + k] : sB[k * bLd + n];
                    }
                }
              } else {
                std::array<int, 32> address;
                for (int lane = 0; lane < 32; ++lane) {
                  int q = lane >> 3;
                  address[lane] =
                      pr.bKMajor ? (nBase + (q >> 1) * 8 + (lane & 7)) * bLd +
                                       kk + (q & 1) * 8
                                 : (kk + (q & 1) * 8 + (lane & 7)) * bLd +
                                       nBase + (q >> 1) * 8;
                }
                ldmatrix(sB, address, !pr.bKMajor, bq[nt / 2]);
              }
            }
            // mma per (mt, nt): assemble the operands from the lanes' fragments
            // as the PTX ISA lays them out, multiply, scatter to accumulators.
            for (int mt = 0; mt < mtN; ++mt)
              for (int nt = 0; nt < ntN; ++nt) {
                std::vector<double> A(16 * kstep, nan), B(kstep * 8, nan);
                for (int lane = 0; lane < 32; ++lane) {
                  int g = lane >> 2, q = lane & 3;
                  // b regs of tile nt: registers (nt % 2) * 2 + {0, 1} of bq.
                  const auto &bl = bq[nt / 2][lane];
                  int b0 = (nt % 2) * 2, b1 = b0 + 1;
                  if (cfg.tf32) {
                    A[g * 8 + q] = af[mt][lane][0][0];
                    A[(g + 8) * 8 + q] = af[mt][lane][1][0];
                    A[g * 8 + q + 4] = af[mt][lane][2][0];
                    A[(g + 8) * 8 + q + 4] = af[mt][lane][3][0];
                    B[q * 8 + g] = bl[b0][0];
                    B[(q + 4) * 8 + g] = bl[b1][0];
                  } else {
                    for (int j = 0; j < 2; ++j) {
                      A[g * 16 + 2 * q + j] = af[mt][lane][0][j];
                      A[(g + 8) * 16 + 2 * q + j] = af[mt][lane][1][j];
                      A[g * 16 + 2 * q + 8 + j] = af[mt][lane][2][j];
                      A[(g + 8) * 16 + 2 * q + 8 + j] = af[mt][lane][3][j];
                      B[(2 * q + j) * 8 + g] = bl[b0][j];
                      B[(2 * q + 8 + j) * 8 + g] = bl[b1][j];
                    }
                  }
                }
                for (int lane = 0; lane < 32; ++lane) {
                  int g = lane >> 2, q = lane & 3;
                  for (int e = 0; e < 4; ++e) {
                    int row = g + (e >> 1) * 8, col = 2 * q + (e & 1);
                    double sum = 0;
                    for (int x = 0; x < kstep; ++x)
                      sum += A[row * kstep + x] * B[x * 8 + col];
                    accAt(warp, lane, mt, nt, e) += sum;
                  }
                }
              }
          }
      }
      // Epilogue: emit_pair per accumulator pair.
      for (int warp = 0; warp < threads / 32; ++warp)
        for (int lane = 0; lane < 32; ++lane) {
          const int warpM = warp / cfg.warpsN, warpN = warp % cfg.warpsN;
          const int g = lane >> 2, q = lane & 3;
          for (int mt = 0; mt < mtN; ++mt)
            for (int half = 0; half < 2; ++half) {
              int64_t row = m0 + warpM * wm + mt * 16 + g + half * 8;
              if (row >= pr.rows)
                continue;
              for (int nt = 0; nt < ntN; ++nt) {
                int64_t c = n0 + warpN * wn + nt * 8 + q * 2;
                for (int j = 0; j < 2; ++j)
                  if (c + j < pr.n) {
                    int64_t at = (split * pr.rows + row) * pr.n + c + j;
                    partial[at] = accAt(warp, lane, mt, nt, half * 2 + j);
                    stores[at]++;
                  }
              }
            }
        }
    }
  }
  for (int seen : tileSeen)
    EXPECT_EQ(seen, 1);
  for (int count : stores)
    EXPECT_EQ(count, 1);
  // The split-K reduction: partials added in split order.
  std::vector<double> c(pr.rows * pr.n);
  for (int64_t i = 0; i < pr.rows * pr.n; ++i) {
    c[i] = partial[i];
    for (int s = 1; s < cfg.split; ++s)
      c[i] += partial[s * pr.rows * pr.n + i];
  }
  return c;
}

/// Replays the SIMT kernel.
std::vector<double> replaySimt(const Replay &cfg, const Problem &pr,
                               const std::vector<double> &a,
                               const std::vector<double> &b) {
  const int tx = cfg.bn / cfg.tn, threads = cfg.threads();
  const int sliceThreads = threads / cfg.slices, sliceK = cfg.bk / cfg.slices;
  EXPECT_EQ(sliceK * cfg.slices, cfg.bk);
  const int ea = cfg.bm * cfg.bk / threads, eb = cfg.bn * cfg.bk / threads;
  EXPECT_EQ(ea * threads, cfg.bm * cfg.bk);
  EXPECT_EQ(eb * threads, cfg.bn * cfg.bk);
  // The thread tiles of kernels/gemm_layout.cuh.
  auto mOf = [&](int ty, int i) {
    return ::kiln::gemm::simt_row_of(cfg.bm, cfg.tm, ty, i);
  };
  auto nOf = [&](int tx, int j) {
    return ::kiln::gemm::simt_row_of(cfg.bn, cfg.tn, tx, j);
  };
  const int64_t tilesM = (pr.rows + cfg.bm - 1) / cfg.bm,
                tilesN = (pr.n + cfg.bn - 1) / cfg.bn;
  const int kt = static_cast<int>((pr.k + cfg.bk - 1) / cfg.bk);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> partial(cfg.split * pr.rows * pr.n, nan);
  std::vector<int> stores(partial.size(), 0);
  for (int64_t pid = 0; pid < tilesM * tilesN; ++pid) {
    int64_t tm, tn;
    tileOf(pid, tilesM, tilesN, tm, tn);
    const int64_t m0 = tm * cfg.bm, n0 = tn * cfg.bn;
    for (int split = 0; split < cfg.split; ++split) {
      int ktBegin = split * cfg.ktPerSplit;
      int nk = std::max(0, std::min(kt, ktBegin + cfg.ktPerSplit) - ktBegin);
      std::vector<double> acc(threads * cfg.tm * cfg.tn, 0.0);
      for (int i = 0; i < nk; ++i) {
        int64_t k0 = int64_t(ktBegin + i) * cfg.bk;
        // sA[k][m], sB[k][n] (+4 padding not needed here), written once each.
        std::vector<double> sA(cfg.bk * cfg.bm, nan), sB(cfg.bk * cfg.bn, nan);
        std::vector<int> wa(sA.size(), 0), wb(sB.size(), 0);
        for (int tid = 0; tid < threads; ++tid) {
          for (int x = 0; x < ea; ++x) {
            int e = tid + x * threads;
            int kl = pr.aKMajor ? e % cfg.bk : e / cfg.bm;
            int ml = pr.aKMajor ? e / cfg.bk : e % cfg.bm;
            int64_t gm = m0 + ml, gk = k0 + kl;
            sA[kl * cfg.bm + ml] =
                gm < pr.rows && gk < pr.k
                    ? a[pr.aKMajor ? gm * pr.k + gk : gk * pr.rows + gm]
                    : 0.0;
            wa[kl * cfg.bm + ml]++;
          }
          for (int x = 0; x < eb; ++x) {
            int e = tid + x * threads;
            int kl = pr.bKMajor ? e % cfg.bk : e / cfg.bn;
            int nl = pr.bKMajor ? e / cfg.bk : e % cfg.bn;
            int64_t gn = n0 + nl, gk = k0 + kl;
            sB[kl * cfg.bn + nl] =
                gn < pr.n && gk < pr.k
                    ? b[pr.bKMajor ? gn * pr.k + gk : gk * pr.n + gn]
                    : 0.0;
            wb[kl * cfg.bn + nl]++;
          }
        }
        for (int w : wa)
          EXPECT_EQ(w, 1);
        for (int w : wb)
          EXPECT_EQ(w, 1);
        for (int tid = 0; tid < threads; ++tid) {
          int slice = tid / sliceThreads, lt = tid % sliceThreads;
          for (int kk = slice * sliceK; kk < (slice + 1) * sliceK; ++kk)
            for (int u = 0; u < cfg.tm; ++u)
              for (int v = 0; v < cfg.tn; ++v)
                acc[(tid * cfg.tm + u) * cfg.tn + v] +=
                    sA[kk * cfg.bm + mOf(lt / tx, u)] *
                    sB[kk * cfg.bn + nOf(lt % tx, v)];
        }
      }
      // Slice 0 adds the other slices' sums in slice order and stores.
      for (int tid = sliceThreads; tid < threads; ++tid)
        for (int x = 0; x < cfg.tm * cfg.tn; ++x)
          acc[(tid % sliceThreads) * cfg.tm * cfg.tn + x] +=
              acc[tid * cfg.tm * cfg.tn + x];
      for (int tid = 0; tid < sliceThreads; ++tid)
        for (int u = 0; u < cfg.tm; ++u) {
          int64_t row = m0 + mOf(tid / tx, u);
          if (row >= pr.rows)
            continue;
          for (int v = 0; v < cfg.tn; v += 2) {
            int64_t c = n0 + nOf(tid % tx, v);
            for (int j = 0; j < 2; ++j)
              if (c + j < pr.n) {
                int64_t at = (split * pr.rows + row) * pr.n + c + j;
                partial[at] = acc[(tid * cfg.tm + u) * cfg.tn + v + j];
                stores[at]++;
              }
          }
        }
    }
  }
  for (int count : stores)
    EXPECT_EQ(count, 1);
  std::vector<double> c(pr.rows * pr.n);
  for (int64_t i = 0; i < pr.rows * pr.n; ++i) {
    c[i] = partial[i];
    for (int s = 1; s < cfg.split; ++s)
      c[i] += partial[s * pr.rows * pr.n + i];
  }
  return c;
}

/// Random small integers in each operand's stored layout, the direct
/// product, and the replay compared.
void checkReplay(const Replay &cfg, Problem pr, std::mt19937 &rng) {
  int vecElements = cfg.tf32 || cfg.tm ? 4 : 8;
  pr.aVec = pr.aVec && (pr.aKMajor ? pr.k : pr.rows) % vecElements == 0;
  pr.bVec = pr.bVec && (pr.bKMajor ? pr.k : pr.n) % vecElements == 0;
  std::uniform_int_distribution<int> dist(-3, 3);
  std::vector<double> a(pr.rows * pr.k), b(pr.k * pr.n);
  for (double &x : a)
    x = dist(rng);
  for (double &x : b)
    x = dist(rng);
  auto at = [&](int64_t m, int64_t k) {
    return pr.aKMajor ? a[m * pr.k + k] : a[k * pr.rows + m];
  };
  auto bt = [&](int64_t k, int64_t n) {
    return pr.bKMajor ? b[n * pr.k + k] : b[k * pr.n + n];
  };
  std::vector<double> got =
      cfg.tm ? replaySimt(cfg, pr, a, b) : replayTensorCore(cfg, pr, a, b);
  int64_t wrong = 0;
  for (int64_t m = 0; m < pr.rows; ++m)
    for (int64_t n = 0; n < pr.n; ++n) {
      double want = 0;
      for (int64_t k = 0; k < pr.k; ++k)
        want += at(m, k) * bt(k, n);
      if (!(got[m * pr.n + n] == want) && wrong++ < 3)
        ADD_FAILURE() << "C[" << m << "][" << n << "] = " << got[m * pr.n + n]
                      << ", want " << want;
    }
  EXPECT_EQ(wrong, 0);
}

TEST(GemmReplay, TensorCoreTilesEveryLayoutWithTails) {
  std::mt19937 rng(7);
  struct Shape {
    int64_t rows, n, k;
    int split;
  };
  // Exact tiles, ragged tails, several K tiles, split K with a short last
  // split.
  for (Replay cfg : {Replay{128, 256, 32, 2, 4}, Replay{128, 128, 32, 2, 4},
                     Replay{64, 128, 32, 2, 2}, Replay{64, 64, 32, 2, 2},
                     Replay{128, 128, 64, 2, 4}})
    for (bool tf32 : {false, true})
      for (Shape shape : {Shape{64, 64, 32, 1}, Shape{131, 75, 72, 1},
                          Shape{70, 264, 200, 3}, Shape{9, 11, 5, 1}})
        for (bool aK : {true, false})
          for (bool bK : {true, false})
            for (bool vec : {true, false}) {
              Replay c = cfg;
              c.tf32 = tf32;
              int kt = static_cast<int>((shape.k + c.bk - 1) / c.bk);
              c.split = shape.split;
              c.ktPerSplit = (kt + c.split - 1) / c.split;
              SCOPED_TRACE(testing::Message()
                           << c.bm << "x" << c.bn << (tf32 ? " tf32" : " b16")
                           << " rows=" << shape.rows << " n=" << shape.n
                           << " k=" << shape.k << " aK=" << aK << " bK=" << bK
                           << " vec=" << vec);
              checkReplay(
                  c, Problem{shape.rows, shape.n, shape.k, aK, bK, vec, vec},
                  rng);
            }
}

TEST(GemmReplay, SimtTilesEveryLayoutWithTails) {
  std::mt19937 rng(11);
  Replay big{128, 128, 8}, mid{64, 64, 8}, small{32, 32, 8}, sliced{32, 32, 32};
  big.tm = big.tn = 8;
  mid.tm = mid.tn = small.tm = small.tn = sliced.tm = sliced.tn = 4;
  sliced.slices = 4;
  for (Replay cfg : {big, mid, small, sliced})
    for (std::array<int64_t, 4> shape :
         {std::array<int64_t, 4>{128, 128, 16, 1},
          std::array<int64_t, 4>{77, 45, 53, 1},
          std::array<int64_t, 4>{150, 9, 70, 4}})
      for (bool aK : {true, false})
        for (bool bK : {true, false}) {
          Replay c = cfg;
          int kt = static_cast<int>((shape[2] + c.bk - 1) / c.bk);
          c.split = static_cast<int>(shape[3]);
          c.ktPerSplit = (kt + c.split - 1) / c.split;
          SCOPED_TRACE(testing::Message() << c.bm << " rows=" << shape[0]
                                          << " aK=" << aK << " bK=" << bK);
          checkReplay(
              c, Problem{shape[0], shape[1], shape[2], aK, bK, false, false},
              rng);
        }
}

TEST_F(GemmEmitterTest, WeightGradientsOverAllRowsSliceKInOneLaunch) {
  // dW = X^T dY over the 128 rows of the sine sample's batch, f32: K slices
  // within the block rather than a split-K pair of launches; replayed.
  for (int64_t n : {64, 1}) {
    GeneratedFusion generated = emitAndCompile(
        matmulModule({128, 64}, {128, n}, "f32", true, false, {64, n}));
    ASSERT_EQ(generated.kernels.size(), 1u);
    ASSERT_EQ(generated.launches.size(), 1u);
    EXPECT_EQ(generated.scratchBytes, 0u);
    const std::string &source = generated.kernels[0].source;
    Replay cfg{static_cast<int>(constant(source, "BM")),
               static_cast<int>(constant(source, "BN")),
               static_cast<int>(constant(source, "BK"))};
    cfg.tm = static_cast<int>(constant(source, "TM"));
    cfg.tn = static_cast<int>(constant(source, "TN"));
    cfg.slices = static_cast<int>(constant(source, "SLICES"));
    cfg.split = static_cast<int>(constant(source, "SPLIT"));
    cfg.ktPerSplit = static_cast<int>(constant(source, "KT_PER_SPLIT"));
    EXPECT_EQ(cfg.slices, 4);
    EXPECT_EQ(cfg.split, 1);
    EXPECT_EQ(generated.launches[0].block[0],
              static_cast<uint32_t>(cfg.threads()));
    std::mt19937 rng(5);
    checkReplay(cfg, Problem{64, n, 128, false, false, false, false}, rng);
  }
}

TEST_F(GemmEmitterTest, ReplaysTheChosenSplitKConfiguration) {
  // The mma.sync configurations the emitter picks for small, deep problems
  // (N a multiple of 4 or odd, so both reduction kernels), replayed.
  CodegenOptions options;
  options.arch = "sm_80";
  for (int64_t n : {40, 41})
    for (bool tr : {false, true}) {
      GeneratedFusion generated =
          emitAndCompile(matmulModule({96, 1000},
                                      tr ? std::vector<int64_t>{n, 1000}
                                         : std::vector<int64_t>{1000, n},
                                      "bf16", false, tr, {96, n}),
                         options);
      ASSERT_EQ(generated.kernels.size(), 2u);
      const std::string &source = generated.kernels[0].source;
      Replay cfg{static_cast<int>(constant(source, "BM")),
                 static_cast<int>(constant(source, "BN")),
                 static_cast<int>(constant(source, "BK")),
                 static_cast<int>(constant(source, "WARPS_M")),
                 static_cast<int>(constant(source, "WARPS_N"))};
      cfg.split = static_cast<int>(constant(source, "SPLIT"));
      cfg.ktPerSplit = static_cast<int>(constant(source, "KT_PER_SPLIT"));
      EXPECT_GT(cfg.split, 1);
      EXPECT_EQ(generated.launches[1].grid[0], n % 4 == 0 ? 4u : 16u);
      std::mt19937 rng(3);
      checkReplay(cfg,
                  Problem{96, n, 1000, true, tr, flag(source, "A_VEC"),
                          flag(source, "B_VEC")},
                  rng);
    }
}

} // namespace
} // namespace mlir::kiln::codegen
