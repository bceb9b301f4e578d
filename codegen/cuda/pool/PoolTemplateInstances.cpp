//===- PoolTemplateInstances.cpp - the pooling kernels to check -----------===//
//
// Every kernel of kernels/pool.cuh the pool planner chooses, planned and
// rendered by the planner itself for sm_90 and sm_80: max and average
// pooling and their gradients in NCHW and NHWC, f32, bf16 and f16; channel
// vectors of 1, 2, 4 and 8; clipped and padding-counting averages; max
// pooling's gradient recomputing small windows and gathering the argmax of
// overlapping ones; a window as large as the map; and 64-bit indices.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/TemplateInstances.h"

#include "codegen/cuda/KernelEmitter.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include "llvm/ADT/STLExtras.h"

namespace mlir::kiln::codegen {
namespace {

/// A function with one "pool" fusion of `op` over operands %arg0...
std::string poolFusion(llvm::StringRef op,
                       llvm::ArrayRef<std::string> operands,
                       llvm::StringRef result) {
  std::string args, names, block, types;
  for (auto [i, type] : llvm::enumerate(operands)) {
    std::string n = std::to_string(i), sep = i ? ", " : "";
    args += sep + "%a" + n + ": " + type;
    names += sep + "%a" + n;
    block += sep + "%arg" + n + ": " + type;
    types += sep + type;
  }
  return "func.func @f(" + args + ") {\n  %f = kiln.fusion \"pool\" (" +
         names + ") : (" + types + ") -> " + result.str() + " {\n  ^bb0(" +
         block + "):\n    %r = " + op.str() + "\n    kiln.yield %r : " +
         result.str() + "\n  }\n  return\n}\n";
}

using Case = InstanceCase;

/// One pooling geometry: shapes (layout order), window attributes.
struct Geometry {
  std::string tag;
  std::string layout;
  std::string input, output; // "2x3x9x11"
  std::string attrs;         // "kernel = [3, 3] stride = [2, 2] ..."
};

std::vector<Case> cases() {
  std::vector<Case> all;
  auto tensor = [](llvm::StringRef shape, llvm::StringRef type) {
    return "tensor<" + shape.str() + "x" + type.str() + ">";
  };
  const Geometry geometries[] = {
      // Overlapping windows with padding (max gradient through scratch).
      {"nchw_3x3s2p1", "nchw", "2x3x9x11", "2x3x5x6",
       "kernel = [3, 3] stride = [2, 2] padding = [1, 1, 1, 1]"},
      // Non-overlapping windows (max gradient recomputed).
      {"nchw_2x2s2", "nchw", "4x16x32x32", "4x16x16x16",
       "kernel = [2, 2] stride = [2, 2]"},
      // A large window: global pooling of a 7x7 map.
      {"nchw_7x7", "nchw", "8x64x7x7", "8x64x1x1", "kernel = [7, 7]"},
      // NHWC, channels not a multiple of 2.
      {"nhwc_2x3s23", "nhwc", "2x9x11x3", "2x4x3x3",
       "kernel = [2, 3] stride = [2, 3]"},
      // NHWC, vectors of channels: 8 (16-bit types) or 4 (f32).
      {"nhwc_3x3s2p1_c64", "nhwc", "2x17x17x64", "2x9x9x64",
       "kernel = [3, 3] stride = [2, 2] padding = [1, 1, 1, 1]"},
      {"nhwc_2x2s2_c64", "nhwc", "4x16x16x64", "4x8x8x64",
       "kernel = [2, 2] stride = [2, 2]"},
      // NHWC, vectors of 2 channels; stride 1.
      {"nhwc_3x3s1p1_c6", "nhwc", "2x10x10x6", "2x10x10x6",
       "kernel = [3, 3] padding = [1, 1, 1, 1]"},
      // NHWC, vectors of 4 channels (16-bit types) or 2 (f32).
      {"nhwc_2x2s2_c12", "nhwc", "2x8x8x12", "2x4x4x12",
       "kernel = [2, 2] stride = [2, 2]"},
  };
  // Every geometry in f32; those of channel vectors and padding in bf16;
  // one in f16. Padding-counting averages where there is padding.
  for (const Geometry &g : geometries)
    for (llvm::StringRef type : {"f32", "bf16", "f16"}) {
      bool padded = g.attrs.find("padding") != std::string::npos;
      bool vectors = g.layout == "nhwc" && g.tag.find("_c") != std::string::npos;
      if ((type == "bf16" && !vectors && !padded) ||
          (type == "f16" && g.tag != "nhwc_3x3s2p1_c64"))
        continue;
      std::string x = tensor(g.input, type), y = tensor(g.output, type);
      std::string attrs = "layout = " + g.layout + " " + g.attrs;
      std::string tag = g.tag + "_" + type.str();
      all.push_back({"max_" + tag,
                     poolFusion("kiln.max_pool2d %arg0 " + attrs + " : " + x,
                                {x}, y)});
      all.push_back(
          {"avg_" + tag,
           poolFusion("kiln.avg_pool2d %arg0 " + attrs + " : " + x, {x}, y)});
      all.push_back({"max_backward_" + tag,
                     poolFusion("kiln.max_pool2d_backward %arg0, %arg1 " +
                                    attrs + " : " + y + ", " + x,
                                {y, x}, x)});
      all.push_back({"avg_backward_" + tag,
                     poolFusion("kiln.avg_pool2d_backward %arg0 " + attrs +
                                    " : " + y + " -> " + x,
                                {y}, x)});
      if (!padded || type == "f16")
        continue;
      all.push_back({"avg_include_pad_" + tag,
                     poolFusion("kiln.avg_pool2d %arg0 " + attrs +
                                    " count_include_pad : " + x,
                                {x}, y)});
      all.push_back({"avg_backward_include_pad_" + tag,
                     poolFusion("kiln.avg_pool2d_backward %arg0 " + attrs +
                                    " count_include_pad : " + y + " -> " + x,
                                {y}, x)});
    }
  // 64-bit indices: 2^31 elements.
  std::string x = tensor("128x64x512x512", "bf16"),
              y = tensor("128x64x256x256", "bf16");
  std::string attrs = "layout = nchw kernel = [2, 2] stride = [2, 2]";
  all.push_back({"max_i64_bf16", poolFusion("kiln.max_pool2d %arg0 " + attrs +
                                                " : " + x,
                                            {x}, y)});
  all.push_back({"max_backward_i64_bf16",
                 poolFusion("kiln.max_pool2d_backward %arg0, %arg1 " + attrs +
                                " : " + y + ", " + x,
                            {y, x}, x)});
  std::string xs = tensor("128x512x512x64", "f32"),
              ys = tensor("128x255x255x64", "f32");
  std::string overlapping = "layout = nhwc kernel = [3, 3] stride = [2, 2]";
  all.push_back({"max_backward_i64_indexed_f32",
                 poolFusion("kiln.max_pool2d_backward %arg0, %arg1 " +
                                overlapping + " : " + ys + ", " + xs,
                            {ys, xs}, xs)});
  all.push_back({"avg_backward_i64_f32",
                 poolFusion("kiln.avg_pool2d_backward %arg0 " + overlapping +
                                " : " + ys + " -> " + xs,
                            {ys}, xs)});
  return all;
}

} // namespace

std::vector<TemplateInstance> poolTemplateInstances() {
  std::unique_ptr<KernelEmitter> emitter = createPoolEmitter();
  return emitTemplateInstances("pool", "pool", *emitter, cases());
}

} // namespace mlir::kiln::codegen
