//===- ConvTemplateInstances.cpp - every convolution kernel to check ------===//
//
// Every entry of the implicit-GEMM tile tables (ConvPlan.cpp) for the
// element types it serves (wgmma's for sm_90a, each of its passes too),
// rendered by the emitter itself (emitConv of that tile) from a 3x3
// channels-last forward pass with bias and ReLU; then each pass in each layout
// with the operands the planner gathers element by element (channels-first
// windows, 3 input channels), split reductions (their partial stores and the
// summing kernel), f32 in three tf32 products and once, and f16. Channels-first
// passes whose channels-last copies are 16-byte runs run as channels last:
// their instances include the copies (kernels/conv_layout_change.cuh).
// Forward passes followed by a training batch norm take its statistics in
// the wgmma epilogue (each tile), or leave them to batch norm's own kernels
// (mma.sync); the instances include the batch norm's kernels. Channels-last
// forward passes of 64 channels run on TMA copies (conv_tma.cuh).
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/TemplateInstances.h"

#include "codegen/cuda/conv/ConvEmitter.h"
#include "codegen/cuda/conv/ConvPlan.h"

#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

namespace mlir::kiln::codegen {
namespace {

enum class Pass { Forward, Input, Filter };

struct Case {
  const char *label = "";
  GemmTileConfig tile{};
  const char *element = "bf16"; // "bf16", "f16", "f32"
  bool tf32 = false;
  Pass pass = Pass::Forward;
  bool nhwc = true;
  // N, C, H, W, O, kernel, stride, padding.
  int64_t n = 4, c = 64, h = 14, w = 14, o = 64, kernel = 3, stride = 1,
          pad = 1;
  int split = 1;
  int64_t groups = 1;
  // A training batch norm over the forward pass's result.
  bool batchNorm = false;
};

std::string tensor(std::initializer_list<int64_t> shape, const char *type) {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s + type + ">";
}

/// One conv fusion of `c`: the forward pass with bias and ReLU, or a
/// gradient.
std::string fusionModule(const Case &c) {
  int64_t oh = (c.h + 2 * c.pad - c.kernel) / c.stride + 1;
  int64_t ow = (c.w + 2 * c.pad - c.kernel) / c.stride + 1;
  const char *e = c.element;
  std::string x = c.nhwc ? tensor({c.n, c.h, c.w, c.c}, e)
                         : tensor({c.n, c.c, c.h, c.w}, e);
  int64_t cg = c.c / c.groups;
  std::string f = c.nhwc ? tensor({c.o, c.kernel, c.kernel, cg}, e)
                         : tensor({c.o, cg, c.kernel, c.kernel}, e);
  std::string y =
      c.nhwc ? tensor({c.n, oh, ow, c.o}, e) : tensor({c.n, c.o, oh, ow}, e);
  std::string bias = tensor({c.o}, e);
  std::string attrs =
      std::string(" layout = ") + (c.nhwc ? "nhwc" : "nchw") + " stride = [" +
      std::to_string(c.stride) + ", " + std::to_string(c.stride) +
      "] padding = [" + std::to_string(c.pad) + ", " + std::to_string(c.pad) +
      ", " + std::to_string(c.pad) + ", " + std::to_string(c.pad) +
      "] groups = " + std::to_string(c.groups);
  switch (c.pass) {
  case Pass::Forward:
    if (c.batchNorm) {
      std::string t = x + ", " + f + ", " + bias + ", " + bias + ", " + bias;
      std::string results = y + ", " + y + ", " + bias + ", " + bias;
      return "func.func @f(%a0: " + x + ", %a1: " + f + ", %a2: " + bias +
             ", %a3: " + bias + ", %a4: " + bias + ") -> (" + results +
             ") {\n  %r:4 = kiln.fusion \"conv\" (%a0, %a1, %a2, %a3, %a4) : "
             "(" +
             t + ") -> (" + results + ") {\n  ^bb0(%x: " + x + ", %w: " + f +
             ", %b: " + bias + ", %g: " + bias + ", %be: " + bias +
             "):\n    %c = kiln.conv2d %x, %w, %b" + attrs + " : " + x + ", " +
             f + ", " + bias +
             "\n    %y, %m, %v = kiln.batch_norm %c, %g, %be" +
             " dim = " + (c.nhwc ? "3" : "1") + " : " + y + ", " + bias + ", " +
             bias + "\n    kiln.yield %c, %y, %m, %v : " + results +
             "\n  }\n  return %r#0, %r#1, %r#2, %r#3 : " + results + "\n}\n";
    }
    return "func.func @f(%a0: " + x + ", %a1: " + f + ", %a2: " + bias +
           ") -> " + y + " {\n  %r = kiln.fusion \"conv\" (%a0, %a1, %a2) : (" +
           x + ", " + f + ", " + bias + ") -> " + y + " {\n  ^bb0(%x: " + x +
           ", %w: " + f + ", %b: " + bias +
           "):\n    %c = kiln.conv2d %x, %w, %b" + attrs + " : " + x + ", " +
           f + ", " + bias + "\n    %y = kiln.relu %c : " + y +
           "\n    kiln.yield %y : " + y + "\n  }\n  return %r : " + y + "\n}\n";
  case Pass::Input:
    return "func.func @f(%a0: " + y + ", %a1: " + f + ") -> " + x +
           " {\n  %r = kiln.fusion \"conv\" (%a0, %a1) : (" + y + ", " + f +
           ") -> " + x + " {\n  ^bb0(%g: " + y + ", %w: " + f +
           "):\n    %d = kiln.conv2d_backward_input %g, %w" + attrs + " : " +
           y + ", " + f + " -> " + x + "\n    kiln.yield %d : " + x +
           "\n  }\n  return %r : " + x + "\n}\n";
  case Pass::Filter:
    return "func.func @f(%a0: " + y + ", %a1: " + x + ") -> " + f +
           " {\n  %r = kiln.fusion \"conv\" (%a0, %a1) : (" + y + ", " + x +
           ") -> " + f + " {\n  ^bb0(%g: " + y + ", %x: " + x +
           "):\n    %d = kiln.conv2d_backward_filter %g, %x" + attrs + " : " +
           y + ", " + x + " -> " + f + "\n    kiln.yield %d : " + f +
           "\n  }\n  return %r : " + f + "\n}\n";
  }
  return "";
}

std::string caseName(const Case &c) {
  const GemmTileConfig &t = c.tile;
  std::string name = std::string("conv_") +
                     (c.pass == Pass::Forward ? "forward_"
                      : c.pass == Pass::Input ? "input_"
                                              : "filter_") +
                     (c.nhwc ? "nhwc_" : "nchw_") + c.label + "_" + c.element +
                     (c.tf32 ? "_tf32" : "");
  if (c.groups > 1)
    return name + "_depthwise";
  name += std::string(t.path == GemmPath::Wgmma ? "_wgmma_" : "_") +
          std::to_string(t.bm) + "x" + std::to_string(t.bn) + "x" +
          std::to_string(t.bk);
  if (c.split > 1)
    name += "_split" + std::to_string(c.split);
  if (c.batchNorm)
    name += "_bn";
  return name;
}

} // namespace

std::vector<TemplateInstance> convTemplateInstances() {
  std::vector<Case> cases;
  auto add = [&](const char *label, const GemmTileConfig &tile,
                 const char *element, Pass pass, bool nhwc) -> Case & {
    Case c;
    c.label = label;
    c.tile = tile;
    c.element = element;
    c.pass = pass;
    c.nhwc = nhwc;
    cases.push_back(c);
    return cases.back();
  };
  for (const GemmTileConfig &t : convMmaConfigs())
    add("3x3", t, "bf16", Pass::Forward, true);
  // wgmma: every tile on every pass (the filter gradient's M/N-major
  // operands split), f16, stride 2, 1x1, and channels first run as
  // channels last.
  for (const GemmTileConfig &t : convWgmmaConfigs()) {
    add("3x3", t, "bf16", Pass::Forward, true).o = std::max(64, t.bn);
    add("3x3", t, "bf16", Pass::Input, true).c = std::max(64, t.bn);
    Case &filter = add("3x3", t, "bf16", Pass::Filter, true);
    filter.c = filter.o = 128, filter.split = 4;
  }
  // With a batch norm: its statistics in each tile's epilogue.
  for (const GemmTileConfig &t : convWgmmaConfigs()) {
    Case &c = add("3x3", t, "bf16", Pass::Forward, true);
    c.o = std::max(64, t.bn), c.batchNorm = true;
  }
  const GemmTileConfig &wgmma = convWgmmaConfigs().front();
  add("3x3", wgmma, "f16", Pass::Forward, true).o = 128;
  Case &f16Norm = add("3x3", wgmma, "f16", Pass::Forward, true);
  f16Norm.o = 128, f16Norm.batchNorm = true;
  add("3x3_s2", wgmma, "bf16", Pass::Forward, true).stride = 2;
  // The forward pass on TMA copies with its reduction split (and the sum of
  // its partials).
  Case &tmaSplit = add("5x5", wgmma, "bf16", Pass::Forward, true);
  tmaSplit.kernel = 5, tmaSplit.pad = 2, tmaSplit.split = 3;
  Case &wgmmaInputS2 = add("3x3_s2", wgmma, "bf16", Pass::Input, true);
  wgmmaInputS2.c = 128, wgmmaInputS2.stride = 2;
  Case &wgmmaPointwise = add("1x1", wgmma, "bf16", Pass::Forward, true);
  wgmmaPointwise.o = 128, wgmmaPointwise.kernel = 1, wgmmaPointwise.pad = 0;
  add("3x3", wgmma, "bf16", Pass::Forward, false).o = 128;
  for (const GemmTileConfig &t : convTf32Configs())
    add("3x3", t, "f32", Pass::Forward, true).tf32 = true;
  for (const GemmTileConfig &t : convTf32x3Configs())
    add("3x3", t, "f32", Pass::Forward, true);
  const GemmTileConfig &large = convMmaConfigs().front();
  const GemmTileConfig &small = convMmaConfigs().back();
  const GemmTileConfig &f32Small = convTf32x3Configs().front();
  add("3x3", large, "f16", Pass::Forward, true);
  // Batch norm's own statistics kernels after mma.sync, either layout.
  add("3x3", large, "bf16", Pass::Forward, true).batchNorm = true;
  add("3x3", large, "bf16", Pass::Forward, false).batchNorm = true;
  // Every pass and layout, with their gathered operands.
  for (bool nhwc : {true, false}) {
    add("3x3_s2", large, "bf16", Pass::Forward, nhwc).stride = 2;
    if (!nhwc) // (nhwc: the table's entries above)
      add("3x3", large, "bf16", Pass::Forward, nhwc);
    add("3x3", large, "bf16", Pass::Input, nhwc);
    add("3x3_s2", large, "bf16", Pass::Input, nhwc).stride = 2;
    add("3x3", small, "bf16", Pass::Filter, nhwc).split = 4;
    Case &stem = add("7x7_c3", large, "bf16", Pass::Forward, nhwc);
    stem.n = 2, stem.c = 3, stem.h = stem.w = 32, stem.kernel = 7;
    stem.stride = 2, stem.pad = 3;
    Case &pointwise = add("1x1", large, "bf16", Pass::Forward, nhwc);
    pointwise.o = 128, pointwise.kernel = 1, pointwise.pad = 0;
    add("1x1", large, "bf16", Pass::Filter, nhwc).kernel = 1;
    add("3x3", f32Small, "f32", Pass::Input, nhwc);
    if (!nhwc)
      add("3x3", f32Small, "f32", Pass::Forward, nhwc);
    add("3x3", f32Small, "f32", Pass::Filter, nhwc).split = 4;
    // Channel counts that are not multiples of 8: gathered element by
    // element in either layout (channels first: not as channels last).
    for (Pass pass : {Pass::Forward, Pass::Input, Pass::Filter}) {
      Case &c = add("3x3_c12", large, "bf16", pass, nhwc);
      c.c = 12, c.o = 20;
    }
    // Depthwise: the direct kernels (the tile is not used).
    for (Pass pass : {Pass::Forward, Pass::Input, Pass::Filter}) {
      Case &c = add("3x3_s2", small, "bf16", pass, nhwc);
      c.c = c.o = c.groups = 32;
      c.stride = 2;
    }
  }

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
    options.allowTf32 = c.tf32;
    FailureOr<GeneratedFusion> generated = failure();
    if (fusion)
      if (FailureOr<std::optional<ConvKernelChoice>> kernel =
              forceConvTile(fusion, options, c.tile, c.split);
          succeeded(kernel))
        generated = emitConv(fusion, options, *kernel);
    std::string name = caseName(c);
    if (failed(generated) || generated->kernels.empty()) {
      // An instance that does not compile fails the check.
      instances.push_back(
          {name, "#error the conv emitter failed\n", {"sm_90"}});
      continue;
    }
    for (auto [i, kernel] : llvm::enumerate(generated->kernels)) {
      std::vector<std::string> arches =
          kernel.archSpecific ? std::vector<std::string>{"sm_90a"}
                              : std::vector<std::string>{"sm_90", "sm_80"};
      instances.push_back(
          {i ? name + "_" + std::to_string(i) : name, kernel.source, arches});
    }
  }
  return instances;
}

} // namespace mlir::kiln::codegen
