//===- GemmTemplateInstances.cpp - every GEMM kernel the planner chooses --===//
//
// Every entry of the GEMM tile tables, for each element type it serves,
// rendered by the emitter itself (emitGemm of that tile)
// from a representative fusion: a product with a bias, GELU (tanh) and both
// the pre-activation and the activation as results, the register-heaviest
// common epilogue. Shapes leave partial tiles, so that the bounds-tested
// paths compile too; a few entries add transposed operands, element-by-
// element loads, split-K (the partial stores and the reduce kernel) and,
// for the TMA kernel, an epilogue that scales the product by a tensor of
// its shape (which it prefetches into the L2) and TMA stores.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/TemplateInstances.h"

#include "codegen/cuda/gemm/GemmEmitter.h"
#include "codegen/cuda/gemm/GemmSetup.h"

#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::kiln::codegen {
namespace {

struct Case {
  GemmTileConfig config;
  const char *element; // "bf16", "f16", "f32"
  bool transposeLhs = false, transposeRhs = false;
  int64_t m = 1000, n = 1000, k = 1024;
  int split = 1;
  /// wgmma: the TMA kernel (else the cp.async one); `problems` > 1: that
  /// many products with outputs of their own (`summed`: added instead).
  bool tma = true;
  int problems = 1;
  bool summed = false;
  /// The epilogue also scales the product by a tensor of its shape (as an
  /// activation's gradient does), which the TMA kernel prefetches.
  bool scaled = false;
  /// The TMA kernel's blocks per cluster (--gemm-cluster).
  int cluster = 2;
  /// The TMA kernel stores its first result by TMA (--gemm-tma-store).
  bool tmaStore = false;
};

std::string tensor(int64_t rows, int64_t cols, const char *element) {
  return "tensor<" + std::to_string(rows) + "x" + std::to_string(cols) + "x" +
         element + ">";
}

/// y = x w (+ bias, gelu) with both results; `scaled`: (x w) * z + bias.
std::string fusionModule(const Case &c) {
  std::string x = c.transposeLhs ? tensor(c.k, c.m, c.element)
                                 : tensor(c.m, c.k, c.element);
  std::string w = c.transposeRhs ? tensor(c.n, c.k, c.element)
                                 : tensor(c.k, c.n, c.element);
  std::string y = tensor(c.m, c.n, c.element);
  std::string bias = "tensor<" + std::to_string(c.n) + "x" + c.element + ">";
  std::string types = x + ", " + w + ", " + bias + (c.scaled ? ", " + y : "");
  std::string product = c.scaled ? "%p" : "%m";
  return "func.func @f(%f0: " + x + ", %f1: " + w + ", %f2: " + bias +
         (c.scaled ? ", %f3: " + y : "") + ") -> (" + y + ", " + y +
         ") {\n  %r:2 = kiln.fusion \"gemm\" (%f0, %f1, %f2" +
         (c.scaled ? ", %f3" : "") + ") : (" + types + ") -> (" + y + ", " +
         y + ") {\n" + "  ^bb0(%x: " + x + ", %w: " + w + ", %bias: " + bias +
         (c.scaled ? ", %z: " + y : "") + "):\n" +
         "    %m = kiln.matmul %x, %w" +
         (c.transposeLhs ? " transpose_lhs" : "") +
         (c.transposeRhs ? " transpose_rhs" : "") + " : " + x + ", " + w +
         (c.scaled ? "\n    %p = kiln.mul %m, %z : " + y + ", " + y : "") +
         "\n    %s = kiln.add " + product + ", %bias : " + y + ", " + bias +
         "\n    %g = kiln.gelu %s approximate = tanh : " + y +
         "\n    kiln.yield %s, %g : " + y + ", " + y + "\n  }\n" +
         "  return %r#0, %r#1 : " + y + ", " + y + "\n}\n";
}

/// Several products of one shape in one fusion: q, k and v projections of
/// one input (each with a bias and GELU), or the sum of their input
/// gradients (with a bias and GELU after the sum).
std::string problemsModule(const Case &c) {
  std::string x = c.transposeLhs ? tensor(c.k, c.m, c.element)
                                 : tensor(c.m, c.k, c.element);
  std::string w = c.transposeRhs ? tensor(c.n, c.k, c.element)
                                 : tensor(c.k, c.n, c.element);
  std::string y = tensor(c.m, c.n, c.element);
  std::string bias = "tensor<" + std::to_string(c.n) + "x" + c.element + ">";
  std::string flags = std::string(c.transposeLhs ? " transpose_lhs" : "") +
                      (c.transposeRhs ? " transpose_rhs" : "");
  std::string args, types, blockArgs, body, yields, results;
  auto add = [](std::string &list, const std::string &item) {
    list += (list.empty() ? "" : ", ") + item;
  };
  for (int i = 0; i < c.problems; ++i) {
    std::string n = std::to_string(i);
    add(args, "%fx" + n + ", %fw" + n);
    add(types, x + ", " + w);
    add(blockArgs, "%x" + n + ": " + x + ", %w" + n + ": " + w);
    body += "    %m" + n + " = kiln.matmul %x" + n + ", %w" + n + flags +
            " : " + x + ", " + w + "\n";
  }
  add(args, "%fb");
  add(types, bias);
  add(blockArgs, "%bias: " + bias);
  auto epilogue = [&](const std::string &in, const std::string &n) {
    body += "    %s" + n + " = kiln.add " + in + ", %bias : " + y + ", " +
            bias + "\n    %g" + n + " = kiln.gelu %s" + n +
            " approximate = tanh : " + y + "\n";
    add(yields, "%g" + n);
    add(results, y);
  };
  if (c.summed) {
    std::string sum = "%m0";
    for (int i = 1; i < c.problems; ++i) {
      std::string n = std::to_string(i);
      body += "    %t" + n + " = kiln.add " + sum + ", %m" + n + " : " + y +
              ", " + y + "\n";
      sum = "%t" + n;
    }
    epilogue(sum, "0");
  } else {
    for (int i = 0; i < c.problems; ++i)
      epilogue("%m" + std::to_string(i), std::to_string(i));
  }
  std::string funcArgs;
  for (int i = 0; i < c.problems; ++i) {
    std::string n = std::to_string(i);
    add(funcArgs, "%fx" + n + ": " + x + ", %fw" + n + ": " + w);
  }
  add(funcArgs, "%fb: " + bias);
  int outputs = c.summed ? 1 : c.problems;
  std::string returned;
  for (int i = 0; i < outputs; ++i)
    add(returned, "%r#" + std::to_string(i));
  return "func.func @f(" + funcArgs + ") -> (" + results +
         ") {\n  %r:" + std::to_string(outputs) + " = kiln.fusion \"gemm\" (" +
         args + ") : (" + types + ") -> (" + results + ") {\n  ^bb0(" +
         blockArgs + "):\n" + body + "    kiln.yield " + yields + " : " +
         results + "\n  }\n  return " + returned + " : " + results + "\n}\n";
}

std::string caseName(const Case &c) {
  const GemmTileConfig &t = c.config;
  std::string name = "gemm_";
  switch (t.path) {
  case GemmPath::Wgmma:
    name += c.tma ? "tma" : "wgmma";
    break;
  case GemmPath::MmaSync:
    name += "mma";
    break;
  case GemmPath::Tf32:
    name += "mma_tf32";
    break;
  case GemmPath::Simt:
    name += "simt";
    break;
  }
  if (t.pingpong)
    name += "_pingpong";
  name += std::string("_") + c.element + "_" + std::to_string(t.bm) + "x" +
          std::to_string(t.bn) + "x" + std::to_string(t.bk);
  if (t.stages)
    name += "_s" + std::to_string(t.stages);
  if (t.slices > 1)
    name += "_slices" + std::to_string(t.slices);
  name += std::string("_") + (c.transposeLhs ? "t" : "n") +
          (c.transposeRhs ? "t" : "n");
  if (c.k % 8)
    name += "_k" + std::to_string(c.k);
  if (c.n % 2)
    name += "_n" + std::to_string(c.n);
  if (c.m != 1000)
    name += "_m" + std::to_string(c.m);
  if (c.split > 1)
    name += "_split" + std::to_string(c.split);
  if (c.problems > 1)
    name += (c.summed ? "_summed" : "_problems") + std::to_string(c.problems);
  if (c.scaled)
    name += "_scaled";
  if (t.path == GemmPath::Wgmma && c.tma && c.cluster == 1)
    name += "_nocluster";
  if (c.tmaStore)
    name += "_tmastore";
  return name;
}

} // namespace

std::vector<TemplateInstance> gemmTemplateInstances() {
  std::vector<Case> cases;
  for (const GemmTileConfig &t : gemmWgmmaConfigs())
    for (const char *element : {"bf16", "f16"})
      for (bool tma : {true, false}) {
        if (t.pingpong && !tma)
          continue; // a schedule of the TMA kernel only
        Case c{t, element};
        c.tma = tma;
        cases.push_back(c);
        c.transposeLhs = c.transposeRhs = true;
        cases.push_back(c);
        if (tma) {
          // The epilogue's prefetch of a tensor of the product's shape.
          c.scaled = true;
          cases.push_back(c);
          // Blocks alone, and clusters whose last tile row lies past the
          // product (1100 rows: 9 tile rows of 128).
          Case alone{t, element};
          alone.cluster = 1;
          cases.push_back(alone);
          Case odd{t, element};
          odd.m = 1100;
          cases.push_back(odd);
          // TMA stores of the first result (the second stored as runs),
          // over partial tiles in both dimensions.
          odd.tmaStore = true;
          cases.push_back(odd);
        }
      }
  // The TMA kernel's stacked and summed problems (the q, k and v
  // projections and their input gradient), with split-K.
  for (const GemmTileConfig &t : gemmWgmmaConfigs()) {
    Case grouped{t, "bf16"};
    grouped.problems = 3;
    cases.push_back(grouped);
    Case summed{t, "bf16", false, true};
    summed.problems = 3;
    summed.summed = true;
    cases.push_back(summed);
    summed.split = 2;
    cases.push_back(summed);
  }
  for (const GemmTileConfig &t : gemmMmaConfigs())
    for (const char *element : {"bf16", "f16"})
      cases.push_back({t, element});
  for (const GemmTileConfig &t : gemmTf32Configs())
    cases.push_back({t, "f32"});
  for (const GemmTileConfig &t : gemmSimtConfigs())
    cases.push_back({t, "f32"});
  const GemmTileConfig &mmaLarge = gemmMmaConfigs().front();
  const GemmTileConfig &mmaSmall = gemmMmaConfigs().back();
  // ldmatrix.trans for both operands; scalar loads of an unaligned lhs.
  cases.push_back({mmaLarge, "bf16", true, true});
  cases.push_back({mmaLarge, "bf16", false, false, 1000, 1000, 1004});
  cases.push_back({gemmTf32Configs().front(), "f32", true, true});
  cases.push_back({gemmSimtConfigs().front(), "f32", true, true});
  // Split-K: partial stores, the reduce kernel with four and one column
  // per thread.
  cases.push_back({mmaSmall, "bf16", false, false, 1000, 1000, 1024, 4});
  cases.push_back(
      {gemmSimtConfigs().back(), "f32", false, false, 64, 999, 1024, 2});

  MLIRContext context;
  context.loadDialect<KilnDialect, func::FuncDialect>();
  std::vector<TemplateInstance> instances;
  for (const Case &c : cases) {
    OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(
        c.problems > 1 ? problemsModule(c) : fusionModule(c), &context);
    FusionOp fusion;
    if (module)
      module->walk([&](FusionOp op) { fusion = op; });
    CodegenOptions options;
    options.arch = "sm_90";
    options.allowTf32 = c.config.path == GemmPath::Tf32;
    options.allowTma = c.tma;
    options.gemmCluster = c.cluster;
    options.gemmTmaStore = c.tmaStore;
    FailureOr<GeneratedFusion> generated = failure();
    if (fusion)
      if (FailureOr<GemmSetup> setup = setUpGemm(fusion, options);
          succeeded(setup)) {
        GemmKernelChoice kernel;
        kernel.choice = {c.config, c.split};
        grantTmaOptions(*setup, fusion, options, kernel);
        generated = emitGemm(fusion, options, kernel);
      }
    std::string name = caseName(c);
    if (failed(generated) || generated->kernels.empty()) {
      // An instance that does not compile fails the check.
      instances.push_back(
          {name, "#error the gemm emitter failed\n", {"sm_90"}});
      continue;
    }
    bool wgmma = c.config.path == GemmPath::Wgmma;
    std::vector<std::string> arches =
        wgmma ? std::vector<std::string>{"sm_90a"}
              : std::vector<std::string>{"sm_90", "sm_80"};
    instances.push_back({name, generated->kernels[0].source, arches});
    if (generated->kernels.size() > 1)
      instances.push_back({"gemm_splitk_" + name.substr(5),
                           generated->kernels[1].source, arches});
  }
  return instances;
}

} // namespace mlir::kiln::codegen
