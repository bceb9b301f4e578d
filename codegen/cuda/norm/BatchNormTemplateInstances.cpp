//===- BatchNormTemplateInstances.cpp - the batch norm kernels to check ---===//
//
// Every kernel of kernels/batch_norm.cuh the planner can choose, rendered by
// the batch norm emitter itself from small fusions, for sm_90 and sm_80:
// column mode (NHWC, [N, C], short [N, C, L] segments; tiles of 1, 8 and 32
// columns) and segment mode (NCHW), with and without splits; the training
// form with and without running statistics, the eval form, and the backward
// op with and without the input gradient; in f32, and in bf16 and f16 (with
// f32 running statistics) for a few shapes: shapes and splits are only
// constants of the configuration.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/TemplateInstances.h"

#include "codegen/cuda/KernelEmitter.h"
#include "dialects/kiln/IR/KilnDialect.h"

namespace mlir::kiln::codegen {
namespace {

using Case = InstanceCase;

/// A function with one "batch_norm" fusion of `op` over operands of
/// `operandTypes`, with `results` results of which `yields` are yielded (of
/// `yieldTypes`).
std::string fusionSource(llvm::StringRef op,
                         llvm::ArrayRef<std::string> operandTypes,
                         unsigned results, llvm::ArrayRef<unsigned> yields,
                         llvm::ArrayRef<std::string> yieldTypes) {
  std::string args, names, block, types, values, resultTypes;
  for (auto [i, type] : llvm::enumerate(operandTypes)) {
    std::string n = std::to_string(i);
    args += (i ? ", %a" : "%a") + n + ": " + type;
    names += (i ? ", %a" : "%a") + n;
    block += (i ? ", %arg" : "%arg") + n + ": " + type;
    types += (i ? ", " : "") + type;
  }
  for (auto [k, r] : llvm::enumerate(yields)) {
    values += (k ? ", %r#" : "%r#") + std::to_string(r);
    resultTypes += (k ? ", " : "") + yieldTypes[k];
  }
  return "func.func @f(" + args + ") {\n  %f:" + std::to_string(yields.size()) +
         " = kiln.fusion \"batch_norm\" (" + names + ") : (" + types +
         ") -> (" + resultTypes + ") {\n  ^bb0(" + block +
         "):\n    %r:" + std::to_string(results) + " = " + op.str() +
         "\n    kiln.yield " + values + " : " + resultTypes +
         "\n  }\n  return\n}\n";
}

std::vector<Case> cases() {
  std::vector<Case> all;
  // The kernels differ by element types, mode and column tile; the shapes
  // (and splits) are constants of the configuration.
  struct Shape {
    const char *label, *shape;
    int dim;
    const char *channels;
  };
  const Shape shapes[] = {
      {"nhwc_c1", "64x4x4x1", 3, "1"},       // columns of 1: 256 lanes
      {"nhwc_c6", "4x5x7x6", 3, "6"},        // 8 columns, one split
      {"nhwc_c64", "128x16x16x64", 3, "64"}, // vector columns, split
      {"nc_c2048", "20000x2048", 1, "2048"}, // 32 columns, many tiles
      {"ncl_short", "64x10x3", 1, "10"},     // short segments as columns
      {"nchw", "4x6x5x7", 1, "6"},           // segments, one split
      {"nchw_split", "16x3x64x64", 1, "3"},  // segments, split
  };
  auto add = [&](llvm::StringRef type, const Shape &s, bool everyForm) {
    std::string x = "tensor<" + std::string(s.shape) + "x" + type.str() + ">";
    std::string c =
        "tensor<" + std::string(s.channels) + "x" + type.str() + ">";
    std::string r = "tensor<" + std::string(s.channels) + "xf32>";
    std::string dim = " dim = " + std::to_string(s.dim);
    std::string tag = type.str() + "_" + s.label;
    all.push_back({"forward_" + tag,
                   fusionSource("kiln.batch_norm %arg0, %arg1, %arg2" + dim +
                                    " : " + x + ", " + c + ", " + c,
                                {x, c, c}, 3, {0, 1, 2}, {x, c, c})});
    std::string running =
        "kiln.batch_norm %arg0, %arg1, %arg2 running %arg3, %arg4";
    std::string runningTypes =
        " : " + x + ", " + c + ", " + c + ", " + r + ", " + r;
    all.push_back({"running_" + tag,
                   fusionSource(running + dim + runningTypes, {x, c, c, r, r},
                                5, {0, 3, 4}, {x, r, r})});
    all.push_back(
        {"eval_" + tag, fusionSource(running + " eval" + dim + runningTypes,
                                     {x, c, c, r, r}, 5, {0}, {x})});
    std::string backward = "kiln.batch_norm_backward %arg0, %arg1, %arg2" +
                           dim + " : " + x + ", " + c;
    all.push_back({"backward_" + tag,
                   fusionSource(backward, {x, x, c}, 3, {0, 1, 2}, {x, c, c})});
    if (everyForm)
      all.push_back({"backward_params_" + tag,
                     fusionSource(backward, {x, x, c}, 3, {1, 2}, {c, c})});
  };
  for (const Shape &s : shapes)
    add("f32", s, /*everyForm=*/true);
  for (const Shape &s : shapes)
    if (llvm::is_contained({"nhwc_c6", "nhwc_c64", "ncl_short", "nchw_split"},
                           llvm::StringRef(s.label)))
      add("bf16", s, /*everyForm=*/true);
  add("f16", shapes[5], /*everyForm=*/false);
  return all;
}

} // namespace

std::vector<TemplateInstance> batchNormTemplateInstances() {
  std::unique_ptr<KernelEmitter> emitter = createBatchNormEmitter();
  return emitTemplateInstances("bn", "batch norm", *emitter, cases());
}

} // namespace mlir::kiln::codegen
