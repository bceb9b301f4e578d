//===- ReductionTemplateInstances.cpp - the reduction kernels to check ----===//
//
// Every configuration the reduction planners can choose, rendered by the
// planners themselves: small fusions (single ops wrapped in a fusion, and
// functions of primitives fused as the compiler fuses them) emitted by the
// reduction emitter for sm_90 and for sm_80. They cover each row-kernel
// group size (1..1024 threads per row, cached and re-read rows) for vector
// widths 1, 4 (f32) and 8 (bf16); row and column generic reductions with
// and without splits and their final pass; the softmax, norm, norm
// parameter gradient (one pass and split + final), group norm (channels
// first and last, with their parameter gradients) and loss kernels; and the multi-tensor
// reductions (one block; partial + final), in f32 and bf16.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/TemplateInstances.h"

#include "codegen/cuda/KernelEmitter.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include "llvm/ADT/STLExtras.h"

namespace mlir::kiln::codegen {
namespace {

/// `text` with every `from` replaced by `to`.
std::string replaceAll(std::string text, llvm::StringRef from,
                       llvm::StringRef to) {
  for (size_t at = 0; (at = text.find(from.str(), at)) != std::string::npos;
       at += to.size())
    text.replace(at, from.size(), to.str());
  return text;
}

/// A function with one fusion of the single op `op` (operands %a0..).
std::string singleOp(llvm::StringRef op, llvm::ArrayRef<std::string> operands,
                     llvm::ArrayRef<std::string> results) {
  std::string args, names, block, types, resultTypes, yields;
  for (auto [i, type] : llvm::enumerate(operands)) {
    std::string n = std::to_string(i);
    args += (i ? ", %a" : "%a") + n + ": " + type;
    names += (i ? ", %a" : "%a") + n;
    block += (i ? ", %arg" : "%arg") + n + ": " + type;
    types += (i ? ", " : "") + type;
  }
  for (auto [i, type] : llvm::enumerate(results)) {
    resultTypes += (i ? ", " : "") + type;
    yields +=
        results.size() == 1 ? "%r" : (i ? ", %r#" : "%r#") + std::to_string(i);
  }
  std::string decl =
      results.size() == 1 ? "%r" : "%r:" + std::to_string(results.size());
  return "func.func @f(" + args +
         ") {\n  %f:" + std::to_string(results.size()) +
         " = kiln.fusion \"reduction\" (" + names + ") : (" + types + ") -> (" +
         resultTypes + ") {\n  ^bb0(" + block + "):\n    " + decl + " = " +
         op.str() + "\n    kiln.yield " + yields + " : " + resultTypes +
         "\n  }\n  return\n}\n";
}

using Case = InstanceCase;

std::vector<Case> cases() {
  std::vector<Case> all;
  auto single = [&](std::string label, std::string op,
                    std::vector<std::string> operands,
                    std::vector<std::string> results) {
    all.push_back({std::move(label), singleOp(op, operands, results)});
  };
  auto tensor = [](llvm::StringRef shape, llvm::StringRef type) {
    return "tensor<" + shape.str() + "x" + type.str() + ">";
  };
  // Rows of M elements take 1 .. 1024 threads each (about 8 elements per
  // thread); 50001 elements are re-read.
  const char *lengths[] = {"8",   "16",   "32",   "64",   "128",  "256",
                           "512", "1024", "2048", "4096", "8192", "50001"};
  for (llvm::StringRef type : {"f32", "bf16"})
    for (llvm::StringRef m : lengths) {
      std::string t = tensor("4x" + m.str(), type);
      single(("softmax_" + type + "_m" + m).str(),
             "kiln.softmax %arg0 dim = 1 : " + t, {t}, {t});
    }
  for (llvm::StringRef type : {"f32", "bf16"}) {
    std::string t = tensor("4x1000", type), s = tensor("100x65", type);
    single(("log_softmax_" + type).str(),
           "kiln.log_softmax %arg0 dim = 1 : " + t, {t}, {t});
    single(("log_softmax_strided_" + type).str(),
           "kiln.log_softmax %arg0 dim = 0 : " + s, {s}, {s});
    single(("softmax_strided_" + type).str(),
           "kiln.softmax %arg0 dim = 0 : " + s, {s}, {s});
  }

  // Norms: short, warp and block rows, cached and re-read.
  for (llvm::StringRef type : {"f32", "bf16"})
    for (llvm::StringRef m : {"6", "64", "1024", "8192", "20000"}) {
      std::string x = tensor("16x" + m.str(), type), w = tensor(m, type);
      std::string tag = (type + "_m" + m).str();
      single("layer_norm_" + tag,
             "kiln.layer_norm %arg0, %arg1, %arg2 : " + x + ", " + w + ", " + w,
             {x, w, w}, {x});
      single("rms_norm_" + tag, "kiln.rms_norm %arg0, %arg1 : " + x + ", " + w,
             {x, w}, {x});
      single("rms_norm_backward_" + tag,
             "kiln.rms_norm_backward %arg0, %arg1, %arg2 : " + x + ", " + w,
             {x, x, w}, {x, w});
      single("layer_norm_backward_" + tag,
             "kiln.layer_norm_backward %arg0, %arg1, %arg2 : " + x + ", " + w,
             {x, x, w}, {x, w, w});
    }
  for (llvm::StringRef type : {"f32", "bf16"}) {
    // Parameter gradients split over rows, then added in order; without a
    // weight; only dx.
    std::string x = tensor("8192x1024", type), w = tensor("1024", type);
    single(("layer_norm_backward_split_" + type).str(),
           "kiln.layer_norm_backward %arg0, %arg1, %arg2 : " + x + ", " + w,
           {x, x, w}, {x, w, w});
    std::string y = tensor("4096x256", type), v = tensor("256", type);
    single(("layer_norm_backward_noweight_" + type).str(),
           "kiln.layer_norm_backward %arg0, %arg1 : " + y, {y, y}, {y, v, v});
    single(("layer_norm_noweight_" + type).str(),
           "kiln.layer_norm %arg0 : " + y, {y}, {y});
  }

  // Group norms: rows of a group's channels and positions (short, block,
  // re-read), with per-channel parameters; the backward's per-(sample,
  // channel) sums and their final pass; without parameters.
  // A group norm of `x` with `[C]` parameters `w` and its backward.
  auto groupNorms = [&](const std::string &tag, const std::string &attrs,
                        const std::string &x, const std::string &w) {
    single("group_norm_" + tag,
           "kiln.group_norm %arg0, %arg1, %arg2" + attrs + x + ", " + w +
               ", " + w,
           {x, w, w}, {x});
    single("group_norm_backward_" + tag,
           "kiln.group_norm_backward %arg0, %arg1, %arg2" + attrs + x + ", " +
               w,
           {x, x, w}, {x, w, w});
  };
  for (llvm::StringRef type : {"f32", "bf16"})
    for (auto [shape, groups] :
         {std::pair{"2x8x5x6", "4"}, std::pair{"4x32x32x32", "8"},
          std::pair{"2x64x64x64", "2"}}) {
      std::string x = tensor(shape, type);
      std::string w = tensor(llvm::StringRef(shape).split('x').second.split(
                                 'x').first,
                             type);
      std::string tag = (type + "_" + shape).str();
      std::string attrs = std::string(" groups = ") + groups + " : ";
      groupNorms(tag, attrs, x, w);
      single("group_norm_noweight_" + tag,
             "kiln.group_norm %arg0" + attrs + x, {x}, {x});
      single("group_norm_backward_noweight_" + tag,
             "kiln.group_norm_backward %arg0, %arg1" + attrs + x, {x, x},
             {x, w, w});
    }
  // Channels last: strided rows, and the parameter gradients' column kernel
  // with each (sample, group)'s statistics, in one split and in several.
  for (llvm::StringRef type : {"f32", "bf16"})
    for (auto [shape, channels, groups] :
         {std::tuple{"2x5x6x8", "8", "4"}, std::tuple{"4x32x32x64", "64", "32"},
          std::tuple{"8x64x64x128", "128", "32"}}) {
      std::string x = tensor(shape, type), w = tensor(channels, type);
      std::string tag = (type + "_nhwc_" + shape).str();
      groupNorms(tag, std::string(" groups = ") + groups + " dim = 3 : ", x,
                 w);
    }

  // Losses.
  for (llvm::StringRef type : {"f32", "bf16"}) {
    std::string g = "tensor<" + type.str() + ">";
    for (llvm::StringRef c : {"10", "1000", "50257"}) {
      std::string l = tensor("32x" + c.str(), type);
      std::string tag = (type + "_c" + c).str();
      single("cross_entropy_" + tag,
             "kiln.cross_entropy %arg0, %arg1 : " + l + ", tensor<32xi32>",
             {l, "tensor<32xi32>"}, {g});
      single("cross_entropy_smoothed_" + tag,
             "kiln.cross_entropy %arg0, %arg1 reduction = sum "
             "label_smoothing = 1.000000e-01 : " +
                 l + ", tensor<32xi32>",
             {l, "tensor<32xi32>"}, {g});
      single("cross_entropy_backward_" + tag,
             "kiln.cross_entropy_backward %arg0, %arg1, %arg2 label_smoothing "
             "= 1.000000e-01 : " +
                 l + ", tensor<32xi32>",
             {g, l, "tensor<32xi32>"}, {l});
      // ignore_index: the mean counts the rows (cross_entropy_count), the
      // sum leaves ignored rows out.
      single("cross_entropy_ignore_" + tag,
             "kiln.cross_entropy %arg0, %arg1 label_smoothing = 1.000000e-01 "
             "ignore_index = -100 : " +
                 l + ", tensor<32xi32>",
             {l, "tensor<32xi32>"}, {g});
      single("cross_entropy_ignore_sum_" + tag,
             "kiln.cross_entropy %arg0, %arg1 reduction = sum ignore_index = "
             "0 : " +
                 l + ", tensor<32xi32>",
             {l, "tensor<32xi32>"}, {g});
      single("cross_entropy_backward_ignore_" + tag,
             "kiln.cross_entropy_backward %arg0, %arg1, %arg2 ignore_index = "
             "-100 : " +
                 l + ", tensor<32xi32>",
             {g, l, "tensor<32xi32>"}, {l});
    }
    // Loss and gradient in one kernel: a constant seed (the training step's)
    // or one read from memory; cached, re-read and odd-length rows.
    for (llvm::StringRef c : {"10", "1000", "32768", "50257"}) {
      std::string l = tensor("32x" + c.str(), type);
      // The seed constant or read; ignore_index's counted mean with either.
      for (int variant = 0; variant < 4; ++variant) {
        bool constantSeed = variant % 2 == 0, ignore = variant >= 2;
        std::string seed = constantSeed ? "%s" : "%seed";
        std::string attrs = std::string("label_smoothing = 0.1") +
                            (ignore ? " ignore_index = -100" : "");
        all.push_back(
            {("cross_entropy_fused_" + type + "_c" + c +
              (constantSeed ? "_constant_seed" : "_seed") +
              (ignore ? "_ignore" : ""))
                 .str(),
             "func.func @f(%l: " + l + ", %y: tensor<32xi32>, %seed: " + g +
                 ") -> (" + g + ", " + l + ") {\n" +
                 "  %loss = kiln.cross_entropy %l, %y " + attrs + " : " + l +
                 ", tensor<32xi32>\n" + "  %s = kiln.constant dense<1.0> : " +
                 g + "\n" + "  %g = kiln.cross_entropy_backward " + seed +
                 ", %l, %y " + attrs + " : " + l + ", tensor<32xi32>\n" +
                 "  return %loss, %g : " + g + ", " + l + "\n}\n",
             /*fuse=*/true});
      }
    }
    std::string e = tensor("3000000", type);
    single(("binary_cross_entropy_backward_" + type).str(),
           "kiln.binary_cross_entropy_backward %arg0, %arg1, %arg2 : " + e,
           {g, e, e}, {e});
    single(("binary_cross_entropy_" + type).str(),
           "kiln.binary_cross_entropy %arg0, %arg1 : " + e, {e, e}, {g});
    std::string s = tensor("4x32x1", type);
    single(("mse_loss_" + type).str(),
           "kiln.mse_loss %arg0, %arg1 reduction = mean : " + s, {s, s}, {g});
  }

  // Generic reductions: rows (short, long, split), columns (split or not),
  // argmax, i32.
  for (llvm::StringRef type : {"f32", "bf16"}) {
    auto reduce = [&](std::string label, llvm::StringRef op,
                      llvm::StringRef dims, llvm::StringRef in,
                      llvm::StringRef out) {
      std::string i = tensor(in, type), o = out.empty()
                                                ? "tensor<" + type.str() + ">"
                                                : tensor(out, type);
      single(label + "_" + type.str(),
             "kiln." + op.str() + " %arg0 dims = [" + dims.str() + "] : " + i,
             {i}, {o});
    };
    reduce("reduce_sum_rows", "reduce_sum", "2", "4x8x3", "4x8");
    reduce("reduce_mean_long_rows", "reduce_mean", "1", "3x2000000", "3");
    reduce("reduce_sum_all", "reduce_sum", "0, 1", "1000x1001", "");
    reduce("reduce_max_columns", "reduce_max", "0", "37x5x70", "5x70");
    reduce("reduce_sum_long_columns", "reduce_sum", "0", "100000x3", "3");
    reduce("reduce_min_groups", "reduce_min", "1, 3", "2x9x4x5", "2x4");
    std::string a = tensor("2x3x50000", type);
    single(("argmax_rows_" + type).str(), "kiln.argmax %arg0 dim = 2 : " + a,
           {a}, {"tensor<2x3xi32>"});
    std::string b = tensor("300x7", type);
    single(("argmax_columns_" + type).str(), "kiln.argmax %arg0 dim = 0 : " + b,
           {b}, {"tensor<7xi32>"});
  }
  single("reduce_sum_i32",
         "kiln.reduce_sum %arg0 dims = [1] : tensor<6x1000xi32>",
         {"tensor<6x1000xi32>"}, {"tensor<6xi32>"});

  // Composed row kernels (softmax from primitives): widths 1 (odd rows),
  // 4 (f32) and 8 (bf16), every group size, cached and re-read.
  const char *softmax = R"mlir(
    func.func @f(%x: tensor<8xMxT>) -> tensor<8xMxT> {
      %m = kiln.reduce_max %x dims = [1] keepdim : tensor<8xMxT>
      %d = kiln.sub %x, %m : tensor<8xMxT>, tensor<8x1xT>
      %e = kiln.exp %d : tensor<8xMxT>
      %s = kiln.reduce_sum %e dims = [1] keepdim : tensor<8xMxT>
      %y = kiln.div %e, %s : tensor<8xMxT>, tensor<8x1xT>
      return %y : tensor<8xMxT>
    })mlir";
  auto composed = [&](std::string label, llvm::StringRef text,
                      llvm::StringRef type, llvm::StringRef m) {
    std::string source = replaceAll(text.str(), "xT>", "x" + type.str() + ">");
    source = replaceAll(source, "<T>", "<" + type.str() + ">");
    all.push_back({std::move(label), replaceAll(source, "M", m),
                   /*fuse=*/true});
  };
  for (llvm::StringRef type : {"f32", "bf16"}) {
    for (llvm::StringRef m : {"16", "32", "64", "128", "256", "512", "1024",
                              "2048", "4096", "8192", "16384", "40000"})
      composed(("fused_rows_" + type + "_m" + m).str(), softmax, type, m);
    composed(("fused_rows_" + type + "_m37").str(), softmax, type, "37");
  }

  // A generic reduction with a prologue output and a column epilogue.
  const char *meanAndColumns = R"mlir(
    func.func @f(%x: tensor<6xMxT>, %w: tensor<MxT>)
        -> (tensor<6xT>, tensor<MxT>, tensor<6xMxT>) {
      %p = kiln.mul %x, %w : tensor<6xMxT>, tensor<MxT>
      %s = kiln.reduce_sum %p dims = [1] : tensor<6xMxT>
      %n = kiln.constant dense<37.0> : tensor<T>
      %m = kiln.div %s, %n : tensor<6xT>, tensor<T>
      %c = kiln.reduce_max %x dims = [0] : tensor<6xMxT>
      %e = kiln.exp %c : tensor<MxT>
      return %m, %e, %p : tensor<6xT>, tensor<MxT>, tensor<6xMxT>
    })mlir";
  // Multi-tensor: the norm of several tensors and a max, one block when
  // small, partials and a final pass when large.
  const char *multi = R"mlir(
    func.func @f(%a: tensor<MxT>, %b: tensor<3001xf32>, %c: tensor<77x5xbf16>, %k: tensor<300xi32>) -> (tensor<f32>, tensor<f32>, tensor<i32>) {
      %af = kiln.cast %a : tensor<MxT> to tensor<Mxf32>
      %a2 = kiln.mul %af, %af : tensor<Mxf32>, tensor<Mxf32>
      %sa = kiln.reduce_sum %a2 dims = [0] : tensor<Mxf32>
      %b2 = kiln.mul %b, %b : tensor<3001xf32>, tensor<3001xf32>
      %sb = kiln.reduce_sum %b2 dims = [0] : tensor<3001xf32>
      %t = kiln.add %sa, %sb : tensor<f32>, tensor<f32>
      %n = kiln.sqrt %t : tensor<f32>
      %cf = kiln.cast %c : tensor<77x5xbf16> to tensor<77x5xf32>
      %cd = kiln.abs %cf : tensor<77x5xf32>
      %mc = kiln.reduce_max %cd dims = [0, 1] : tensor<77x5xf32>
      %sk = kiln.reduce_sum %k dims = [0] : tensor<300xi32>
      return %n, %mc, %sk : tensor<f32>, tensor<f32>, tensor<i32>
    })mlir";
  for (llvm::StringRef type : {"f32", "bf16"}) {
    composed(("fused_mean_columns_" + type).str(), meanAndColumns, type, "37");
    composed(("multi_tensor_small_" + type).str(), multi, type, "64");
    composed(("multi_tensor_large_" + type).str(), multi, type, "2000000");
  }
  return all;
}

} // namespace

std::vector<TemplateInstance> reductionTemplateInstances() {
  std::unique_ptr<KernelEmitter> emitter = createReductionEmitter();
  return emitTemplateInstances("reduce", "reduction", *emitter, cases());
}

} // namespace mlir::kiln::codegen
