//===- GemmTemplateInstances.cpp - every GEMM kernel the planner chooses --===//
//
// Every entry of the GEMM tile tables, for each element type it serves,
// rendered by the emitter itself (emitGemm with the configuration forced)
// from a representative fusion: a product with a bias, GELU (tanh) and both
// the pre-activation and the activation as results, the register-heaviest
// common epilogue. Shapes leave partial tiles, so that the bounds-tested
// paths compile too; a few entries add transposed operands, element-by-
// element loads and split-K (the partial stores and the reduce kernel).
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/TemplateInstances.h"

#include "codegen/cuda/GemmEmitter.h"

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
};

std::string tensor(int64_t rows, int64_t cols, const char *element) {
  return "tensor<" + std::to_string(rows) + "x" + std::to_string(cols) + "x" +
         element + ">";
}

/// y = x w (+ bias, gelu) with both results.
std::string fusionModule(const Case &c) {
  std::string x = c.transposeLhs ? tensor(c.k, c.m, c.element)
                                 : tensor(c.m, c.k, c.element);
  std::string w = c.transposeRhs ? tensor(c.n, c.k, c.element)
                                 : tensor(c.k, c.n, c.element);
  std::string y = tensor(c.m, c.n, c.element);
  std::string bias = "tensor<" + std::to_string(c.n) + "x" + c.element + ">";
  std::string types = x + ", " + w + ", " + bias;
  return "func.func @f(%f0: " + x + ", %f1: " + w + ", %f2: " + bias +
         ") -> (" + y + ", " + y + ") {\n  %r:2 = kiln.fusion \"gemm\" (%f0, " +
         "%f1, %f2) : (" + types + ") -> (" + y + ", " + y + ") {\n" +
         "  ^bb0(%x: " + x + ", %w: " + w + ", %bias: " + bias + "):\n" +
         "    %m = kiln.matmul %x, %w" +
         (c.transposeLhs ? " transpose_lhs" : "") +
         (c.transposeRhs ? " transpose_rhs" : "") + " : " + x + ", " + w +
         "\n    %s = kiln.add %m, %bias : " + y + ", " + bias +
         "\n    %g = kiln.gelu %s approximate = tanh : " + y +
         "\n    kiln.yield %s, %g : " + y + ", " + y + "\n  }\n" +
         "  return %r#0, %r#1 : " + y + ", " + y + "\n}\n";
}

std::string caseName(const Case &c) {
  const GemmTileConfig &t = c.config;
  std::string name = "gemm_";
  switch (t.path) {
  case GemmPath::Wgmma:
    name += "wgmma";
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
  if (c.split > 1)
    name += "_split" + std::to_string(c.split);
  return name;
}

} // namespace

std::vector<TemplateInstance> gemmTemplateInstances() {
  std::vector<Case> cases;
  for (const GemmTileConfig &t : gemmWgmmaConfigs())
    for (const char *element : {"bf16", "f16"}) {
      cases.push_back({t, element});
      cases.push_back({t, element, true, true});
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
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(fusionModule(c), &context);
    FusionOp fusion;
    if (module)
      module->walk([&](FusionOp op) { fusion = op; });
    CodegenOptions options;
    options.arch = "sm_90";
    options.allowTf32 = c.config.path == GemmPath::Tf32;
    FailureOr<GeneratedFusion> generated = failure();
    if (fusion)
      generated =
          emitGemm(fusion, options, GemmForcedChoice{c.config, c.split});
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
