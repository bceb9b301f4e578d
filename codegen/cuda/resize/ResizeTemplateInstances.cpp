//===- ResizeTemplateInstances.cpp - the resize gradient's kernels --------===//
//
// Every shape of kernel of kernels/resize.cuh the resize planner chooses,
// planned and rendered by the planner itself for sm_90 and sm_80: nearest
// and linear, one, two and three resized axes (each slot of the view used),
// every coordinate transformation and rounding, f32, bf16 and f16, and
// 64-bit indices. The forward resize is element-wise code, checked with the
// pointwise instances.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/TemplateInstances.h"

#include "codegen/cuda/KernelEmitter.h"

namespace mlir::kiln::codegen {
namespace {

/// A function with one "resize" fusion of a kiln.resize_backward from
/// `output` to `input` (shapes like "2x3x8x10", element type `type`).
std::string resizeFusion(llvm::StringRef attrs, llvm::StringRef output,
                         llvm::StringRef input, llvm::StringRef type) {
  std::string g = "tensor<" + output.str() + "x" + type.str() + ">";
  std::string x = "tensor<" + input.str() + "x" + type.str() + ">";
  return "func.func @f(%a0: " + g + ") {\n  %f = kiln.fusion \"resize\" (%a0) : (" +
         g + ") -> " + x + " {\n  ^bb0(%arg0: " + g +
         "):\n    %r = kiln.resize_backward %arg0 " + attrs.str() + " : " + g +
         " -> " + x + "\n    kiln.yield %r : " + x + "\n  }\n  return\n}\n";
}

std::vector<InstanceCase> cases() {
  struct Geometry {
    const char *tag, *attrs, *output, *input;
  };
  const Geometry geometries[] = {
      {"nearest_2x_nchw",
       "mode = nearest coordinates = asymmetric rounding = floor "
       "scales = [1.0, 1.0, 2.0, 2.0]",
       "2x4x16x16", "2x4x8x8"},
      {"nearest_exact_1p5",
       "mode = nearest coordinates = half_pixel rounding = round_prefer_ceil "
       "scales = [1.0, 1.0, 1.5, 1.5]",
       "2x3x9x7", "2x3x6x5"},
      {"nearest_ceil_down",
       "mode = nearest coordinates = pytorch_half_pixel rounding = ceil "
       "scales = [1.0, 1.0, 0.5, 0.5]",
       "2x3x4x5", "2x3x8x10"},
      {"linear_half_pixel_nchw",
       "mode = linear coordinates = half_pixel "
       "scales = [1.0, 1.0, 2.0, 2.0]",
       "2x4x16x16", "2x4x8x8"},
      {"linear_align_corners_nhwc",
       "mode = linear coordinates = align_corners "
       "scales = [1.0, 2.0, 2.0, 1.0]",
       "2x11x13x6", "2x6x7x6"},
      {"linear_1d_symmetric",
       "mode = linear coordinates = half_pixel_symmetric "
       "scales = [1.0, 1.0, 1.75]",
       "2x3x14", "2x3x8"},
      {"nearest_3d",
       "mode = nearest coordinates = asymmetric rounding = floor "
       "scales = [1.0, 1.0, 2.0, 2.0, 2.0]",
       "1x2x8x8x8", "1x2x4x4x4"},
  };
  std::vector<InstanceCase> all;
  for (const Geometry &g : geometries)
    for (llvm::StringRef type : {"f32", "bf16", "f16"}) {
      if (type == "f16" && llvm::StringRef(g.tag) != "linear_half_pixel_nchw")
        continue;
      all.push_back({std::string(g.tag) + "_" + type.str(),
                     resizeFusion(g.attrs, g.output, g.input, type)});
    }
  // 64-bit indices: 2^31 elements of gradient.
  all.push_back({"nearest_i64_bf16",
                 resizeFusion("mode = nearest coordinates = asymmetric "
                              "rounding = floor scales = [1.0, 1.0, 2.0, 2.0]",
                              "64x32x1024x1024", "64x32x512x512", "bf16")});
  return all;
}

} // namespace

std::vector<TemplateInstance> resizeTemplateInstances() {
  std::unique_ptr<KernelEmitter> emitter = createResizeEmitter();
  return emitTemplateInstances("resize", "resize", *emitter, cases());
}

} // namespace mlir::kiln::codegen
