//===- TemplateInstances.cpp - every kernel the planners may choose -------===//

#include "codegen/cuda/TemplateInstances.h"

#include "codegen/cuda/KernelRenderer.h"

#include "llvm/ADT/STLExtras.h"

namespace mlir::kiln::codegen {

std::vector<TemplateInstance> mergedTemplateInstances() {
  // Two parts of different block shapes, one with a barrier: the dispatcher
  // gives each its block index, grid, thread index and block size.
  KernelSpec scale;
  scale.prefix = "kiln_check_scale";
  scale.addParam("float *__restrict__", "out", LaunchArg::result(0));
  scale.addParam("float", "factor", LaunchArg::f32(2.0f));
  scale.body = "  const unsigned i = ctx.block.x * ctx.block_dim.x + "
               "ctx.thread.x;\n  out[i] *= factor;\n";
  scale.grid = {4, 1, 1};
  scale.block = {128, 1, 1};
  KernelSpec sum;
  sum.prefix = "kiln_check_sum";
  sum.addParam("const float *__restrict__", "in", LaunchArg::operand(0));
  sum.addParam("float *__restrict__", "out", LaunchArg::result(1));
  sum.body = "  __shared__ float partial[64];\n"
             "  const unsigned t = ctx.thread_rank();\n"
             "  partial[t] = in[ctx.block.y * 64 + t];\n"
             "  __syncthreads();\n"
             "  if (t == 0) {\n"
             "    float s = 0.0f;\n"
             "    for (int k = 0; k < 64; ++k) s += partial[k];\n"
             "    out[ctx.block.y] = s;\n"
             "  }\n";
  sum.grid = {1, 3, 1};
  sum.block = {32, 2, 1};
  GeneratedKernel a = renderKernel(scale), b = renderKernel(sum);
  MergedPart parts[] = {{&a.part, scale.grid, scale.block},
                        {&b.part, sum.grid, sum.block}};
  return {{"merged_two_shapes",
           renderMergedKernel(parts, {128, 1, 1}, "kiln_check_merged"),
           {"sm_90", "sm_80"}},
          {"single_part", a.source, {"sm_90", "sm_80"}}};
}

std::vector<TemplateInstance> allTemplateInstances() {
  std::vector<TemplateInstance> all;
  for (auto family : {mergedTemplateInstances, attentionTemplateInstances,
                      embeddingTemplateInstances, gemmTemplateInstances,
                      pointwiseTemplateInstances, reductionTemplateInstances})
    llvm::append_range(all, family());
  return all;
}

} // namespace mlir::kiln::codegen
