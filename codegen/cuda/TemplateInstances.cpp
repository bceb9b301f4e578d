//===- TemplateInstances.cpp - every kernel the planners may choose -------===//

#include "codegen/cuda/TemplateInstances.h"

#include "codegen/cuda/KernelEmitter.h"
#include "codegen/cuda/KernelRenderer.h"
#include "compiler/transforms/Fusion.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

namespace mlir::kiln::codegen {

std::vector<TemplateInstance>
emitTemplateInstances(llvm::StringRef prefix, llvm::StringRef family,
                      const KernelEmitter &emitter,
                      llvm::ArrayRef<InstanceCase> cases) {
  DialectRegistry registry;
  registry.insert<KilnDialect, func::FuncDialect>();
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  std::vector<TemplateInstance> instances;
  std::map<std::string, size_t> bySource;
  llvm::StringMap<unsigned> names;
  for (const InstanceCase &c : cases) {
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(c.source, &context);
    if (!module) {
      llvm::errs() << family << " instance " << c.label << " does not parse\n";
      continue;
    }
    if (c.fuse)
      for (auto function : module->getOps<func::FuncOp>())
        (void)fuseFunction(function);
    llvm::SmallVector<FusionOp> fusions;
    module->walk([&](FusionOp fusion) {
      if (emitter.matches(fusion))
        fusions.push_back(fusion);
    });
    if (fusions.empty())
      llvm::errs() << family << " instance " << c.label << " has no " << family
                   << " fusion\n";
    for (llvm::StringRef arch : {"sm_90", "sm_80"}) {
      CodegenOptions options;
      options.arch = arch.str();
      for (FusionOp fusion : fusions) {
        FailureOr<GeneratedFusion> generated = emitter.emit(fusion, options);
        if (failed(generated)) {
          llvm::errs() << family << " instance " << c.label
                       << " does not emit\n";
          continue;
        }
        for (GeneratedKernel &kernel : generated->kernels) {
          auto [it, inserted] =
              bySource.try_emplace(kernel.source, instances.size());
          if (!inserted) {
            std::vector<std::string> &arches = instances[it->second].arches;
            if (!llvm::is_contained(arches, arch.str()))
              arches.push_back(arch.str());
            continue;
          }
          std::string name =
              (prefix + "_" + c.label + "_" + kernel.templateName).str();
          if (unsigned n = names[name]++)
            name += "_" + std::to_string(n);
          instances.push_back({name, std::move(kernel.source), {arch.str()}});
        }
      }
    }
  }
  return instances;
}

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

} // namespace mlir::kiln::codegen
