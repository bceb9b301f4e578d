// Tests of the pointwise/optimizer emitter and the ScalarEmitter: fusions are
// parsed from MLIR text (or built from a real apply_update), emitted, and
// every generated kernel is compiled to PTX and an sm_90 cubin. Sources are
// checked for the formulas, the template configurations and functors
// (kernels/pointwise.cuh, kernels/optimizer.cuh) and the launch geometry they
// must have.

#include "codegen/cuda/KernelEmitter.h"
#include "codegen/cuda/KernelRenderer.h"
#include "codegen/cuda/Nvrtc.h"
#include "codegen/cuda/scalar/ScalarEmitter.h"

#include "compiler/training/TrainStep.h"
#include "dialects/kiln/Gradients/GradientUtils.h"
#include "dialects/kiln/IR/KilnDialect.h"
#include "runtime/artifact/launch_limits.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <set>

namespace mlir::kiln::codegen {
namespace {

/// A fusion as text: inputs (types), body lines over %x0.. and yields.
struct FusionSpec {
  std::string kind = "pointwise";
  std::vector<std::string> inputs;
  std::string body;
  std::vector<std::pair<std::string, std::string>> yields; // value, type
};

std::string moduleText(const FusionSpec &spec,
                       const std::string &function = "f") {
  std::string args, argTypes, fusionArgs, blockArgs, results, yields,
      yieldTypes;
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    std::string sep = i ? ", " : "";
    args += sep + "%a" + std::to_string(i) + ": " + spec.inputs[i];
    argTypes += sep + spec.inputs[i];
    fusionArgs += sep + "%a" + std::to_string(i);
    blockArgs += sep + "%x" + std::to_string(i) + ": " + spec.inputs[i];
  }
  std::string returns;
  for (size_t i = 0; i < spec.yields.size(); ++i) {
    std::string sep = i ? ", " : "";
    results += sep + spec.yields[i].second;
    yields += sep + spec.yields[i].first;
    returns += sep + "%r#" + std::to_string(i);
  }
  return "func.func @" + function + "(" + args + ") -> (" + results + ") {\n" +
         "  %r:" + std::to_string(spec.yields.size()) + " = kiln.fusion \"" +
         spec.kind + "\" (" + fusionArgs + ") : (" + argTypes + ") -> (" +
         results + ") {\n  ^bb0(" + blockArgs + "):\n" + spec.body +
         "    kiln.yield " + yields + " : " + results + "\n  }\n  return " +
         returns + " : " + results + "\n}\n";
}

class PointwiseEmitterTest : public ::testing::Test {
protected:
  PointwiseEmitterTest() {
    DialectRegistry registry;
    registry.insert<KilnDialect, func::FuncDialect>();
    registerGradientRules(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    context.getDiagEngine().registerHandler([this](Diagnostic &diag) {
      diagnostics += diag.str() + "\n";
      return success();
    });
    emitter = createPointwiseEmitter();
  }

  FusionOp parse(const std::string &text) {
    modules.push_back(parseSourceString<ModuleOp>(text, &context));
    EXPECT_TRUE(modules.back()) << diagnostics << "\n" << text;
    if (!modules.back())
      return nullptr;
    FusionOp fusion;
    modules.back()->walk([&](FusionOp f) { fusion = f; });
    return fusion;
  }
  FusionOp parse(const FusionSpec &spec) { return parse(moduleText(spec)); }

  /// Emits `fusion`, compiles every kernel to PTX and cubin, and checks that
  /// a second emission is byte-identical.
  GeneratedFusion emitAndCompile(FusionOp fusion) {
    EXPECT_TRUE(fusion);
    if (!fusion)
      return {};
    EXPECT_TRUE(emitter->matches(fusion)) << diagnostics;
    FailureOr<GeneratedFusion> generated =
        emitter->emit(fusion, CodegenOptions());
    EXPECT_TRUE(succeeded(generated)) << diagnostics;
    if (failed(generated))
      return {};
    FailureOr<GeneratedFusion> again = emitter->emit(fusion, CodegenOptions());
    EXPECT_TRUE(succeeded(again));
    EXPECT_EQ(again->kernels.size(), generated->kernels.size());
    for (size_t k = 0; k < generated->kernels.size(); ++k) {
      const GeneratedKernel &kernel = generated->kernels[k];
      if (getenv("KILN_DUMP_KERNELS"))
        llvm::errs() << kernel.source << "\n";
      EXPECT_EQ(kernel.source, again->kernels[k].source);
      EXPECT_EQ(kernel.name, again->kernels[k].name);
      CompiledKernel compiled;
      std::string error;
      EXPECT_TRUE(compileCuda(kernel.source, kernel.name, "sm_90", true,
                              compiled, error))
          << error << "\n"
          << numbered(kernel.source);
      EXPECT_EQ(compiled.log.find("warning"), std::string::npos)
          << compiled.log << "\n"
          << numbered(kernel.source);
      EXPECT_NE(compiled.ptx.find(".entry " + kernel.name), std::string::npos);
      EXPECT_GT(compiled.cubin.size(), 16u);
      // Rendered from a KernelSpec: launch merging may run it as a part.
      EXPECT_FALSE(kernel.part.code.empty());
    }
    for (const GeneratedLaunch &launch : generated->launches) {
      EXPECT_LT(launch.kernel, generated->kernels.size());
      EXPECT_GE(launch.grid[0], 1u);
      EXPECT_LE(launch.block[0], 1024u);
      EXPECT_EQ(launch.block[0] % 32, 0u);
      EXPECT_EQ(launch.dynamicSharedBytes, 0u);
    }
    return *generated;
  }
  GeneratedFusion emitAndCompile(const FusionSpec &spec) {
    return emitAndCompile(parse(spec));
  }

  static std::string numbered(const std::string &source) {
    std::string out;
    int line = 1;
    size_t start = 0;
    while (start < source.size()) {
      size_t end = source.find('\n', start);
      if (end == std::string::npos)
        end = source.size();
      out += std::to_string(line++) + ": " + source.substr(start, end - start) +
             "\n";
      start = end + 1;
    }
    return out;
  }

  MLIRContext context;
  std::string diagnostics;
  std::unique_ptr<KernelEmitter> emitter;
  std::vector<OwningOpRef<ModuleOp>> modules;
};

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

const char *kFloatTypes[] = {"f32", "bf16", "f16"};

//===----------------------------------------------------------------------===//
// Every op, per element type
//===----------------------------------------------------------------------===//

TEST_F(PointwiseEmitterTest, UnaryFloatOpsInEveryFloatType) {
  const std::vector<std::pair<std::string, std::string>> ops = {
      {"exp", "kiln::op::exp("},     {"log", "kiln::op::log("},
      {"sqrt", "kiln::op::sqrt("},   {"rsqrt", "kiln::op::rsqrt("},
      {"sin", "kiln::op::sin("},     {"cos", "kiln::op::cos("},
      {"tanh", "kiln::op::tanh("},   {"sigmoid", "kiln::op::sigmoid("},
      {"silu", "kiln::op::silu("},   {"gelu", "kiln::op::gelu("},
      {"floor", "kiln::op::floor("}, {"ceil", "kiln::op::ceil("},
      {"round", "kiln::op::round("}, {"neg", "kiln::op::neg("},
      {"abs", "kiln::op::abs("},     {"sign", "kiln::op::sign("},
      {"relu", "kiln::op::relu("},   {"erf", "kiln::op::erf("}};
  for (const char *t : kFloatTypes) {
    std::string type = std::string("tensor<7x33x") + t + ">";
    FusionSpec spec;
    spec.inputs = {type};
    for (size_t i = 0; i < ops.size(); ++i) {
      spec.body += "    %" + std::to_string(i) + " = kiln." + ops[i].first +
                   " %x0 : " + type + "\n";
      spec.yields.push_back({"%" + std::to_string(i), type});
    }
    spec.body += "    %g = kiln.gelu %x0 approximate = tanh : " + type + "\n";
    spec.body +=
        "    %l = kiln.leaky_relu %x0 alpha = 2.000000e-01 : " + type + "\n";
    spec.yields.push_back({"%g", type});
    spec.yields.push_back({"%l", type});
    GeneratedFusion g = emitAndCompile(spec);
    ASSERT_EQ(g.kernels.size(), 1u) << t;
    const std::string &src = g.kernels[0].source;
    for (const auto &[op, formula] : ops)
      EXPECT_TRUE(contains(src, formula)) << op << " in " << t << "\n" << src;
    EXPECT_TRUE(contains(src, "kiln::op::gelu_tanh("));
    EXPECT_TRUE(contains(src, "kiln::op::leaky_relu(")) << src;
    EXPECT_TRUE(contains(src, "0.200000003f")) << src; // alpha rounded to f32
    // bf16/f16 results round once per op; f32 never.
    bool narrow = std::string(t) != "f32";
    EXPECT_EQ(contains(src, "kiln_round_bf16(kiln::op::exp("),
              std::string(t) == "bf16");
    EXPECT_EQ(contains(src, "kiln_round_f16(kiln::op::exp("),
              std::string(t) == "f16");
    EXPECT_FALSE(contains(src, "kiln_round_bf16(kiln::op::floor(")); // exact
    // Same-shaped contiguous tensors: vector path, 16 bytes of the narrowest.
    EXPECT_TRUE(contains(src, narrow ? "config<kiln_index, 231, 8>"
                                     : "config<kiln_index, 231, 4>"))
        << src;
    EXPECT_TRUE(contains(src, "template <int V> struct lanes {")) << src;
    EXPECT_EQ(g.launches[0].args.size(), 1u + spec.yields.size());
  }
}

TEST_F(PointwiseEmitterTest, NumericUnaryAndBinaryOpsInI32) {
  FusionSpec spec;
  std::string a = "tensor<5x1x7xi32>", b = "tensor<3x1xi32>",
              r = "tensor<5x3x7xi32>";
  spec.inputs = {a, b};
  spec.body = "    %0 = kiln.neg %x0 : " + a + "\n" +
              "    %1 = kiln.abs %x0 : " + a + "\n" +
              "    %2 = kiln.sign %x0 : " + a + "\n" +
              "    %3 = kiln.relu %x0 : " + a + "\n" +
              "    %4 = kiln.add %x0, %x1 : " + a + ", " + b + "\n" +
              "    %5 = kiln.sub %x0, %x1 : " + a + ", " + b + "\n" +
              "    %6 = kiln.mul %x0, %x1 : " + a + ", " + b + "\n" +
              "    %7 = kiln.div %x0, %x1 : " + a + ", " + b + "\n" +
              "    %8 = kiln.max %x0, %x1 : " + a + ", " + b + "\n" +
              "    %9 = kiln.min %x0, %x1 : " + a + ", " + b + "\n";
  for (int i = 0; i < 4; ++i)
    spec.yields.push_back({"%" + std::to_string(i), a});
  for (int i = 4; i < 10; ++i)
    spec.yields.push_back({"%" + std::to_string(i), r});
  GeneratedFusion g = emitAndCompile(spec);
  ASSERT_EQ(g.kernels.size(), 1u);
  const std::string &src = g.kernels[0].source;
  for (const char *fn :
       {"kiln::op::neg(", "kiln::op::abs(", "kiln::op::sign(",
        "kiln::op::relu(", "kiln::op::add(", "kiln::op::sub(", "kiln::op::mul(",
        "kiln::op::div(", "kiln::op::max(", "kiln::op::min("})
    EXPECT_TRUE(contains(src, fn)) << fn << "\n" << src;
  // Root [5, 3, 7]; the [5, 1, 7] results are stored by the i1 == 0 threads,
  // the [3, 1] operand is read at (i1).
  EXPECT_TRUE(contains(src, "if (i1 == 0) kiln_store(r0 + i0 * 7 + i2,"))
      << src;
  EXPECT_TRUE(contains(src, "kiln_load(a1[i1])")) << src;
  EXPECT_FALSE(contains(src, "kiln_load_vec")) << src;
  EXPECT_EQ(g.launches[0].args.size(), 12u);
}

TEST_F(PointwiseEmitterTest, BinaryOpsBroadcastInEveryFloatType) {
  for (const char *t : kFloatTypes) {
    std::string a = std::string("tensor<4x1x9x") + t + ">";
    std::string b = std::string("tensor<3x1x") + t + ">";
    std::string r = std::string("tensor<4x3x9x") + t + ">";
    FusionSpec spec;
    spec.inputs = {a, b};
    int i = 0;
    for (const char *op : {"add", "sub", "mul", "div", "pow", "max", "min"}) {
      spec.body += "    %" + std::to_string(i) + " = kiln." + op +
                   " %x0, %x1 : " + a + ", " + b + "\n";
      spec.yields.push_back({"%" + std::to_string(i++), r});
    }
    GeneratedFusion g = emitAndCompile(spec);
    ASSERT_EQ(g.kernels.size(), 1u);
    const std::string &src = g.kernels[0].source;
    EXPECT_TRUE(contains(src, "kiln::op::pow(")) << src;
    EXPECT_TRUE(contains(src, "kiln::op::max(")) << src;
    EXPECT_TRUE(contains(src, "kiln::op::min(")) << src;
    // Root coordinates from the flat index, only those used.
    EXPECT_TRUE(contains(src, "const kiln_index i0 = (idx / 27);")) << src;
    EXPECT_TRUE(contains(src, "const kiln_index i1 = (idx / 9) % 3;")) << src;
    EXPECT_TRUE(contains(src, "const kiln_index i2 = idx % 9;")) << src;
    EXPECT_TRUE(contains(src, "kiln_load(a0[(i0) * 9 + i2])")) << src;
  }
}

TEST_F(PointwiseEmitterTest, CompareAndSelectInEveryType) {
  for (const char *t : {"f32", "bf16", "f16", "i32"}) {
    std::string a = std::string("tensor<6x10x") + t + ">";
    std::string b = std::string("tensor<10x") + t + ">";
    std::string m = "tensor<6x10xi1>";
    FusionSpec spec;
    spec.inputs = {a, b};
    int i = 0;
    for (const char *p : {"eq", "ne", "lt", "le", "gt", "ge"}) {
      spec.body += "    %" + std::to_string(i) + " = kiln.compare " + p +
                   ", %x0, %x1 : " + a + ", " + b + "\n";
      spec.yields.push_back({"%" + std::to_string(i++), m});
    }
    spec.body +=
        "    %s = kiln.select %0, %x0, %x1 : " + m + ", " + a + ", " + b + "\n";
    spec.body +=
        "    %sm = kiln.select %2, %1, %3 : " + m + ", " + m + ", " + m + "\n";
    spec.yields.push_back({"%s", a});
    spec.yields.push_back({"%sm", m});
    GeneratedFusion g = emitAndCompile(spec);
    ASSERT_EQ(g.kernels.size(), 1u);
    const std::string &src = g.kernels[0].source;
    for (const char *op : {" == ", " != ", " < ", " <= ", " > ", " >= ", " ? "})
      EXPECT_TRUE(contains(src, op)) << op << "\n" << src;
    EXPECT_TRUE(contains(src, "bool *r0")) << src;
  }
}

TEST_F(PointwiseEmitterTest, CastBetweenEveryPairOfTypes) {
  const char *types[] = {"f32", "bf16", "f16", "i32", "i1"};
  for (const char *from : types) {
    std::string in = std::string("tensor<3x17x") + from + ">";
    FusionSpec spec;
    spec.inputs = {in};
    int i = 0;
    for (const char *to : types) {
      std::string out = std::string("tensor<3x17x") + to + ">";
      spec.body += "    %" + std::to_string(i) + " = kiln.cast %x0 : " + in +
                   " to " + out + "\n";
      spec.yields.push_back({"%" + std::to_string(i++), out});
    }
    GeneratedFusion g = emitAndCompile(spec);
    ASSERT_EQ(g.kernels.size(), 1u);
    const std::string &src = g.kernels[0].source;
    std::string f(from);
    if (f == "f32" || f == "bf16" || f == "f16") {
      EXPECT_TRUE(contains(src, "kiln_float_to_i32(")) << src;
      EXPECT_TRUE(contains(src, " != 0.0f)")) << src;
    }
    if (f == "i32")
      EXPECT_TRUE(contains(src, "kiln_i64_to_bf16(")) << src;
    if (f == "i1")
      EXPECT_TRUE(contains(src, " ? 1.0f : 0.0f)")) << src;
    if (f == "f32")
      EXPECT_TRUE(contains(src, "kiln_round_f16(")) << src;
  }
}

TEST_F(PointwiseEmitterTest, ConstantsAndIota) {
  for (const char *t : {"f32", "bf16", "f16", "i32"}) {
    std::string type = std::string("tensor<2x3x") + t + ">";
    bool isInt = std::string(t) == "i32";
    std::string dense =
        isInt ? "dense<[[1, -2, 3], [4, 5, -2147483648]]>"
              : "dense<[[1.5, -2.0, 0.1], [4.0, 0x7F800000, -0.0]]>";
    if (std::string(t) == "bf16" && !isInt)
      dense = "dense<[[1.5, -2.0, 0.1], [4.0, 0x7F80, -0.0]]>";
    if (std::string(t) == "f16")
      dense = "dense<[[1.5, -2.0, 0.1], [4.0, 0x7C00, -0.0]]>";
    FusionSpec spec;
    spec.inputs = {};
    spec.body = "    %c = kiln.constant " + dense + " : " + type + "\n" +
                "    %s = kiln.constant dense<" + (isInt ? "7" : "0.25") +
                "> : " + type + "\n" + "    %i = kiln.iota dim = 1 : " + type +
                "\n" + "    %0 = kiln.add %c, %s : " + type + ", " + type +
                "\n" + "    %1 = kiln.mul %0, %i : " + type + ", " + type +
                "\n";
    spec.yields = {{"%1", type}, {"%c", type}};
    GeneratedFusion g = emitAndCompile(spec);
    ASSERT_EQ(g.kernels.size(), 1u);
    const std::string &src = g.kernels[0].source;
    EXPECT_TRUE(contains(src, "static __device__ const")) << src;
    EXPECT_EQ(g.launches[0].args.size(), 2u); // no inputs
    if (!isInt) {
      EXPECT_TRUE(contains(src, "0.25f")) << src;
      // With an inf, the table holds bit patterns (-0.0 is 0x80000000).
      EXPECT_TRUE(contains(src, "0x7f800000u, 0x80000000u,")) << src;
      EXPECT_TRUE(contains(src, "__uint_as_float(const_0[idx])")) << src;
    } else {
      EXPECT_TRUE(contains(src, "(-2147483647 - 1)")) << src;
    }
  }
  // i1 constants.
  FusionSpec spec;
  spec.body =
      "    %c = kiln.constant dense<[true, false, true]> : tensor<3xi1>\n"
      "    %s = kiln.constant dense<true> : tensor<3xi1>\n"
      "    %0 = kiln.select %c, %s, %c : tensor<3xi1>, tensor<3xi1>, "
      "tensor<3xi1>\n";
  spec.yields = {{"%0", "tensor<3xi1>"}};
  emitAndCompile(spec);
}

TEST_F(PointwiseEmitterTest, RandomOpsIndexTheirOwnElements) {
  for (const char *t : kFloatTypes) {
    std::string big = std::string("tensor<5x13x") + t + ">";
    std::string row = std::string("tensor<13x") + t + ">";
    FusionSpec spec;
    spec.inputs = {"tensor<i32>", big};
    spec.body = "    %u = kiln.random_uniform seed = -3 stream = 7 offset = "
                "%x0 low = -2.0 "
                "high = 3.0 : " +
                row + "\n" +
                "    %n = kiln.random_normal seed = 42 stream = 1 mean = 0.5 "
                "std = 2.0 : " +
                big + "\n" + "    %s = kiln.add %x1, %u : " + big + ", " + row +
                "\n" + "    %t = kiln.add %s, %n : " + big + ", " + big + "\n";
    spec.yields = {{"%t", big}, {"%u", row}};
    GeneratedFusion g = emitAndCompile(spec);
    ASSERT_EQ(g.kernels.size(), 1u);
    const std::string &src = g.kernels[0].source;
    // Seed read as unsigned 64 bits; the offset from its buffer (hoisted);
    // the [13] tensor indexed by its own flat index (i1), not the root's.
    EXPECT_TRUE(contains(
        src,
        "kiln_random_uniform(0xfffffffffffffffdULL, 7u, (unsigned)(s.in_0), "
        "(unsigned long long)(i1), -2.0f, 3.0f)"))
        << src;
    EXPECT_TRUE(contains(src,
                         "kiln_random_normal(0x000000000000002aULL, 1u, 0u, "
                         "(unsigned long long)(idx), 0.5, 2.0)"))
        << src;
    EXPECT_TRUE(contains(src, "const int in_0 = kiln_load(a0[0]);")) << src;
    EXPECT_TRUE(contains(src, "if (i0 == 0) kiln_store(r1 + i1,")) << src;
    if (std::string(t) == "bf16")
      EXPECT_TRUE(contains(src, "__double2bfloat16(")) << src;
  }
}

TEST_F(PointwiseEmitterTest, IndexRemappingOpsReadFusionInputs) {
  for (const char *t : {"f32", "bf16", "f16", "i32", "i1"}) {
    auto ty = [&](const std::string &shape) {
      return "tensor<" + shape + "x" + t + ">";
    };
    bool isFloat = std::string(t)[0] == 'f' || std::string(t) == "bf16";
    FusionSpec spec;
    spec.inputs = {ty("3x5x4"), ty("4x5x3"), ty("7x10x4"),
                   ty("3x5x1"), ty("60"),    ty("3x5x2")};
    spec.body =
        "    %tr = kiln.transpose %x1 perm = [2, 1, 0] : " + ty("4x5x3") +
        "\n" +
        "    %sl = kiln.slice %x2 start = [1, 0, 0] limit = [7, 10, 4] step = "
        "[2, 2, 1] : " +
        ty("7x10x4") + "\n" +
        "    %fl = kiln.flip %x0 dims = [0, 2] : " + ty("3x5x4") + "\n" +
        "    %pd = kiln.pad %x3 low = [0, 0, 1] high = [0, 0, 2] value = " +
        (isFloat ? "-1.5" : "1.0") + " : " + ty("3x5x1") + "\n" +
        "    %cc = kiln.concat %x3, %x5, %x3 dim = 2 : " + ty("3x5x1") + ", " +
        ty("3x5x2") + ", " + ty("3x5x1") + "\n" +
        "    %rs = kiln.reshape %x4 : " + ty("60") + " -> " + ty("3x5x4") +
        "\n" + "    %tu = kiln.triu %tr diagonal = 1 : " + ty("3x5x4") + "\n" +
        "    %tl = kiln.tril %x0 diagonal = -1 : " + ty("3x5x4") + "\n" +
        "    %bc = kiln.broadcast_to %x3 : " + ty("3x5x1") + " -> " +
        ty("2x3x5x4") + "\n";
    spec.yields = {
        {"%tr", ty("3x5x4")}, {"%sl", ty("3x5x4")}, {"%fl", ty("3x5x4")},
        {"%pd", ty("3x5x4")}, {"%cc", ty("3x5x4")}, {"%rs", ty("3x5x4")},
        {"%tu", ty("3x5x4")}, {"%tl", ty("3x5x4")}, {"%bc", ty("2x3x5x4")}};
    GeneratedFusion g = emitAndCompile(spec);
    ASSERT_EQ(g.kernels.size(), 1u) << t << diagnostics;
    const std::string &src = g.kernels[0].source;
    // Root [2, 3, 5, 4]: the [3, 5, 4] results are stored by i0 == 0.
    EXPECT_TRUE(contains(src, "if (i0 == 0) kiln_store(r0 + ")) << src;
    EXPECT_TRUE(contains(src, "kiln_store(r8 + idx, ")) << src;
  }
}

TEST_F(PointwiseEmitterTest, RemappedIndicesAreTheOpsDefinitions) {
  FusionSpec spec;
  spec.inputs = {"tensor<4x6xf32>", "tensor<9x8xf32>", "tensor<2x3xf32>"};
  spec.body = "    %tr = kiln.transpose %x0 perm = [1, 0] : tensor<4x6xf32>\n"
              "    %sl = kiln.slice %x1 start = [1, 2] limit = [7, 6] step = "
              "[1, 1] : tensor<9x8xf32>\n"
              "    %fl = kiln.flip %x0 dims = [1] : tensor<4x6xf32>\n"
              "    %pd = kiln.pad %x2 low = [1, 0] high = [0, 1] value = 2.5 : "
              "tensor<2x3xf32>\n"
              "    %cc = kiln.concat %x2, %x2 dim = 0 : tensor<2x3xf32>, "
              "tensor<2x3xf32>\n";
  spec.yields = {{"%tr", "tensor<6x4xf32>"},
                 {"%sl", "tensor<6x4xf32>"},
                 {"%fl", "tensor<4x6xf32>"},
                 {"%pd", "tensor<3x4xf32>"},
                 {"%cc", "tensor<4x3xf32>"}};
  // Results of different shapes that do not broadcast to one another: one
  // launch with a loop per shape.
  GeneratedFusion shapes = emitAndCompile(spec);
  ASSERT_EQ(shapes.kernels.size(), 1u);
  EXPECT_TRUE(contains(shapes.kernels[0].source,
                       "kiln::pointwise::multi_tensor<ranges>("));
  EXPECT_TRUE(contains(shapes.kernels[0].source, "// group 3: shape [4, 3]"))
      << shapes.kernels[0].source;
  // Same root for all: check the index formulas.
  spec.yields = {{"%tr", "tensor<6x4xf32>"}, {"%sl", "tensor<6x4xf32>"}};
  spec.body = "    %tr = kiln.transpose %x0 perm = [1, 0] : tensor<4x6xf32>\n"
              "    %sl = kiln.slice %x1 start = [1, 2] limit = [7, 6] step = "
              "[1, 1] : tensor<9x8xf32>\n"
              "    %pd = kiln.pad %x2 low = [4, 0] high = [0, 1] value = 2.5 : "
              "tensor<2x3xf32>\n";
  spec.yields = {{"%tr", "tensor<6x4xf32>"},
                 {"%sl", "tensor<6x4xf32>"},
                 {"%pd", "tensor<6x4xf32>"}};
  GeneratedFusion g = emitAndCompile(spec);
  ASSERT_EQ(g.kernels.size(), 1u);
  const std::string &src = g.kernels[0].source;
  EXPECT_TRUE(contains(src, "kiln_load(a0[(i1) * 6 + i0])")) << src;
  EXPECT_TRUE(contains(src, "kiln_load(a1[((i0 + 1)) * 8 + (i1 + 2)])")) << src;
  EXPECT_TRUE(contains(src, "(((i0 - 4)) >= 0 && (i1) < 3) ? kiln_load(a2[((i0 "
                            "- 4)) * 3 + i1]) : 2.5f)"))
      << src;
}

TEST_F(PointwiseEmitterTest, RopeEmbeddingAndDropout) {
  for (const char *t : kFloatTypes) {
    auto ty = [&](const std::string &shape) {
      return "tensor<" + shape + "x" + t + ">";
    };
    FusionSpec spec;
    spec.inputs = {ty("2x5x3x8"), ty("11x8"), "tensor<2x5x3xi32>",
                   "tensor<i32>"};
    spec.body =
        "    %q = kiln.rope %x0 theta = 5.000000e+05 position_offset = 3 : " +
        ty("2x5x3x8") + "\n" +
        "    %e = kiln.embedding %x1, %x2 : " + ty("11x8") +
        ", tensor<2x5x3xi32>\n" +
        "    %s = kiln.add %q, %e : " + ty("2x5x3x8") + ", " + ty("2x5x3x8") +
        "\n" +
        "    %d = kiln.dropout %s, %x3 rate = 2.500000e-01 seed = 9 stream = 4 "
        ": " +
        ty("2x5x3x8") + "\n";
    spec.yields = {{"%d", ty("2x5x3x8")}, {"%q", ty("2x5x3x8")}};
    GeneratedFusion g = emitAndCompile(spec);
    ASSERT_EQ(g.kernels.size(), 1u);
    const std::string &src = g.kernels[0].source;
    EXPECT_TRUE(
        contains(src, "static __device__ const double rope_freq_0[4] = {"))
        << src;
    // 16-bit results take the approximate sine and cosine.
    EXPECT_TRUE(contains(src, std::string(std::string(t) == "f32"
                                              ? "kiln_rope_sincos("
                                              : "kiln_rope_sincos_approx(") +
                                  "(long long)(i1) + 3LL"))
        << src;
    EXPECT_TRUE(contains(src, " < 11) ? kiln_load(a1[")) << src;
    EXPECT_TRUE(
        contains(src, "0x0000000000000009ULL, 4u, (unsigned)(s.in_0), "
                      "(unsigned long long)(idx), 0.25, 1.3333333333333333)"))
        << src;
    EXPECT_TRUE(contains(src, "1.3333333333333333")) << src;
  }
}

TEST_F(PointwiseEmitterTest, RopesOfOnePositionShareTheirAngles) {
  // q and k rotated in one loop (and the gradient's rope, whose operand is
  // scaled where it is read): one frequency table and one sine and cosine
  // per element for the ropes of equal theta; another theta has its own.
  for (const char *t : kFloatTypes) {
    auto ty = [&](const std::string &shape) {
      return "tensor<" + shape + "x" + t + ">";
    };
    FusionSpec spec;
    spec.inputs = {ty("2x8x4x16"), ty("2x8x4x16"), ty("16")};
    spec.body = "    %q = kiln.rope %x0 : " + ty("2x8x4x16") + "\n" +
                "    %s = kiln.mul %x1, %x2 : " + ty("2x8x4x16") + ", " +
                ty("16") + "\n" + "    %k = kiln.rope %s : " + ty("2x8x4x16") +
                "\n" + "    %o = kiln.rope %x1 theta = 5.000000e+05 : " +
                ty("2x8x4x16") + "\n";
    spec.yields = {{"%q", ty("2x8x4x16")},
                   {"%k", ty("2x8x4x16")},
                   {"%o", ty("2x8x4x16")}};
    GeneratedFusion g = emitAndCompile(spec);
    ASSERT_EQ(g.kernels.size(), 1u) << diagnostics;
    const std::string &src = g.kernels[0].source;
    auto count = [&](const std::string &what) {
      size_t n = 0;
      for (size_t at = src.find(what); at != std::string::npos;
           at = src.find(what, at + 1))
        ++n;
      return n;
    };
    EXPECT_EQ(count("static __device__ const double rope_freq_"), 2u) << src;
    EXPECT_EQ(count("kiln_rope_sincos"), 2u) << src;
    EXPECT_TRUE(contains(src, "rope_0_cos - ")) << src;
  }
}

TEST_F(PointwiseEmitterTest, RopesOfFusionInputsTakeTheVectorPath) {
  // q rotated and k's gradient rotated back: each step loads V elements of
  // the input and V of their rotation partners (D/2 away), and computes
  // both ropes from registers; the inverse flips the sine's sign.
  for (const char *t : kFloatTypes) {
    auto ty = [&](const std::string &shape) {
      return "tensor<" + shape + "x" + t + ">";
    };
    FusionSpec spec;
    spec.inputs = {ty("2x8x4x64"), ty("2x8x4x64")};
    spec.body = "    %q = kiln.rope %x0 : " + ty("2x8x4x64") + "\n" +
                "    %k = kiln.rope %x1 inverse : " + ty("2x8x4x64") + "\n";
    spec.yields = {{"%q", ty("2x8x4x64")}, {"%k", ty("2x8x4x64")}};
    GeneratedFusion g = emitAndCompile(spec);
    ASSERT_EQ(g.kernels.size(), 1u) << diagnostics;
    const std::string &src = g.kernels[0].source;
    int width = std::string(t) == "f32" ? 4 : 8;
    EXPECT_TRUE(contains(g.kernels[0].configuration,
                         "width " + std::to_string(width)))
        << g.kernels[0].configuration;
    EXPECT_TRUE(contains(src, "    f(&lanes<V>::a0_pair, a0, 64);\n"
                              "    f(&lanes<V>::a1_pair, a1, 64);\n"))
        << src;
    EXPECT_TRUE(contains(src, "? kiln_load(l.a0[v]) : kiln_load(l.a0_pair[v])"))
        << src;
    EXPECT_TRUE(contains(src, "rope_0_x0 * rope_0_cos - rope_0_x1 * rope_0_sin"))
        << src;
    EXPECT_TRUE(contains(src, "rope_1_x0 * rope_0_cos + rope_1_x1 * rope_0_sin"))
        << src;
  }
  // A head dim of 8: a step stays inside a half of 4 elements.
  FusionSpec narrow;
  narrow.inputs = {"tensor<2x8x4x8xbf16>"};
  narrow.body = "    %q = kiln.rope %x0 : tensor<2x8x4x8xbf16>\n";
  narrow.yields = {{"%q", "tensor<2x8x4x8xbf16>"}};
  GeneratedFusion g = emitAndCompile(narrow);
  ASSERT_EQ(g.kernels.size(), 1u) << diagnostics;
  EXPECT_TRUE(contains(g.kernels[0].configuration, "width 4"))
      << g.kernels[0].configuration;
  // A rope of a value computed in the fusion reads it at both positions:
  // the scalar loop.
  FusionSpec computed;
  computed.inputs = {"tensor<2x8x4x64xbf16>", "tensor<64xbf16>"};
  computed.body = "    %s = kiln.mul %x0, %x1 : tensor<2x8x4x64xbf16>, "
                  "tensor<64xbf16>\n"
                  "    %q = kiln.rope %s : tensor<2x8x4x64xbf16>\n";
  computed.yields = {{"%q", "tensor<2x8x4x64xbf16>"}};
  g = emitAndCompile(computed);
  ASSERT_EQ(g.kernels.size(), 1u) << diagnostics;
  EXPECT_TRUE(contains(g.kernels[0].configuration, "width 1"))
      << g.kernels[0].configuration;
}

TEST_F(PointwiseEmitterTest, LayoutChainsComputeOperandsAtRemappedPositions) {
  // The backward of rope as autodiff writes it (scale by a sign vector, rope,
  // scale again), a transpose of a computed value, and a reshape of a slice
  // of a flip of one: each one loop that computes the remapped operands
  // where they are read, instead of reading buffers another kernel wrote.
  for (const char *t : kFloatTypes) {
    auto ty = [&](const std::string &shape) {
      return "tensor<" + shape + "x" + t + ">";
    };
    FusionSpec spec;
    spec.inputs = {ty("2x8x4x16"), ty("16"), ty("6x4"), ty("8x6")};
    spec.body = "    %s = kiln.mul %x0, %x1 : " + ty("2x8x4x16") + ", " +
                ty("16") + "\n" + "    %r = kiln.rope %s : " + ty("2x8x4x16") +
                "\n" + "    %g = kiln.mul %r, %x1 : " + ty("2x8x4x16") + ", " +
                ty("16") + "\n" + "    %e = kiln.exp %x2 : " + ty("6x4") +
                "\n" +
                "    %tr = kiln.transpose %e perm = [1, 0] : " + ty("6x4") +
                "\n" + "    %n = kiln.neg %x3 : " + ty("8x6") + "\n" +
                "    %fl = kiln.flip %n dims = [1] : " + ty("8x6") + "\n" +
                "    %sl = kiln.slice %fl start = [0, 1] limit = [8, 5] step = "
                "[2, 1] : " +
                ty("8x6") + "\n" + "    %rs = kiln.reshape %sl : " + ty("4x4") +
                " -> " + ty("16") + "\n" +
                "    %b = kiln.add %g, %rs : " + ty("2x8x4x16") + ", " +
                ty("16") + "\n";
    spec.yields = {{"%b", ty("2x8x4x16")}};
    GeneratedFusion g = emitAndCompile(spec);
    ASSERT_EQ(g.kernels.size(), 1u) << diagnostics;
    const std::string &src = g.kernels[0].source;
    // The rope's element and its partner, each scaled where it is read.
    EXPECT_TRUE(contains(src, "at0_mul_")) << src;
    EXPECT_TRUE(contains(
        src, "kiln_load(a0[(i0) * 512 + (i1) * 64 + (i2) * 16 + rope_1_i])"))
        << src;
    EXPECT_TRUE(contains(
        src,
        "kiln_load(a0[(i0) * 512 + (i1) * 64 + (i2) * 16 + (rope_1_i + 8)])"))
        << src;
    // The reshape's flat position (i3) as coordinates of the slice, then of
    // the flip, then of the negated input.
    EXPECT_TRUE(contains(
        src, "kiln_load(a3[((((i3) / 4)) * 2) * 6 + 5 - ((((i3) % 4) + 1))])"))
        << src;
    EXPECT_FALSE(contains(src, "const float *a2")) << src;
    spec.yields = {{"%tr", ty("4x6")}};
    GeneratedFusion transposed = emitAndCompile(spec);
    ASSERT_EQ(transposed.kernels.size(), 1u) << diagnostics;
    EXPECT_TRUE(
        contains(transposed.kernels[0].source, "kiln_load(a2[(i1) * 4 + i0])"))
        << transposed.kernels[0].source;
    EXPECT_TRUE(contains(transposed.kernels[0].source, "kiln::op::exp("))
        << transposed.kernels[0].source;
  }
}

TEST_F(PointwiseEmitterTest, GathersComputeOperandsOnlyWhereTheyReadThem) {
  // pad, concat and embedding may read positions outside an operand: an
  // operand computed in the fusion is computed in a branch taken only at
  // positions inside it. The gradient of a gate's slices (pads of slices,
  // added), a concat of a buffer and a computed flip of a slice, and an
  // embedding of a constant table at computed indices.
  for (const char *t : {"f32", "bf16", "f16", "i32", "i1"}) {
    auto ty = [&](const std::string &shape) {
      return "tensor<" + shape + "x" + t + ">";
    };
    bool isBool = std::string(t) == "i1";
    FusionSpec pads;
    pads.inputs = {ty("12x3")};
    pads.body =
        "    %s0 = kiln.slice %x0 start = [0, 0] limit = [4, 3] step = [1, 1] "
        ": " + ty("12x3") + "\n" +
        "    %s1 = kiln.slice %x0 start = [4, 0] limit = [12, 3] step = [2, "
        "1] : " + ty("12x3") + "\n" +
        "    %p0 = kiln.pad %s0 low = [4, 0] high = [0, 1] : " + ty("4x3") +
        "\n" +
        "    %p1 = kiln.pad %s1 low = [0, 0] high = [4, 1] value = 1.0 : " +
        ty("4x3") + "\n" +
        (isBool ? "    %sum = kiln.select %p0, %p1, %p0 : " + ty("8x4") + ", " +
                      ty("8x4") + ", " + ty("8x4") + "\n"
                : "    %sum = kiln.add %p0, %p1 : " + ty("8x4") + ", " +
                      ty("8x4") + "\n");
    pads.yields = {{"%sum", ty("8x4")}};
    GeneratedFusion padded = emitAndCompile(pads);
    ASSERT_EQ(padded.kernels.size(), 1u) << t << diagnostics;
    const std::string &src = padded.kernels[0].source;
    // Each slice is computed, from the input, inside its pad's branch.
    EXPECT_TRUE(contains(src, "if (((i0 - 4)) >= 0 && (i1) < 3) {")) << src;
    EXPECT_TRUE(contains(src, "kiln_load(a0[((i0 - 4)) * 3 + i1])")) << src;
    EXPECT_TRUE(contains(src, "if ((i0) < 4 && (i1) < 3) {")) << src;
    EXPECT_TRUE(contains(src, "kiln_load(a0[(((i0) * 2 + 4)) * 3 + i1])"))
        << src;
    EXPECT_TRUE(contains(src, "} else {")) << src;

    FusionSpec concat;
    concat.inputs = {ty("12x3"), ty("4x3")};
    concat.body =
        "    %s1 = kiln.slice %x0 start = [4, 0] limit = [12, 3] step = [2, "
        "1] : " + ty("12x3") + "\n" +
        "    %f = kiln.flip %s1 dims = [1] : " + ty("4x3") + "\n" +
        "    %cc = kiln.concat %x1, %f, %x1 dim = 0 : " + ty("4x3") + ", " +
        ty("4x3") + ", " + ty("4x3") + "\n";
    concat.yields = {{"%cc", ty("12x3")}};
    GeneratedFusion joined = emitAndCompile(concat);
    ASSERT_EQ(joined.kernels.size(), 1u) << t << diagnostics;
    const std::string &csrc = joined.kernels[0].source;
    // Only the middle input is computed, and only in its own branch.
    EXPECT_TRUE(contains(csrc, "if ((i0) < 4) {")) << csrc;
    EXPECT_TRUE(contains(csrc, "} else if ((i0) < 8) {")) << csrc;
    EXPECT_TRUE(contains(
        csrc, "kiln_load(a0[((((i0 - 4)) * 2 + 4)) * 3 + 2 - (i1)])"))
        << csrc;
    EXPECT_TRUE(contains(csrc, "kiln_load(a1[((i0 - 8)) * 3 + i1])")) << csrc;
  }

  for (const char *t : kFloatTypes) {
    auto ty = [&](const std::string &shape) {
      return "tensor<" + shape + "x" + t + ">";
    };
    // Inference: the table is a constant copied into the fusion; the
    // indices are normalised from negative ones (ONNX Gather) where they
    // are read, and constant indices (positions) are a table too.
    FusionSpec spec;
    spec.inputs = {"tensor<2x3xi32>"};
    spec.body =
        "    %tab = kiln.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], "
        "[7.0, 8.0]]> : " + ty("4x2") + "\n" +
        "    %zero = kiln.constant dense<0> : tensor<i32>\n"
        "    %four = kiln.constant dense<4> : tensor<i32>\n"
        "    %neg = kiln.compare lt, %x0, %zero : tensor<2x3xi32>, "
        "tensor<i32>\n"
        "    %up = kiln.add %x0, %four : tensor<2x3xi32>, tensor<i32>\n"
        "    %idx = kiln.select %neg, %up, %x0 : tensor<2x3xi1>, "
        "tensor<2x3xi32>, tensor<2x3xi32>\n"
        "    %e = kiln.embedding %tab, %idx : " + ty("4x2") +
        ", tensor<2x3xi32>\n"
        "    %pos = kiln.constant dense<[[0, 3, 1]]> : tensor<1x3xi32>\n"
        "    %p = kiln.embedding %tab, %pos : " + ty("4x2") +
        ", tensor<1x3xi32>\n"
        "    %s = kiln.add %e, %p : " + ty("2x3x2") + ", " + ty("1x3x2") +
        "\n";
    spec.yields = {{"%s", ty("2x3x2")}};
    GeneratedFusion g = emitAndCompile(spec);
    ASSERT_EQ(g.kernels.size(), 1u) << t << diagnostics;
    const std::string &src = g.kernels[0].source;
    // The table's elements are read where a row is in range; others are NaN.
    EXPECT_TRUE(contains(src, "static __device__ const float")) << src;
    EXPECT_TRUE(contains(src, "if (embedding_")) << src;
    EXPECT_TRUE(contains(src, "_row >= 0 && embedding_")) << src;
    EXPECT_TRUE(contains(src, "_v = __int_as_float(0x7fc00000);")) << src;
  }
}

TEST_F(PointwiseEmitterTest, RankZeroAndZeroElements) {
  FusionSpec spec;
  spec.inputs = {"tensor<f32>", "tensor<bf16>"};
  spec.body = "    %c = kiln.cast %x1 : tensor<bf16> to tensor<f32>\n"
              "    %0 = kiln.mul %x0, %c : tensor<f32>, tensor<f32>\n"
              "    %1 = kiln.exp %0 : tensor<f32>\n"
              "    %2 = kiln.cast %1 : tensor<f32> to tensor<bf16>\n";
  spec.yields = {{"%1", "tensor<f32>"}, {"%2", "tensor<bf16>"}};
  GeneratedFusion g = emitAndCompile(spec);
  ASSERT_EQ(g.launches.size(), 1u);
  EXPECT_EQ(g.launches[0].grid[0], 1u);
  EXPECT_EQ(g.launches[0].block[0], 32u);
  EXPECT_TRUE(contains(g.kernels[0].source, "kiln_store(r0 + idx,"))
      << g.kernels[0].source;

  FusionSpec empty;
  empty.inputs = {"tensor<0x8xf32>"};
  empty.body = "    %0 = kiln.exp %x0 : tensor<0x8xf32>\n";
  empty.yields = {{"%0", "tensor<0x8xf32>"}};
  g = emitAndCompile(empty);
  EXPECT_EQ(g.launches[0].grid[0], 1u);
}

TEST_F(PointwiseEmitterTest, MultiOutputWithBroadcastResultsAndCopies) {
  FusionSpec spec;
  spec.inputs = {"tensor<4x8xbf16>", "tensor<8xf32>", "tensor<f32>"};
  spec.body = "    %c = kiln.cast %x0 : tensor<4x8xbf16> to tensor<4x8xf32>\n"
              "    %0 = kiln.add %c, %x1 : tensor<4x8xf32>, tensor<8xf32>\n"
              "    %1 = kiln.mul %x1, %x2 : tensor<8xf32>, tensor<f32>\n"
              "    %2 = kiln.sqrt %x2 : tensor<f32>\n";
  spec.yields = {{"%0", "tensor<4x8xf32>"},
                 {"%1", "tensor<8xf32>"},
                 {"%2", "tensor<f32>"},
                 {"%x0", "tensor<4x8xbf16>"}};
  GeneratedFusion g = emitAndCompile(spec);
  ASSERT_EQ(g.kernels.size(), 1u);
  const std::string &src = g.kernels[0].source;
  EXPECT_TRUE(contains(src, "if (i0 == 0) kiln_store(r1 + i1,")) << src;
  EXPECT_TRUE(contains(src, "if (i0 == 0 && i1 == 0) kiln_store(r2 + 0,"))
      << src;
  EXPECT_TRUE(contains(src, "kiln_store(r3 + idx,")) << src;
  // The scalars are computed once per thread.
  EXPECT_TRUE(
      contains(src, "// Values with one element, computed once per thread."))
      << src;
  ASSERT_EQ(g.launches[0].args.size(), 7u);
  EXPECT_EQ(g.launches[0].args[0].kind, LaunchArg::Kind::Operand);
  EXPECT_EQ(g.launches[0].args[3].kind, LaunchArg::Kind::Result);
  EXPECT_EQ(g.launches[0].args[6].index, 3);
}

TEST_F(PointwiseEmitterTest, LaunchGeometryAndVectorWidth) {
  FusionSpec spec;
  spec.inputs = {"tensor<1024x1024xbf16>", "tensor<1024x1024xf32>"};
  spec.body = "    %c = kiln.cast %x0 : tensor<1024x1024xbf16> to "
              "tensor<1024x1024xf32>\n"
              "    %0 = kiln.add %c, %x1 : tensor<1024x1024xf32>, "
              "tensor<1024x1024xf32>\n"
              "    %1 = kiln.cast %0 : tensor<1024x1024xf32> to "
              "tensor<1024x1024xbf16>\n";
  spec.yields = {{"%1", "tensor<1024x1024xbf16>"}};
  GeneratedFusion g = emitAndCompile(spec);
  ASSERT_EQ(g.launches.size(), 1u);
  // 2^20 elements, 8 per thread step (bf16 is the narrowest), 256 threads.
  EXPECT_EQ(g.launches[0].block[0], 256u);
  EXPECT_EQ(g.launches[0].grid[0], 512u);
  const std::string &src = g.kernels[0].source;
  EXPECT_TRUE(contains(src, "config<kiln_index, 1048576, 8> config;")) << src;
  EXPECT_TRUE(contains(src, "    f(&lanes<V>::a0, a0);\n"
                            "    f(&lanes<V>::a1, a1);\n  }\n"))
      << src;
  EXPECT_TRUE(contains(src, "    f(&lanes<V>::r0, r0);\n  }\n")) << src;
  EXPECT_TRUE(contains(src, "kiln_load(l.a1[v]);")) << src;
  EXPECT_TRUE(contains(src, "kiln_store(&l.r0[v], ")) << src;
  EXPECT_EQ(g.kernels[0].templateName, "pointwise");
  EXPECT_EQ(g.kernels[0].configuration,
            "1048576 elements, width 8, 512 blocks of 256 threads, index int");
  EXPECT_TRUE(contains(src, "typedef int kiln_index;")) << src;

  // Odd size: a tail; huge: 64-bit indices and a capped grid.
  spec.inputs = {"tensor<40000x32769xbf16>", "tensor<40000x32769xf32>"};
  for (std::string *s : {&spec.body})
    for (size_t at; (at = s->find("1024x1024")) != std::string::npos;)
      s->replace(at, 9, "40000x32769");
  spec.yields = {{"%1", "tensor<40000x32769xbf16>"}};
  g = emitAndCompile(spec);
  EXPECT_TRUE(contains(g.kernels[0].source, "typedef long long kiln_index;"));
  EXPECT_EQ(g.launches[0].grid[0], 4224u);
}

//===----------------------------------------------------------------------===//
// Determinism and names
//===----------------------------------------------------------------------===//

TEST_F(PointwiseEmitterTest, EqualFusionsGiveEqualKernelsAndOthersDiffer) {
  FusionSpec spec;
  spec.inputs = {"tensor<8xf32>"};
  spec.body = "    %0 = kiln.exp %x0 : tensor<8xf32>\n";
  spec.yields = {{"%0", "tensor<8xf32>"}};
  std::string text = moduleText(spec, "f") + moduleText(spec, "g");
  spec.body = "    %0 = kiln.log %x0 : tensor<8xf32>\n";
  text += moduleText(spec, "h");
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
  ASSERT_TRUE(module) << diagnostics;
  std::vector<GeneratedFusion> generated;
  module->walk([&](FusionOp f) { generated.push_back(emitAndCompile(f)); });
  ASSERT_EQ(generated.size(), 3u);
  EXPECT_EQ(generated[0].kernels[0].source, generated[1].kernels[0].source);
  EXPECT_EQ(generated[0].kernels[0].name, generated[1].kernels[0].name);
  EXPECT_NE(generated[0].kernels[0].name, generated[2].kernels[0].name);
  EXPECT_EQ(generated[0].kernels[0].name.rfind("kiln_pointwise_", 0), 0u);
  // A readable header names the fused ops.
  EXPECT_EQ(generated[2].kernels[0].source.rfind(
                "// kiln fusion \"pointwise\": log\n", 0),
            0u)
      << generated[2].kernels[0].source;
}

TEST_F(PointwiseEmitterTest, RegistryPicksThisEmitter) {
  FusionSpec spec;
  spec.inputs = {"tensor<8xf32>"};
  spec.body = "    %0 = kiln.tanh %x0 : tensor<8xf32>\n";
  spec.yields = {{"%0", "tensor<8xf32>"}};
  FusionOp fusion = parse(spec);
  FailureOr<GeneratedFusion> generated = emitFusion(fusion, CodegenOptions());
  ASSERT_TRUE(succeeded(generated)) << diagnostics;
  EXPECT_TRUE(contains(generated->kernels[0].source, "kiln::op::tanh("));
}

//===----------------------------------------------------------------------===//
// Rejections
//===----------------------------------------------------------------------===//

TEST_F(PointwiseEmitterTest, MatchesRejectsWhatItCannotEmit) {
  auto rejects = [&](FusionSpec spec, const std::string &why) {
    FusionOp fusion = parse(spec);
    ASSERT_TRUE(fusion);
    EXPECT_FALSE(emitter->matches(fusion)) << why;
    diagnostics.clear();
    EXPECT_TRUE(failed(emitter->emit(fusion, CodegenOptions()))) << why;
    EXPECT_FALSE(diagnostics.empty()) << why;
  };
  FusionSpec reduce;
  reduce.inputs = {"tensor<4x8xf32>"};
  reduce.body = "    %0 = kiln.reduce_sum %x0 dims = [1] : tensor<4x8xf32>\n";
  reduce.yields = {{"%0", "tensor<4xf32>"}};
  rejects(reduce, "a reduction");

  FusionSpec matmul;
  matmul.inputs = {"tensor<4x8xf32>", "tensor<8x2xf32>"};
  matmul.body =
      "    %0 = kiln.matmul %x0, %x1 : tensor<4x8xf32>, tensor<8x2xf32>\n";
  matmul.yields = {{"%0", "tensor<4x2xf32>"}};
  rejects(matmul, "a matmul");

  FusionSpec softmax;
  softmax.inputs = {"tensor<4x8xf32>"};
  softmax.body = "    %0 = kiln.softmax %x0 dim = 1 : tensor<4x8xf32>\n";
  softmax.yields = {{"%0", "tensor<4x8xf32>"}};
  rejects(softmax, "softmax");

  FusionSpec unrelated;
  unrelated.inputs = {"tensor<4x1xf32>", "tensor<1x8xf32>"};
  unrelated.body = "    %0 = kiln.exp %x0 : tensor<4x1xf32>\n"
                   "    %1 = kiln.exp %x1 : tensor<1x8xf32>\n";
  unrelated.yields = {{"%0", "tensor<4x1xf32>"}, {"%1", "tensor<1x8xf32>"}};

  FusionSpec otherKind = unrelated;
  otherKind.kind = "reduction";
  otherKind.yields = {{"%0", "tensor<4x1xf32>"}};
  rejects(otherKind, "another kind");

  FusionSpec optimizerWithReduction = reduce;
  optimizerWithReduction.kind = "optimizer";
  rejects(optimizerWithReduction, "an optimizer with a reduction");
}

//===----------------------------------------------------------------------===//
// Optimizer: the real apply_update as one multi-tensor kernel
//===----------------------------------------------------------------------===//

/// Moves the body of `function` into a kiln.fusion of `kind`.
FusionOp wrapInFusion(func::FuncOp function, StringRef kind) {
  Block &entry = function.getBody().front();
  auto ret = cast<func::ReturnOp>(entry.getTerminator());
  OpBuilder builder(function.getContext());
  builder.setInsertionPointToStart(&entry);
  auto fusion = builder.create<FusionOp>(
      function.getLoc(), ret.getOperandTypes(), kind, entry.getArguments());
  Block *body = new Block();
  fusion.getBody().push_back(body);
  for (BlockArgument arg : entry.getArguments())
    body->addArgument(arg.getType(), arg.getLoc());
  body->getOperations().splice(body->end(), entry.getOperations(),
                               std::next(fusion->getIterator()),
                               ret->getIterator());
  for (BlockArgument arg : entry.getArguments())
    arg.replaceUsesWithIf(body->getArgument(arg.getArgNumber()),
                          [&](OpOperand &use) {
                            return fusion->isProperAncestor(use.getOwner());
                          });
  builder.setInsertionPointToEnd(body);
  builder.create<YieldOp>(function.getLoc(), ret.getOperands());
  ret->setOperands(fusion.getResults());
  return fusion;
}

constexpr const char *kModel = R"mlir(
func.func @loss(
    %w1: tensor<8x64xbf16> {kiln.param = #kiln.init<xavier>, kiln.name = "w1"},
    %b1: tensor<64xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "b1"},
    %w2: tensor<64x3xf32> {kiln.param = #kiln.init<xavier>, kiln.name = "w2"},
    %s: tensor<f32> {kiln.param = #kiln.init<ones>, kiln.name = "scale"},
    %x: tensor<16x8xbf16> {kiln.name = "x"},
    %y: tensor<16x3xf32> {kiln.name = "y"}) -> tensor<f32> {
  %0 = kiln.matmul %x, %w1 : tensor<16x8xbf16>, tensor<8x64xbf16>
  %c = kiln.cast %0 : tensor<16x64xbf16> to tensor<16x64xf32>
  %1 = kiln.add %c, %b1 : tensor<16x64xf32>, tensor<64xf32>
  %2 = kiln.tanh %1 : tensor<16x64xf32>
  %3 = kiln.matmul %2, %w2 : tensor<16x64xf32>, tensor<64x3xf32>
  %4 = kiln.mul %3, %s : tensor<16x3xf32>, tensor<f32>
  %5 = kiln.mse_loss %4, %y reduction = mean : tensor<16x3xf32>
  return %5 : tensor<f32>
}
)mlir";

TEST_F(PointwiseEmitterTest,
       AdamWUpdateOfFourParametersIsOneMultiTensorKernel) {
  for (OptimizerKind kind : {OptimizerKind::AdamW, OptimizerKind::SGD}) {
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(kModel, &context);
    ASSERT_TRUE(module) << diagnostics;
    TrainStepOptions options;
    options.optimizer.kind = kind;
    options.optimizer.momentum = 0.9;
    options.optimizer.weightDecay = 0.01;
    options.transforms.clipValue = 1.0;
    options.transforms.noiseScale = 0.01;
    ASSERT_TRUE(succeeded(buildTrainingEntries(*module, options)))
        << diagnostics;
    auto update = module->lookupSymbol<func::FuncOp>("apply_update");
    ASSERT_TRUE(update);
    FusionOp fusion = wrapInFusion(update, "optimizer");
    ASSERT_TRUE(succeeded(verify(*module))) << diagnostics;
    // The results have four unrelated shapes: as a pointwise fusion too, it
    // is one kernel with a loop per shape (the same kernel).
    fusion.setKind("pointwise");
    GeneratedFusion asPointwise = emitAndCompile(fusion);
    ASSERT_EQ(asPointwise.kernels.size(), 1u);
    fusion.setKind("optimizer");
    GeneratedFusion g = emitAndCompile(fusion);
    ASSERT_EQ(g.kernels.size(), 1u);
    ASSERT_EQ(g.launches.size(), 1u);
    const std::string &src = g.kernels[0].source;
    // Groups by shape: [8, 64] (w1 and its master and moments), [64], [64, 3]
    // and [] (the scalar parameter), each with its block range.
    EXPECT_TRUE(contains(src, "// group 0: shape [8, 64], 512 elements"))
        << src;
    EXPECT_TRUE(contains(src, "shape [64], 64 elements")) << src;
    EXPECT_TRUE(contains(src, "shape [64, 3], 192 elements")) << src;
    EXPECT_TRUE(contains(src, "shape [], 1 elements")) << src;
    EXPECT_TRUE(contains(src, "typedef kiln::pointwise::block_ranges<0, 1, 2, "
                              "3, 4> ranges;"))
        << src;
    EXPECT_TRUE(contains(src, "kiln::pointwise::multi_tensor<ranges>(")) << src;
    EXPECT_EQ(g.kernels[0].templateName, "optimizer");
    EXPECT_TRUE(contains(src, "kiln_random_normal(")) << src; // gradient noise
    EXPECT_EQ(g.launches[0].grid[0], 4u);
    EXPECT_EQ(g.kernels[0].name.rfind("kiln_optimizer_", 0), 0u);
    // Every input of apply_update that is read, then every result.
    size_t results = 0;
    for (const LaunchArg &arg : g.launches[0].args)
      results += arg.kind == LaunchArg::Kind::Result;
    EXPECT_EQ(results, fusion.getNumResults());
    if (kind == OptimizerKind::AdamW) {
      EXPECT_TRUE(contains(src, "kiln::op::pow(")) << src; // bias corrections
      EXPECT_TRUE(contains(
          src, "// Values with one element, computed once per thread."))
          << src;
    }
  }
}

TEST_F(PointwiseEmitterTest, OptimizerGroupsGetBlocksByTheirSize) {
  FusionSpec spec;
  spec.kind = "optimizer";
  spec.inputs = {"tensor<f32>",           "tensor<1000x1000xf32>",
                 "tensor<1000x1000xf32>", "tensor<333xbf16>",
                 "tensor<333xbf16>",      "tensor<7x5x3xf16>"};
  spec.body =
      "    %0 = kiln.mul %x1, %x0 : tensor<1000x1000xf32>, tensor<f32>\n"
      "    %1 = kiln.sub %x2, %0 : tensor<1000x1000xf32>, "
      "tensor<1000x1000xf32>\n"
      "    %2 = kiln.cast %x0 : tensor<f32> to tensor<bf16>\n"
      "    %3 = kiln.mul %x3, %2 : tensor<333xbf16>, tensor<bf16>\n"
      "    %4 = kiln.sub %x4, %3 : tensor<333xbf16>, tensor<333xbf16>\n"
      "    %5 = kiln.neg %x5 : tensor<7x5x3xf16>\n";
  spec.yields = {{"%1", "tensor<1000x1000xf32>"},
                 {"%4", "tensor<333xbf16>"},
                 {"%5", "tensor<7x5x3xf16>"},
                 {"%0", "tensor<1000x1000xf32>"}};
  GeneratedFusion g = emitAndCompile(spec);
  ASSERT_EQ(g.launches.size(), 1u);
  const std::string &src = g.kernels[0].source;
  // 10^6 f32 elements, 4 per step: 977 blocks of 256; 333 bf16: 1 block.
  EXPECT_TRUE(contains(src, "block_ranges<0, 977, 978, 979> ranges;")) << src;
  EXPECT_EQ(g.kernels[0].configuration,
            "3 groups, widths 4,8,8, 979 blocks of 256 threads, index int");
  EXPECT_EQ(g.launches[0].grid[0], 979u);
  EXPECT_TRUE(contains(
      src, "// group 0: shape [1000, 1000], 1000000 elements, results #0 #3"))
      << src;
}

TEST_F(PointwiseEmitterTest, OptimizerOverTheParameterBudgetSplitsIntoKernels) {
  // 700 parameters in two shapes, p' = p - lr * g: 1 + 3 * 350 pointers per
  // shape group, over the budget of 512, so each group is split and the
  // parts go to kernels of their own (the [4, 3] halves are split further,
  // to keep their vector path in registers).
  FusionSpec spec;
  spec.kind = "optimizer";
  spec.inputs = {"tensor<f32>"};
  for (int i = 0; i < 700; ++i) {
    std::string type = i % 2 ? "tensor<5xf32>" : "tensor<4x3xf32>";
    std::string p = "%x" + std::to_string(1 + 2 * i),
                g = "%x" + std::to_string(2 + 2 * i);
    spec.inputs.push_back(type);
    spec.inputs.push_back(type);
    spec.body += "    %m" + std::to_string(i) + " = kiln.mul " + g +
                 ", %x0 : " + type + ", tensor<f32>\n";
    spec.body += "    %u" + std::to_string(i) + " = kiln.sub " + p + ", %m" +
                 std::to_string(i) + " : " + type + ", " + type + "\n";
    spec.yields.push_back({"%u" + std::to_string(i), type});
  }
  GeneratedFusion g = emitAndCompile(spec);
  ASSERT_GT(g.kernels.size(), 1u);
  ASSERT_EQ(g.launches.size(), g.kernels.size());
  size_t results = 0;
  for (auto [k, launch] : llvm::enumerate(g.launches)) {
    EXPECT_EQ(launch.kernel, k);
    // What one launch passes (the artifact refuses more).
    EXPECT_LE(launch.args.size(), ::kiln::launch_limits::kMaxKernelParams);
    for (const LaunchArg &arg : launch.args)
      results += arg.kind == LaunchArg::Kind::Result;
  }
  EXPECT_EQ(results, 700u); // every result exactly once
  EXPECT_TRUE(contains(g.kernels[0].source,
                       "// kiln fusion \"optimizer\": mul x700, sub x700\n"))
      << g.kernels[0].source.substr(0, 200);
}

TEST_F(PointwiseEmitterTest, ManyTensorsOfOneShapeSplitToStayInRegisters) {
  // 12 f32 parameters of one shape: the vector path of one group would hold
  // 12 * 3 tensors of 4 elements (144 registers), so it is two groups of 6,
  // each with a block range of its own, in one kernel.
  FusionSpec spec;
  spec.kind = "optimizer";
  spec.inputs = {"tensor<f32>"};
  std::string type = "tensor<1024xf32>";
  for (int i = 0; i < 12; ++i) {
    std::string p = "%x" + std::to_string(1 + 2 * i),
                g = "%x" + std::to_string(2 + 2 * i), k = std::to_string(i);
    spec.inputs.push_back(type);
    spec.inputs.push_back(type);
    spec.body += "    %m" + k + " = kiln.mul " + g + ", %x0 : " + type +
                 ", tensor<f32>\n    %u" + k + " = kiln.sub " + p + ", %m" + k +
                 " : " + type + ", " + type + "\n";
    spec.yields.push_back({"%u" + k, type});
  }
  GeneratedFusion g = emitAndCompile(spec);
  ASSERT_EQ(g.kernels.size(), 1u);
  const std::string &src = g.kernels[0].source;
  EXPECT_TRUE(contains(src, "block_ranges<0, 1, 2> ranges;")) << src;
  EXPECT_TRUE(contains(src, "results #0 #1 #2 #3 #4 #5; blocks [0, 1)")) << src;
  EXPECT_EQ(g.launches[0].grid[0], 2u);
}

/// Gives the function's arguments and the fusion's results the resident
/// buffers named (as the memory plan does; "" for none), whole tensors.
void placeInBuffers(FusionOp fusion, ArrayRef<std::string> inputs,
                    ArrayRef<std::string> results) {
  Builder b(fusion.getContext());
  auto slot = [&](const std::string &name, Type type) {
    auto tensor = cast<RankedTensorType>(type);
    int64_t bytes =
        tensor.getNumElements() * tensor.getElementTypeBitWidth() / 8;
    return b.getDictionaryAttr(
        {b.getNamedAttr("buffer", b.getStringAttr(name)),
         b.getNamedAttr("offset", b.getI64IntegerAttr(0)),
         b.getNamedAttr("size", b.getI64IntegerAttr(bytes))});
  };
  auto function = fusion->getParentOfType<func::FuncOp>();
  for (auto [i, name] : llvm::enumerate(inputs))
    if (!name.empty())
      function.setArgAttr(i, "kiln.buffer",
                          slot(name, function.getArgument(i).getType()));
  SmallVector<Attribute> slots;
  for (auto [i, name] : llvm::enumerate(results))
    slots.push_back(name.empty()
                        ? Attribute(b.getDictionaryAttr({}))
                        : Attribute(slot(name, fusion.getResult(i).getType())));
  fusion->setAttr("kiln.buffers", b.getArrayAttr(slots));
}

/// The results of each group of the kernels, from their headers.
std::vector<std::set<unsigned>> groupResults(const GeneratedFusion &g) {
  std::vector<std::set<unsigned>> groups;
  for (const GeneratedKernel &kernel : g.kernels) {
    llvm::StringRef rest = kernel.source;
    for (size_t at = rest.find("// group "); at != llvm::StringRef::npos;
         at = rest.find("// group ", at + 1)) {
      llvm::StringRef line = rest.drop_front(at).split('\n').first;
      llvm::StringRef list = line.split(" results").second.split(';').first;
      std::set<unsigned> results;
      while (!list.empty()) {
        auto [word, tail] = list.ltrim().split(' ');
        unsigned r = 0;
        if (word.consume_front("#") && !word.getAsInteger(10, r))
          results.insert(r);
        list = tail;
      }
      groups.push_back(results);
    }
  }
  return groups;
}

TEST_F(PointwiseEmitterTest, ResultsWrittenOverWhatOthersReadStayInOneGroup) {
  // Twelve parameters of one shape, momentum SGD with the momentum and the
  // parameter updated in place: m' = 0.9 m + g over m, p' = p - lr m' over
  // p. p' is computed from m, which m' overwrites: the two must be computed
  // by the same thread, so a split to keep the vector path in registers may
  // not put them in different groups, whose blocks would read m before or
  // after it is overwritten as they happen to run. The results come m'
  // first, so halving them by number would part every pair.
  FusionSpec spec;
  spec.kind = "optimizer";
  spec.inputs = {"tensor<f32>"};
  std::vector<std::string> inputBuffers = {""}, resultBuffers;
  const std::string type = "tensor<1024xf32>";
  std::string updates;
  for (int i = 0; i < 12; ++i) {
    std::string k = std::to_string(i), g = "%x" + std::to_string(1 + 3 * i),
                m = "%x" + std::to_string(2 + 3 * i),
                p = "%x" + std::to_string(3 + 3 * i);
    for (const char *role : {"g", "m", "p"}) {
      spec.inputs.push_back(type);
      inputBuffers.push_back(role == std::string("g") ? "" : role + k);
    }
    spec.body += "    %s" + k + " = kiln.mul " + m + ", %x0 : " + type +
                 ", tensor<f32>\n    %m" + k + " = kiln.add %s" + k + ", " +
                 g + " : " + type + ", " + type + "\n    %l" + k +
                 " = kiln.mul %m" + k + ", %x0 : " + type + ", tensor<f32>\n";
    updates += "    %p" + k + " = kiln.sub " + p + ", %l" + k + " : " + type +
               ", " + type + "\n";
    spec.yields.push_back({"%m" + k, type});
    resultBuffers.push_back("m" + k);
  }
  spec.body += updates;
  for (int i = 0; i < 12; ++i) {
    spec.yields.push_back({"%p" + std::to_string(i), type});
    resultBuffers.push_back("p" + std::to_string(i));
  }
  FusionOp fusion = parse(spec);
  ASSERT_TRUE(fusion);
  placeInBuffers(fusion, inputBuffers, resultBuffers);
  GeneratedFusion g = emitAndCompile(fusion);
  std::vector<std::set<unsigned>> groups = groupResults(g);
  ASSERT_GT(groups.size(), 1u) << "the split this test is about did not happen";
  for (unsigned i = 0; i < 12; ++i) {
    int together = 0;
    for (const std::set<unsigned> &group : groups)
      together += group.count(i) && group.count(12 + i);
    EXPECT_EQ(together, 1) << "m" << i << "' and p" << i << "' are apart";
  }
}

TEST_F(PointwiseEmitterTest, SharedStateWrittenInPlaceGoesInALaterKernel) {
  // A scale shared by every update and updated in place (as the dynamic
  // loss scale's counters are): the parameters' group reads it, so the
  // scalar group that overwrites it runs in a kernel after theirs.
  FusionSpec spec;
  spec.kind = "optimizer";
  spec.inputs = {"tensor<f32>", "tensor<1024xf32>", "tensor<1024xf32>"};
  spec.body = "    %0 = kiln.mul %x2, %x0 : tensor<1024xf32>, tensor<f32>\n"
              "    %1 = kiln.sub %x1, %0 : tensor<1024xf32>, tensor<1024xf32>\n"
              "    %2 = kiln.add %x0, %x0 : tensor<f32>, tensor<f32>\n";
  spec.yields = {{"%1", "tensor<1024xf32>"}, {"%2", "tensor<f32>"}};
  FusionOp fusion = parse(spec);
  ASSERT_TRUE(fusion);
  placeInBuffers(fusion, {"scale", "p", ""}, {"p", "scale"});
  GeneratedFusion g = emitAndCompile(fusion);
  ASSERT_EQ(g.kernels.size(), 2u);
  ASSERT_EQ(g.launches.size(), 2u);
  EXPECT_TRUE(contains(g.kernels[g.launches[0].kernel].source, "results #0;"))
      << g.kernels[g.launches[0].kernel].source;
  EXPECT_TRUE(contains(g.kernels[g.launches[1].kernel].source, "results #1;"))
      << g.kernels[g.launches[1].kernel].source;

  // Without buffers (no plan) nothing is written in place: one kernel.
  GeneratedFusion unplaced = emitAndCompile(spec);
  EXPECT_EQ(unplaced.kernels.size(), 1u);
}

TEST_F(PointwiseEmitterTest, ABroadcastResultWrittenOverAnInputIsRefused) {
  // One root [1024]: every thread reads the scale s in its prologue while
  // the thread of element 0 writes s' over it.
  FusionSpec spec;
  spec.inputs = {"tensor<f32>", "tensor<1024xf32>"};
  spec.body = "    %0 = kiln.mul %x1, %x0 : tensor<1024xf32>, tensor<f32>\n"
              "    %1 = kiln.add %x0, %x0 : tensor<f32>, tensor<f32>\n";
  spec.yields = {{"%0", "tensor<1024xf32>"}, {"%1", "tensor<f32>"}};
  FusionOp fusion = parse(spec);
  ASSERT_TRUE(fusion);
  placeInBuffers(fusion, {"s", ""}, {"", "s"});
  EXPECT_TRUE(failed(emitter->emit(fusion, CodegenOptions())));
  EXPECT_TRUE(contains(diagnostics, "has fewer elements than its kernel's "
                                    "root and is written over an input"))
      << diagnostics;
}

TEST_F(PointwiseEmitterTest, ABroadcastResultMayOverwriteWhatOnlyItReads) {
  // A loss's sum beside its gradient (cross entropy plus a mean squared
  // error): the scalar l' = a + b is written over a, which no element of
  // the [12x10] result reads, so the one thread that stores l' is the only
  // one whose reading of a matters.
  FusionSpec spec;
  spec.inputs = {"tensor<12x10xf32>", "tensor<f32>", "tensor<f32>"};
  spec.body = "    %0 = kiln.add %x1, %x2 : tensor<f32>, tensor<f32>\n"
              "    %1 = kiln.mul %x0, %x0 : tensor<12x10xf32>, "
              "tensor<12x10xf32>\n";
  spec.yields = {{"%0", "tensor<f32>"}, {"%1", "tensor<12x10xf32>"}};
  FusionOp fusion = parse(spec);
  ASSERT_TRUE(fusion);
  placeInBuffers(fusion, {"", "a", ""}, {"a", ""});
  GeneratedFusion g = emitAndCompile(fusion);
  EXPECT_EQ(g.kernels.size(), 1u) << diagnostics;
}

TEST_F(PointwiseEmitterTest, PointwiseAndOptimizerKernelsMergeAsParts) {
  // A vector-path kernel, a broadcast kernel and a multi-tensor kernel run
  // side by side as parts of one merged kernel (LaunchMerging.h).
  FusionSpec vector;
  vector.inputs = {"tensor<4096xbf16>"};
  vector.body = "    %0 = kiln.silu %x0 : tensor<4096xbf16>\n";
  vector.yields = {{"%0", "tensor<4096xbf16>"}};
  FusionSpec broadcast;
  broadcast.inputs = {"tensor<4x8xf32>", "tensor<f32>"};
  broadcast.body = "    %0 = kiln.mul %x0, %x1 : tensor<4x8xf32>, tensor<f32>\n"
                   "    %1 = kiln.exp %x1 : tensor<f32>\n";
  broadcast.yields = {{"%0", "tensor<4x8xf32>"}, {"%1", "tensor<f32>"}};
  FusionSpec groups;
  groups.kind = "optimizer";
  groups.inputs = {"tensor<64xf32>", "tensor<3x5xf16>"};
  groups.body = "    %0 = kiln.neg %x0 : tensor<64xf32>\n"
                "    %1 = kiln.abs %x1 : tensor<3x5xf16>\n";
  groups.yields = {{"%0", "tensor<64xf32>"}, {"%1", "tensor<3x5xf16>"}};
  std::vector<GeneratedFusion> generated = {emitAndCompile(vector),
                                            emitAndCompile(broadcast),
                                            emitAndCompile(groups)};
  std::vector<MergedPart> parts;
  for (const GeneratedFusion &g : generated) {
    ASSERT_EQ(g.launches.size(), 1u);
    parts.push_back(
        {&g.kernels[0].part, g.launches[0].grid, g.launches[0].block});
  }
  std::string source = renderMergedKernel(parts, {256, 1, 1}, "merged");
  CompiledKernel compiled;
  std::string error;
  ASSERT_TRUE(compileCuda(source, "merged", "sm_90", true, compiled, error))
      << error << "\n"
      << numbered(source);
  EXPECT_NE(compiled.ptx.find(".entry merged"), std::string::npos);
  EXPECT_NE(source.find("kiln_part2::run(ctx"), std::string::npos) << source;
}

//===----------------------------------------------------------------------===//
// ScalarEmitter on its own: an epilogue of another kernel
//===----------------------------------------------------------------------===//

TEST_F(PointwiseEmitterTest, ScalarEmitterEmitsAnEpilogueAroundARegister) {
  FusionSpec spec;
  spec.kind = "gemm";
  spec.inputs = {"tensor<16x32xbf16>", "tensor<32xbf16>"};
  spec.body =
      "    %0 = kiln.add %x0, %x1 : tensor<16x32xbf16>, tensor<32xbf16>\n"
      "    %1 = kiln.gelu %0 approximate = tanh : tensor<16x32xbf16>\n";
  spec.yields = {{"%1", "tensor<16x32xbf16>"}};
  FusionOp fusion = parse(spec);
  ASSERT_TRUE(fusion);
  Block &body = fusion.getBody().front();
  ScalarEmitter scalar({16, 32}, "ep_", "int");
  scalar.setIndex({"row", "col"});
  scalar.bindValue(body.getArgument(0), "acc"); // an accumulator register
  scalar.bindBuffer(body.getArgument(1), "bias");
  std::string statements;
  FailureOr<std::string> value = scalar.emit(
      cast<YieldOp>(body.getTerminator()).getValues()[0], statements, 4);
  ASSERT_TRUE(succeeded(value)) << diagnostics;
  EXPECT_TRUE(scalar.usesCoord(1));
  EXPECT_FALSE(scalar.usesCoord(0));
  EXPECT_TRUE(contains(statements, "kiln_load(bias[col])")) << statements;
  EXPECT_TRUE(
      contains(statements, "kiln_round_bf16(kiln::op::add(acc, ep_in_0))"))
      << statements;
  std::string source =
      "#include \"kiln/prelude.cuh\"\n"
      "#include \"kiln/scalar_ops.cuh\"\n"
      "extern \"C\" __global__ void epilogue(const __nv_bfloat16 *bias,\n"
      "    __nv_bfloat16 *out) {\n"
      "  const int row = blockIdx.x, col = threadIdx.x;\n"
      "  const float acc = 1.0f;\n" +
      statements + "  kiln_store(out + row * 32 + col, " + *value + ");\n}\n";
  CompiledKernel compiled;
  std::string error;
  EXPECT_TRUE(compileCuda(source, "epilogue", "sm_90", true, compiled, error))
      << error << source;
  // A value it cannot compute names the op.
  spec.body =
      "    %0 = kiln.softmax %x0 dim = 1 : tensor<16x32xbf16>\n"
      "    %1 = kiln.add %0, %x1 : tensor<16x32xbf16>, tensor<32xbf16>\n";
  fusion = parse(spec);
  ScalarEmitter other({16, 32}, "", "int");
  other.setIndex({"row", "col"});
  other.bindBuffer(fusion.getBody().front().getArgument(0), "x");
  other.bindBuffer(fusion.getBody().front().getArgument(1), "bias");
  diagnostics.clear();
  EXPECT_TRUE(failed(other.emit(
      cast<YieldOp>(fusion.getBody().front().getTerminator()).getValues()[0],
      statements, 0)));
  EXPECT_TRUE(contains(diagnostics, "kiln.softmax")) << diagnostics;
}

} // namespace
} // namespace mlir::kiln::codegen
