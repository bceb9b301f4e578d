//===- PointwiseTemplateInstances.cpp - pointwise and optimizer instances -===//
//
// Representative fusions of every configuration the pointwise planner
// chooses, planned and rendered by the planner itself for sm_90 and sm_80:
// vector widths 1, 4 and 8 over f32, bf16, f16 and i1 tensors (and width 2,
// which no element type selects today but the template supports), scalars
// computed once per thread, broadcast reads and stores, 64-bit indices, and
// multi-tensor kernels of a few groups, with and without a group split over
// the kernel-parameter budget.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/TemplateInstances.h"
#include "codegen/cuda/pointwise/PointwiseEmitter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

#include "llvm/Support/ErrorHandling.h"

namespace mlir::kiln::codegen {
namespace {

/// A fusion as MLIR text: its kind, input types, body over %x0... and
/// yielded (value, type) pairs.
struct FusionText {
  std::string kind = "pointwise";
  std::vector<std::string> inputs;
  std::string body;
  std::vector<std::pair<std::string, std::string>> yields;
};

std::string moduleText(const FusionText &f) {
  std::string args, types, operands, blockArgs, results, values, returns;
  for (size_t i = 0; i < f.inputs.size(); ++i) {
    std::string sep = i ? ", " : "", n = std::to_string(i);
    args += sep + "%a" + n + ": " + f.inputs[i];
    types += sep + f.inputs[i];
    operands += sep + "%a" + n;
    blockArgs += sep + "%x" + n + ": " + f.inputs[i];
  }
  for (size_t i = 0; i < f.yields.size(); ++i) {
    std::string sep = i ? ", " : "";
    results += sep + f.yields[i].second;
    values += sep + f.yields[i].first;
    returns += sep + "%r#" + std::to_string(i);
  }
  return "func.func @f(" + args + ") -> (" + results +
         ") {\n  %r:" + std::to_string(f.yields.size()) + " = kiln.fusion \"" +
         f.kind + "\" (" + operands + ") : (" + types + ") -> (" + results +
         ") {\n  ^bb0(" + blockArgs + "):\n" + f.body + "    kiln.yield " +
         values + " : " + results + "\n  }\n  return " + returns + " : " +
         results + "\n}\n";
}

/// p' = p - lr * g for `count` parameters of `type`, lr (f32) at %x0,
/// rounded to the parameters' element type.
void sgd(FusionText &f, const std::string &type, int count) {
  std::string element = type.substr(type.find_last_of("x<") + 1);
  element.pop_back();
  std::string scalar = "tensor<" + element + ">", lr = "%x0";
  if (element != "f32") {
    lr = "%lr" + std::to_string(f.yields.size());
    f.body +=
        "    " + lr + " = kiln.cast %x0 : tensor<f32> to " + scalar + "\n";
  }
  for (int i = 0; i < count; ++i) {
    std::string k = std::to_string(f.yields.size());
    std::string p = "%x" + std::to_string(f.inputs.size());
    std::string g = "%x" + std::to_string(f.inputs.size() + 1);
    f.inputs.push_back(type);
    f.inputs.push_back(type);
    f.body += "    %m" + k + " = kiln.mul " + g + ", " + lr + " : " + type +
              ", " + scalar + "\n    %u" + k + " = kiln.sub " + p + ", %m" + k +
              " : " + type + ", " + type + "\n";
    f.yields.push_back({"%u" + k, type});
  }
}

std::vector<std::pair<std::string, FusionText>> fusions() {
  std::vector<std::pair<std::string, FusionText>> out;
  auto unary = [](const std::string &type, const std::string &op) {
    FusionText f;
    f.inputs = {type, type};
    f.body = "    %0 = kiln." + op + " %x0 : " + type + "\n" +
             "    %1 = kiln.mul %0, %x1 : " + type + ", " + type + "\n";
    f.yields = {{"%1", type}};
    return f;
  };
  // Vector widths: 16 bytes of the narrowest tensor, at most 8.
  out.push_back({"f32_w4", unary("tensor<64x1024xf32>", "gelu")});
  out.push_back({"bf16_w8", unary("tensor<64x1024xbf16>", "silu")});
  out.push_back({"f16_w8", unary("tensor<64x1024xf16>", "tanh")});
  {
    // A cast to bf16 beside f32 tensors (the narrowest sets the width) and
    // an i1 result (one byte: still 8 per step).
    FusionText f;
    std::string a = "tensor<4096xf32>", b = "tensor<4096xbf16>",
                m = "tensor<4096xi1>";
    f.inputs = {a, a};
    f.body = "    %0 = kiln.add %x0, %x1 : " + a + ", " + a + "\n" +
             "    %1 = kiln.cast %0 : " + a + " to " + b + "\n" +
             "    %2 = kiln.compare gt, %x0, %x1 : " + a + ", " + a + "\n";
    f.yields = {{"%1", b}, {"%2", m}};
    out.push_back({"mixed_w8", f});
  }
  {
    // Width 1: broadcast reads, broadcast stores and a rank-0 result.
    FusionText f;
    f.inputs = {"tensor<64x1x32xf32>", "tensor<16x1xbf16>", "tensor<f32>"};
    f.body = "    %c = kiln.cast %x1 : tensor<16x1xbf16> to tensor<16x1xf32>\n"
             "    %0 = kiln.add %x0, %c : tensor<64x1x32xf32>, "
             "tensor<16x1xf32>\n"
             "    %1 = kiln.mul %x0, %x2 : tensor<64x1x32xf32>, tensor<f32>\n"
             "    %2 = kiln.sqrt %x2 : tensor<f32>\n";
    f.yields = {{"%0", "tensor<64x16x32xf32>"},
                {"%1", "tensor<64x1x32xf32>"},
                {"%2", "tensor<f32>"}};
    out.push_back({"broadcast_w1", f});
  }
  {
    // Scalars once per thread (an Adam bias correction) on the vector path.
    FusionText f;
    std::string t = "tensor<1000x333xf32>";
    f.inputs = {"tensor<f32>", "tensor<f32>", t, t};
    f.body = "    %0 = kiln.pow %x0, %x1 : tensor<f32>, tensor<f32>\n"
             "    %1 = kiln.sub %x0, %0 : tensor<f32>, tensor<f32>\n"
             "    %2 = kiln.div %x2, %1 : " +
             t + ", tensor<f32>\n" + "    %3 = kiln.sqrt %x3 : " + t + "\n" +
             "    %4 = kiln.div %2, %3 : " + t + ", " + t + "\n";
    f.yields = {{"%4", t}};
    out.push_back({"scalars_w4", f});
  }
  {
    // More elements than an int indexes: 64-bit indices.
    FusionText f = unary("tensor<40000x32769xbf16>", "exp");
    out.push_back({"index64_w8", f});
  }
  out.push_back({"one_element", unary("tensor<f32>", "log")});
  {
    // A multi-tensor update of parameters of three shapes and types.
    FusionText f;
    f.kind = "optimizer";
    f.inputs = {"tensor<f32>"};
    sgd(f, "tensor<1024x1024xf32>", 2);
    sgd(f, "tensor<333xbf16>", 1);
    sgd(f, "tensor<7x5x3xf16>", 1);
    out.push_back({"three_shapes", f});
  }
  {
    // 342 parameters of one shape exceed the pointer budget: the group is
    // halved into two kernels, and the second takes another shape's group.
    FusionText f;
    f.kind = "optimizer";
    f.inputs = {"tensor<f32>"};
    sgd(f, "tensor<48xf32>", 342);
    sgd(f, "tensor<5x3xbf16>", 2);
    out.push_back({"split", f});
  }
  return out;
}

[[noreturn]] void fail(const std::string &name, const char *what) {
  llvm::report_fatal_error(llvm::Twine("pointwise instance '") + name + "' " +
                           what);
}

} // namespace

std::vector<TemplateInstance> pointwiseTemplateInstances() {
  MLIRContext context;
  context.loadDialect<KilnDialect, func::FuncDialect>();
  std::vector<TemplateInstance> instances;
  // The kernels of `plans` rendered for each architecture: one instance per
  // kernel when the architectures give the same source, else one each.
  auto add =
      [&](const std::string &stem,
          const std::vector<std::pair<std::string, std::string>> &sources) {
        if (sources[0].second == sources[1].second) {
          instances.push_back(
              {stem, sources[0].second, {sources[0].first, sources[1].first}});
          return;
        }
        for (const auto &[arch, source] : sources)
          instances.push_back({stem + "_" + arch, source, {arch}});
      };
  for (const auto &[name, text] : fusions()) {
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(moduleText(text), &context);
    if (!module)
      fail(name, "does not parse");
    FusionOp fusion;
    module->walk([&](FusionOp f) { fusion = f; });
    // kernel -> (arch, source) for each architecture, and the width-2
    // variant of the f32 kernel.
    std::vector<std::vector<std::pair<std::string, std::string>>> kernels,
        widthTwo;
    std::vector<std::string> stems;
    for (const char *arch : {"sm_90", "sm_80"}) {
      const GpuTarget &target = *GpuTarget::forArch(arch);
      FailureOr<std::vector<pointwise::KernelPlan>> plans =
          pointwise::planKernels(fusion, target);
      if (failed(plans))
        fail(name, "is not planned");
      kernels.resize(plans->size());
      stems.resize(plans->size());
      auto render = [&](const pointwise::KernelPlan &plan) {
        FailureOr<KernelSpec> spec = pointwise::kernelSpec(fusion, plan);
        if (failed(spec))
          fail(name, "is not rendered");
        return renderKernel(*spec);
      };
      for (auto [k, plan] : llvm::enumerate(*plans)) {
        GeneratedKernel kernel = render(plan);
        kernels[k].push_back({arch, kernel.source});
        stems[k] = kernel.templateName + "_" + name +
                   (plans->size() > 1 ? "_" + std::to_string(k) : "");
        if (name == "f32_w4") {
          pointwise::KernelPlan two = plan;
          two.groups[0].width = 2;
          pointwise::layOut(two, target);
          widthTwo.resize(1);
          widthTwo[0].push_back({arch, render(two).source});
        }
      }
    }
    for (size_t k = 0; k < kernels.size(); ++k)
      add(stems[k], kernels[k]);
    if (!widthTwo.empty())
      add("pointwise_f32_w2", widthTwo[0]);
  }
  return instances;
}

} // namespace mlir::kiln::codegen
