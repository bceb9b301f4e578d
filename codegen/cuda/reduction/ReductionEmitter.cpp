//===- ReductionEmitter.cpp - kernels of "reduction" fusions --------------===//
//
// A "reduction" fusion holds one reducing op, or primitive reductions
// composed with element-wise ops (ReductionPlan). Every kernel accumulates
// in f32 (i32 sums wrap) with fixed reduction trees, so results are
// deterministic run to run and no atomics are used. The kernel shapes
// (ReductionKernels.h):
//
// - Row kernels (softmax/log_softmax along the innermost dim, the norms and
//   their backward dx, cross entropy and its backward, composed row
//   patterns): GROUP threads (a power of two, 1..1024) own one row of M
//   contiguous elements; several rows share a block when GROUP < 32. Rows of
//   up to 16 elements per thread stay in registers between the passes;
//   longer rows are re-read (from L2). Reductions within the group use warp
//   shuffles, across warps a 32-entry shared scratch.
// - Generic reductions (reduce_sum/mean/max/min with their prologue and
//   epilogue, argmax, mse_loss and binary_cross_entropy): the input shape is
//   collapsed into alternating kept/reduced groups. When the innermost group
//   is reduced, a group of threads walks each output's elements (row mode);
//   otherwise threads map to the contiguous innermost kept group and an
//   8-way split of the reduced index is combined through shared memory
//   (column mode, coalesced, no transpose). When outputs are too few to fill
//   the GPU, the reduced range is split over blocks that write per-block
//   partials to scratch and a second kernel combines them in a fixed order
//   (whole-tensor losses, sum_all, ...). Its split is recorded in the IR
//   (#kiln_cuda.reduction, by --kiln-select-kernels) and rendered as
//   recorded; the other kernels record the blocks they size their grids,
//   chunks and splits for (#kiln_cuda.row_reduction).
// - Multi-tensor reductions (whole-tensor reductions over several tensors,
//   such as a global gradient norm): one kernel of per-block partials over
//   every tensor and one finishing kernel.
// - Weight/bias gradients of the norms: a column kernel over [rows, M] that
//   recomputes x-hat from per-row statistics the dx kernel leaves in
//   scratch, with the same deterministic two-pass split over rows.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/EmitterRegistry.h"
#include "codegen/cuda/EmitterUtils.h"
#include "codegen/cuda/KernelEmitter.h"
#include "codegen/cuda/RecordedKernel.h"
#include "codegen/cuda/reduction/ReductionKernels.h"
#include "codegen/dialect/KilnCudaDialect.h"
#include "compiler/transforms/ReductionPlan.h"

#include "kiln/reduce_layout.cuh"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <optional>

namespace mlir::kiln::codegen {
namespace {

using namespace reduction;

//===----------------------------------------------------------------------===//
// Shared state of one single-op emission
//===----------------------------------------------------------------------===//

struct Emission : KernelSet {
  SingleOpFusion single;

  Emission(SingleOpFusion s, FusionOp fusion, int64_t targetBlocks)
      : KernelSet("// kiln reduction fusion of\n" + describeOp(s.op), fusion,
                  targetBlocks),
        single(std::move(s)) {}

  Operation *op() const { return single.op; }
  /// Launch argument of op operand `i` (a fusion operand).
  LaunchArg operand(unsigned i) const {
    return LaunchArg::operand(single.operandOf[i]);
  }
  bool yields(unsigned result) const { return single.resultOf[result] >= 0; }
  LaunchArg result(unsigned i) const {
    return LaunchArg::result(single.resultOf[i]);
  }
  std::string inDecl(unsigned i, llvm::StringRef name) const {
    return "const " + cudaType(op()->getOperand(i)) + " *__restrict__ " +
           name.str();
  }
  std::string outDecl(unsigned i, llvm::StringRef name) const {
    return cudaType(op()->getResult(i)) + " *__restrict__ " + name.str();
  }
  void addInput(Params &p, unsigned i, llvm::StringRef name) const {
    p.add(inDecl(i, name), operand(i));
  }
  void addOutput(Params &p, unsigned i, llvm::StringRef name) const {
    p.add(outDecl(i, name), result(i));
  }
};

//===----------------------------------------------------------------------===//
// Generic reductions (reduce_*, argmax, whole-tensor losses)
//===----------------------------------------------------------------------===//

/// The input of reduce_sum/mean/max/min or argmax `op` over its dims.
ReduceLayout reduceOpLayout(Operation *op) {
  auto inType = cast<ShapedType>(op->getOperand(0).getType());
  if (auto argmax = dyn_cast<ArgmaxOp>(op))
    return ReduceLayout(inType.getShape(), {int64_t(argmax.getDim())});
  return ReduceLayout(inType.getShape(), reducedDimsOf(op));
}

/// The input of a whole-tensor loss: every dim reduced.
ReduceLayout elementLossLayout(Operation *op) {
  auto type = cast<ShapedType>(op->getOperand(0).getType());
  llvm::SmallVector<int64_t> dims;
  for (int64_t d = 0; d < type.getRank(); ++d)
    dims.push_back(d);
  return ReduceLayout(type.getShape(), dims);
}

/// reduce_sum/mean/max/min and argmax.
LogicalResult emitReduceOp(Emission &e) {
  Operation *op = e.op();
  auto inType = cast<ShapedType>(op->getOperand(0).getType());
  bool isInt = inType.getElementType().isInteger(32);
  std::string value = isInt ? "int" : "float";
  ReduceSpec spec;
  spec.prefix = "kiln_" + op->getName().stripDialect().str();
  Accumulator acc;
  std::string load = "kiln_load(in[off])";
  std::string finish = "acc";
  if (auto argmax = dyn_cast<ArgmaxOp>(op)) {
    acc.type = "kiln_arg<" + value + ">";
    acc.identity = acc.type + (isInt ? "{(-2147483647 - 1), 2147483647}"
                                     : "{-kiln_inf(), 2147483647}");
    acc.combiner = "kiln_argmax_op";
    acc.element = acc.type + "{" + load + ", (int)r}";
    acc.bytes = 8;
    finish = "acc.i";
  } else {
    acc.type = value;
    acc.element = load;
    if (isa<ReduceSumOp, ReduceMeanOp>(op)) {
      acc.combiner = "kiln_sum_op";
      acc.identity = isInt ? "0u" : "0.f";
      if (isInt) {
        // Unsigned arithmetic wraps (two's complement), as the i32 rule says.
        acc.type = "unsigned";
        acc.element = "(unsigned)" + load;
        finish = "(int)acc";
      }
    } else if (isa<ReduceMaxOp>(op)) {
      acc.combiner = "kiln_max_op";
      acc.identity = isInt ? "(-2147483647 - 1)" : "-kiln_inf()";
    } else {
      acc.combiner = "kiln_min_op";
      acc.identity = isInt ? "2147483647" : "kiln_inf()";
    }
  }
  ReduceLayout layout = reduceOpLayout(op);
  if (isa<ReduceMeanOp>(op))
    finish = "acc / " + floatLiteral(double(layout.length));
  spec.accs.push_back(acc);
  e.addInput(spec.elementParams, 0, "in");
  e.addOutput(spec.finishParams, 0, "out");
  spec.finish = "kiln_store(out + o, " + finish + ");\n";
  emitReduce(e, spec, layout);
  return success();
}

/// mse_loss and binary_cross_entropy: an elementwise term summed over every
/// element.
LogicalResult emitElementLoss(Emission &e, llvm::StringRef term,
                              Reduction reduction) {
  auto type = cast<ShapedType>(e.op()->getOperand(0).getType());
  ReduceLayout layout = elementLossLayout(e.op());
  ReduceSpec spec;
  spec.prefix = "kiln_" + e.op()->getName().stripDialect().str();
  spec.accs.push_back({"float", "0.f", "kiln_sum_op", term.str(), 4});
  std::string finish =
      reduction == Reduction::mean
          ? "acc / " + floatLiteral(double(type.getNumElements()))
          : "acc";
  e.addInput(spec.elementParams, 0, "a");
  e.addInput(spec.elementParams, 1, "b");
  e.addOutput(spec.finishParams, 0, "out");
  spec.finish = "kiln_store(out + o, " + finish + ");\n";
  emitReduce(e, spec, layout);
  return success();
}

//===----------------------------------------------------------------------===//
// Softmax and log_softmax
//===----------------------------------------------------------------------===//

/// A kernel of one of the single-op templates: its functors define `cfg`
/// (`config`, extended by `members` when given) and its body calls
/// `kiln::reduce::<call>` with the context and `args`.
KernelSpec templateKernel(llvm::StringRef prefix, llvm::StringRef file,
                          llvm::StringRef name, std::string configuration,
                          llvm::StringRef config, llvm::StringRef members,
                          llvm::StringRef call, const Params &args) {
  KernelSpec spec;
  spec.prefix = prefix.str();
  spec.templates = {("kiln/" + file).str()};
  spec.templateName = name.str();
  spec.configuration = std::move(configuration);
  spec.functors = members.empty() ? "using cfg = " + config.str() + ";\n"
                                  : "struct cfg : " + config.str() + " {\n" +
                                        members.str() + "};\n";
  std::string list;
  for (const std::string &decl : args.decls)
    list += ", " + splitDecl(decl).second;
  spec.body = "  kiln::reduce::" + call.str() + "(ctx" + list + ");\n";
  return spec;
}

/// A `static constexpr float` member of a configuration.
std::string floatMember(llvm::StringRef name, double value) {
  return "  static constexpr float " + name.str() + " = " +
         floatLiteral(value) + ";\n";
}

/// `kiln::reduce::row_config<idx_t, rows, m>` and its --stats line.
std::string rowConfig(llvm::StringRef name, int64_t rows, int64_t m,
                      llvm::StringRef extra = "") {
  return llvm::formatv("kiln::reduce::{0}<idx_t, {1}, {2}{3}>", name, rows, m,
                       extra)
      .str();
}

LogicalResult emitSoftmax(Emission &e, int64_t dim, bool log) {
  auto type = cast<ShapedType>(e.op()->getOperand(0).getType());
  llvm::ArrayRef<int64_t> shape = type.getShape();
  int64_t outer = 1, size = shape[dim], inner = 1;
  for (int64_t d = 0; d < dim; ++d)
    outer *= shape[d];
  for (int64_t d = dim + 1; d < type.getRank(); ++d)
    inner *= shape[d];
  if (outer * size * inner == 0)
    return success();
  std::string prefix = log ? "kiln_log_softmax" : "kiln_softmax";
  std::string types =
      cudaType(e.op()->getOperand(0)) + ", " + cudaType(e.op()->getResult(0));
  std::string logArg = log ? "true" : "false";
  Params params;
  e.addInput(params, 0, "in");
  e.addOutput(params, 0, "out");
  if (inner == 1) {
    RowKernel row(outer, size);
    KernelSpec spec = templateKernel(
        prefix, "softmax.cuh", "softmax_rows", row.configuration(),
        rowConfig("row_config", outer, size), "",
        "softmax_rows<cfg, " + logArg + ", " + types + ">", params);
    spec.grid = row.grid();
    spec.block = row.block();
    e.kernel(std::move(spec), params);
    return success();
  }
  int64_t tiles = ::kiln::reduce::ceil_div(inner, ::kiln::reduce::kColumnTile);
  KernelSpec spec = templateKernel(
      prefix + "_strided", "softmax.cuh", "softmax_strided",
      llvm::formatv("outer={0} size={1} inner={2}", outer, size, inner),
      llvm::formatv("kiln::reduce::strided_config<idx_t, {0}, {1}, {2}>", outer,
                    size, inner)
          .str(),
      "", "softmax_strided<cfg, " + logArg + ", " + types + ">", params);
  spec.grid = dim3Of(tiles * outer);
  spec.block =
      dim3Of(::kiln::reduce::kColumnTile, ::kiln::reduce::kColumnSplit);
  e.kernel(std::move(spec), params);
  return success();
}

//===----------------------------------------------------------------------===//
// Norms
//===----------------------------------------------------------------------===//

/// The column kernel of the weight (and bias) gradients of a norm over
/// [rows, M]: sum over rows of grad * xh (and of grad), with xh recomputed
/// from the per-row (mean, rstd) in `stats`; rows split over blocks when
/// the columns alone do not fill the GPU and there are enough rows (1024 per
/// split) to pay for the second launch, then combined in order. A small
/// norm (a few hundred rows) is one launch: its step is launch-bound.
/// `groupsLast` names a channels-last group norm's groups and positions
/// (element (r, j) then has the statistics of sample r / positions' group
/// of channel j; rows = N * positions, m = C); 0: the row's statistics.
void emitNormParamGrads(Emission &e, int64_t rows, int64_t m, uint64_t stats,
                        int weightResult, int biasResult,
                        int64_t groupsLast = 0, int64_t positions = 0) {
  namespace layout = ::kiln::reduce;
  int64_t chunk = layout::norm_param_chunk(rows, m, e.targetBlocks);
  int64_t splits = layout::split_count(rows, chunk);
  bool bias = biasResult >= 0;
  bool weight = weightResult >= 0;
  std::string config = llvm::formatv(
      "kiln::reduce::{0}<idx_t, {1}, {2}, {3}, {4}, {5}{6}>",
      groupsLast ? "group_norm_nhwc_param_config" : "norm_param_config", rows,
      m, chunk, weight ? "true" : "false", bias ? "true" : "false",
      groupsLast ? llvm::formatv(", {0}, {1}", groupsLast, positions).str()
                 : "");
  std::string configuration =
      llvm::formatv("rows={0} m={1} splits={2}{3}{4}{5}", rows, m, splits,
                    weight ? " weight" : "", bias ? " bias" : "",
                    groupsLast ? " groups=" + std::to_string(groupsLast) +
                                     " channels-last"
                               : "");

  Params params;
  e.addInput(params, 0, "grad");
  e.addInput(params, 1, "input");
  params.add("const float2 *__restrict__ stats", LaunchArg::scratch(stats));
  uint64_t partialW = 0, partialB = 0;
  std::string outTypes, outArgs;
  if (splits == 1) {
    if (weight)
      e.addOutput(params, weightResult, "dw");
    if (bias)
      e.addOutput(params, biasResult, "db");
  } else {
    if (weight) {
      partialW = e.builder.scratch(splits * m * 4);
      params.add("float *__restrict__ dw", LaunchArg::scratch(partialW));
    }
    if (bias) {
      partialB = e.builder.scratch(splits * m * 4);
      params.add("float *__restrict__ db", LaunchArg::scratch(partialB));
    }
  }
  std::string args = ", grad, input, stats, " +
                     std::string(weight ? "dw" : "(float *)nullptr") + ", " +
                     (bias ? "db" : "(float *)nullptr");
  KernelSpec spec =
      templateKernel("kiln_norm_param_grad", "norm.cuh", "norm_param_grad",
                     configuration, config, "", "", {});
  spec.body = "  kiln::reduce::norm_param_grad<cfg>(ctx" + args + ");\n";
  spec.grid = dim3Of(layout::ceil_div(m, layout::kColumnTile), splits);
  spec.block = dim3Of(layout::kColumnTile, layout::kColumnSplit);
  e.kernel(std::move(spec), params);
  if (splits == 1)
    return;
  Params final;
  std::string finalArgs;
  for (auto [present, partialOffset, result, name] :
       {std::tuple{weight, partialW, weightResult, std::string("w")},
        std::tuple{bias, partialB, biasResult, std::string("b")}}) {
    if (!present) {
      finalArgs += ", (const float *)nullptr, (float *)nullptr";
      continue;
    }
    final.add("const float *__restrict__ p" + name,
              LaunchArg::scratch(partialOffset));
    e.addOutput(final, result, "d" + name);
    finalArgs += ", p" + name + ", d" + name;
  }
  KernelSpec finalSpec = templateKernel("kiln_norm_param_grad_final",
                                        "norm.cuh", "norm_param_grad_final",
                                        configuration, config, "", "", {});
  finalSpec.body =
      "  kiln::reduce::norm_param_grad_final<cfg>(ctx" + finalArgs + ");\n";
  finalSpec.grid = dim3Of(layout::ceil_div(m, layout::kFinalThreads));
  finalSpec.block = dim3Of(layout::kFinalThreads);
  e.kernel(std::move(finalSpec), final);
}

/// The parameter gradients of a group norm of [N, C, S...] in `groups`
/// groups: a row kernel of the sums of grad * xh and grad over each
/// (sample, channel)'s S positions, with its group's statistics in `stats`,
/// into scratch; then a kernel that adds each channel's sums in sample
/// order.
void emitGroupNormParamGrads(Emission &e, ShapedType type, int64_t groups,
                             uint64_t stats, int weightResult,
                             int biasResult) {
  int64_t n = type.getDimSize(0), channels = type.getDimSize(1);
  int64_t spatial = channels ? type.getNumElements() / (n * channels) : 0;
  bool weight = weightResult >= 0, bias = biasResult >= 0;
  auto flag = [](bool b) { return b ? "true" : "false"; };
  uint64_t sums = e.builder.scratch(n * channels * 8);
  RowKernel row(n * channels, spatial);
  Params params;
  e.addInput(params, 0, "grad");
  e.addInput(params, 1, "input");
  params.add("const float2 *__restrict__ stats", LaunchArg::scratch(stats));
  params.add("float2 *__restrict__ sums", LaunchArg::scratch(sums));
  KernelSpec spec = templateKernel(
      "kiln_group_norm_channel_sums", "norm.cuh", "group_norm_channel_sums",
      row.configuration(), row.config(), "",
      llvm::formatv("group_norm_channel_sums<cfg, {0}, {1}>", groups,
                    channels)
          .str(),
      params);
  spec.grid = row.grid();
  spec.block = row.block();
  e.kernel(std::move(spec), params);

  Params final;
  final.add("const float2 *__restrict__ sums", LaunchArg::scratch(sums));
  std::string args = ", sums";
  for (auto [present, result, name] : {std::tuple{weight, weightResult, "dw"},
                                       std::tuple{bias, biasResult, "db"}}) {
    if (present) {
      e.addOutput(final, result, name);
      args += std::string(", ") + name;
    } else {
      args += ", (float *)nullptr";
    }
  }
  KernelSpec finalSpec =
      templateKernel("kiln_group_norm_param_final", "norm.cuh",
                     "group_norm_param_final", llvm::formatv("n={0} c={1}", n,
                                                             channels),
                     "idx_t", "", "", {});
  finalSpec.functors.clear();
  finalSpec.body = llvm::formatv("  kiln::reduce::group_norm_param_final<"
                                 "idx_t, {0}, {1}, {2}, {3}>(ctx{4});\n",
                                 n, channels, flag(weight), flag(bias), args)
                       .str();
  finalSpec.grid = dim3Of(::kiln::reduce::ceil_div(channels, 256));
  finalSpec.block = dim3Of(256);
  e.kernel(std::move(finalSpec), final);
}

/// layer_norm, rms_norm, group_norm and their backward ops.
LogicalResult emitNorm(Emission &e) {
  Operation *op = e.op();
  bool backward =
      isa<LayerNormBackwardOp, RmsNormBackwardOp, GroupNormBackwardOp>(op);
  bool layer = isa<LayerNormOp, LayerNormBackwardOp, GroupNormOp,
                   GroupNormBackwardOp>(op);
  Value input = op->getOperand(backward ? 1 : 0);
  auto type = cast<ShapedType>(input.getType());
  int64_t normalizedDims = 1;
  // A group norm's rows are (sample, group) pairs: every dim but the first
  // is normalised, in `groups` rows per sample; its channels are at dim 1
  // or, channels last, at the last dim.
  int64_t groups = 0, channelDim = 1;
  double eps;
  Value weight, bias;
  if (auto n = dyn_cast<GroupNormOp>(op)) {
    groups = n.getGroups();
    channelDim = n.getDim();
    eps = n.getEps().convertToDouble();
    weight = n.getWeight();
    bias = n.getBias();
  } else if (auto n = dyn_cast<GroupNormBackwardOp>(op)) {
    groups = n.getGroups();
    channelDim = n.getDim();
    eps = n.getEps().convertToDouble();
    weight = n.getWeight();
  } else if (auto n = dyn_cast<LayerNormOp>(op)) {
    normalizedDims = n.getNumNormalizedDims();
    eps = n.getEps().convertToDouble();
    weight = n.getWeight();
    bias = n.getBias();
  } else if (auto n = dyn_cast<RmsNormOp>(op)) {
    eps = n.getEps().convertToDouble();
    weight = n.getWeight();
  } else if (auto n = dyn_cast<LayerNormBackwardOp>(op)) {
    normalizedDims = n.getNumNormalizedDims();
    eps = n.getEps().convertToDouble();
    weight = n.getWeight();
  } else {
    auto r = cast<RmsNormBackwardOp>(op);
    eps = r.getEps().convertToDouble();
    weight = r.getWeight();
  }
  int64_t m = 1;
  if (groups) {
    for (int64_t s : type.getShape().drop_front())
      m *= s;
    m /= groups;
  } else {
    for (int64_t s : type.getShape().take_back(normalizedDims))
      m *= s;
  }
  int64_t rows = m ? type.getNumElements() / m : 0;
  std::string prefix = "kiln_" + op->getName().stripDialect().str();
  unsigned weightOperand = backward ? 2 : 1;

  RowKernel row(rows, m);
  Params params;
  if (backward)
    e.addInput(params, 0, "grad");
  e.addInput(params, backward ? 1 : 0, "in");
  if (weight)
    e.addInput(params, weightOperand, "weight");
  if (bias)
    e.addInput(params, 2, "bias");
  bool writeOut = e.yields(0);
  if (writeOut)
    e.addOutput(params, 0, "out");
  // Backward ops leave each row's statistics for the parameter gradients.
  bool paramGrads = backward && (e.yields(1) || (layer && e.yields(2)));
  uint64_t stats = 0;
  if (paramGrads && rows > 0) {
    stats = e.builder.scratch(rows * 8);
    params.add("float2 *__restrict__ stats", LaunchArg::scratch(stats));
  }

  auto flag = [](bool b) { return b ? "true" : "false"; };
  bool channelsLast = groups && channelDim != 1;
  int64_t spatial = groups ? m / (type.getDimSize(channelDim) / groups) : 0;
  std::string config =
      groups ? rowConfig(channelsLast ? "group_norm_nhwc_config"
                                      : "group_norm_config",
                         rows, m,
                         llvm::formatv(", {0}, {1}, {2}, {3}",
                                       flag(bool(weight)), flag(bool(bias)),
                                       groups, spatial)
                             .str())
             : rowConfig("norm_config", rows, m,
                         llvm::formatv(", {0}, {1}, {2}", flag(layer),
                                       flag(bool(weight)), flag(bool(bias)))
                             .str());
  std::string weightArg = weight ? "weight" : "(const float *)nullptr";
  std::string call, args;
  if (!backward) {
    call = "norm_forward<cfg>";
    args = ", in, " + weightArg + ", " +
           (bias ? "bias" : "(const float *)nullptr") + ", out";
  } else {
    call = llvm::formatv("norm_backward<cfg, {0}, {1}>", flag(writeOut),
                         flag(paramGrads))
               .str();
    args = ", grad, in, " + weightArg + ", " +
           (writeOut ? "out" : "(float *)nullptr") + ", " +
           (paramGrads ? "stats" : "(float2 *)nullptr");
  }
  if (rows > 0 && m > 0) {
    KernelSpec spec = templateKernel(
        prefix, "norm.cuh", backward ? "norm_backward" : "norm_forward",
        row.configuration() +
            (groups   ? " groups=" + std::to_string(groups) +
                            (channelsLast ? " channels-last" : "")
             : layer ? std::string(" layer")
                     : std::string(" rms")),
        config,
        floatMember("eps", eps), "", {});
    spec.body = "  kiln::reduce::" + call + "(ctx" + args + ");\n";
    spec.grid = row.grid();
    spec.block = row.block();
    // A re-read backward row of 1024 threads is allocated 32 registers
    // either way; saying that two blocks share an SM lets ptxas schedule the
    // f32 divisions' slow path within them instead of spilling around it.
    // (Cached rows need their registers.)
    if (backward && row.threads == 1024 && !row.cached)
      spec.minBlocksPerSm = 2;
    e.kernel(std::move(spec), params);
  }
  if (paramGrads && m > 0) {
    if (rows == 0) {
      // No rows: the parameter gradients are zeros.
      Params zero;
      KernelSpec spec = templateKernel("kiln_zero", "norm.cuh", "zero_columns",
                                       "m=" + str(m), "idx_t", "", "", {});
      spec.functors.clear();
      for (unsigned r = 1; r < op->getNumResults(); ++r)
        if (e.yields(r)) {
          e.addOutput(zero, r, "d" + str(r));
          spec.body += "  kiln::reduce::zero_columns<idx_t, " + str(m) +
                       ">(ctx, d" + str(r) + ");\n";
        }
      spec.grid = dim3Of(::kiln::reduce::ceil_div(m, 256));
      spec.block = dim3Of(256);
      e.kernel(std::move(spec), zero);
    } else if (channelsLast) {
      int64_t channels = type.getDimSize(channelDim);
      emitNormParamGrads(e, type.getNumElements() / channels, channels, stats,
                         e.yields(1) ? 1 : -1, e.yields(2) ? 2 : -1, groups,
                         spatial);
    } else if (groups) {
      emitGroupNormParamGrads(e, type, groups, stats, e.yields(1) ? 1 : -1,
                              e.yields(2) ? 2 : -1);
    } else {
      emitNormParamGrads(e, rows, m, stats, e.yields(1) ? 1 : -1,
                         layer && e.yields(2) ? 2 : -1);
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Cross entropy
//===----------------------------------------------------------------------===//

/// What configures a cross entropy's kernels besides its shape.
struct CrossEntropyForm {
  double eps = 0;
  std::optional<int64_t> ignore;
  Reduction reduction = Reduction::mean;

  template <typename LossOp> static CrossEntropyForm of(LossOp op) {
    return {op.getLabelSmoothing().convertToDouble(), op.getIgnoreIndex(),
            op.getReduction()};
  }
  bool operator==(const CrossEntropyForm &other) const {
    return eps == other.eps && ignore == other.ignore &&
           reduction == other.reduction;
  }
  /// Whether the mean divides by the count of the rows not ignored
  /// (cross_entropy_count) rather than by N.
  bool counted() const { return ignore && reduction == Reduction::mean; }
  /// The incoming gradient's factor fixed at compile time (a counted mean
  /// divides by the count in the kernel).
  double scale(int64_t n) const {
    return reduction == Reduction::mean && !counted() ? 1.0 / n : 1.0;
  }
  /// The --stats words of the configuration.
  std::string words() const {
    return std::string(eps != 0 ? " smoothing" : "") +
           (ignore ? " ignore=" + str(*ignore) : "") +
           (counted() ? " counted" : "");
  }
  /// The configuration members over C classes: label smoothing, the ignored
  /// label and whether the mean is counted.
  std::string members(int64_t c) const {
    return floatMember("keep", 1 - eps) +
           floatMember("smooth", eps / double(c)) +
           "  static constexpr bool smoothing = " +
           (eps != 0 ? "true" : "false") +
           ";\n  static constexpr bool ignores = " +
           (ignore ? "true" : "false") +
           ";\n  static constexpr int ignore_index = " +
           str(ignore.value_or(0)) + ";\n  static constexpr bool counted = " +
           (counted() ? "true" : "false") + ";\n";
  }
};

/// One block counts the rows whose label (`labels`, N of them) is not
/// `ignore` into a float of scratch, which it returns.
uint64_t emitLabelCount(KernelSet &kernels, LaunchArg labels, int64_t n,
                        int64_t ignore) {
  uint64_t count = kernels.builder.scratch(4);
  Params params;
  params.add("const int *__restrict__ labels", labels);
  params.add("float *__restrict__ count", LaunchArg::scratch(count));
  KernelSpec spec = templateKernel(
      "kiln_cross_entropy_count", "cross_entropy.cuh", "cross_entropy_count",
      "n=" + str(n) + " ignore=" + str(ignore),
      llvm::formatv("kiln::reduce::label_count_config<idx_t, {0}, {1}>", n,
                    ignore)
          .str(),
      "", "cross_entropy_count<cfg>", params);
  spec.grid = dim3Of(1);
  spec.block = dim3Of(256);
  kernels.kernel(std::move(spec), params);
  return count;
}

/// The scratch of the count of rows not ignored when `form` needs one
/// (emitting its kernel), else nothing.
std::optional<uint64_t> countIfNeeded(KernelSet &kernels,
                                      const CrossEntropyForm &form,
                                      LaunchArg labels, int64_t n) {
  if (!form.counted())
    return std::nullopt;
  return emitLabelCount(kernels, labels, n, *form.ignore);
}

/// Adds the `count` parameter when there is one.
void addCount(Params &params, std::optional<uint64_t> count) {
  if (count)
    params.add("const float *__restrict__ count", LaunchArg::scratch(*count));
}

/// One block adds the row losses (scratch) in a fixed order into the loss;
/// `params` binds `row_loss` and `out` (and `count` for a counted mean).
void emitCrossEntropyTotal(KernelSet &kernels, const Params &params, int64_t n,
                           int64_t c, const CrossEntropyForm &form) {
  bool mean = form.reduction == Reduction::mean;
  KernelSpec spec = templateKernel(
      "kiln_cross_entropy_total", "cross_entropy.cuh", "cross_entropy_total",
      "n=" + str(n) + (mean ? " mean" : " sum") +
          (form.counted() ? " counted" : ""),
      llvm::formatv("kiln::reduce::loss_total_config<idx_t, {0}, {1}, {2}, "
                    "{3}>",
                    n, c > 0 ? "true" : "false", mean ? "true" : "false",
                    form.counted() ? "true" : "false")
          .str(),
      "", "cross_entropy_total<cfg>", params);
  spec.grid = dim3Of(1);
  spec.block = dim3Of(256);
  kernels.kernel(std::move(spec), params);
}

LogicalResult emitCrossEntropy(Emission &e) {
  auto loss = cast<CrossEntropyOp>(e.op());
  auto type = cast<ShapedType>(loss.getLogits().getType());
  int64_t n = type.getDimSize(0), c = type.getDimSize(1);
  CrossEntropyForm form = CrossEntropyForm::of(loss);
  uint64_t rowLoss = e.builder.scratch(std::max<int64_t>(n, 1) * 4);
  if (n > 0 && c > 0) {
    RowKernel row(n, c);
    Params params;
    e.addInput(params, 0, "logits");
    e.addInput(params, 1, "labels");
    params.add("float *__restrict__ row_loss", LaunchArg::scratch(rowLoss));
    KernelSpec spec =
        templateKernel("kiln_cross_entropy_rows", "cross_entropy.cuh",
                       "cross_entropy_rows", row.configuration() + form.words(),
                       rowConfig("cross_entropy_config", n, c), form.members(c),
                       "cross_entropy_rows<cfg>", params);
    spec.grid = row.grid();
    spec.block = row.block();
    e.kernel(std::move(spec), params);
  }
  std::optional<uint64_t> count = countIfNeeded(e, form, e.operand(1), n);
  Params final;
  final.add("const float *__restrict__ row_loss", LaunchArg::scratch(rowLoss));
  e.addOutput(final, 0, "out");
  addCount(final, count);
  emitCrossEntropyTotal(e, final, n, c, form);
  return success();
}

LogicalResult emitCrossEntropyBackward(Emission &e) {
  auto loss = cast<CrossEntropyBackwardOp>(e.op());
  auto type = cast<ShapedType>(loss.getLogits().getType());
  int64_t n = type.getDimSize(0), c = type.getDimSize(1);
  if (n * c == 0)
    return success();
  CrossEntropyForm form = CrossEntropyForm::of(loss);
  std::optional<uint64_t> count = countIfNeeded(e, form, e.operand(2), n);
  RowKernel row(n, c);
  Params params;
  e.addInput(params, 0, "grad");
  e.addInput(params, 1, "logits");
  e.addInput(params, 2, "labels");
  e.addOutput(params, 0, "out");
  addCount(params, count);
  KernelSpec spec = templateKernel(
      "kiln_cross_entropy_backward", "cross_entropy.cuh",
      "cross_entropy_backward", row.configuration() + form.words(),
      rowConfig("cross_entropy_config", n, c),
      form.members(c) + floatMember("scale", form.scale(n)),
      "cross_entropy_backward<cfg>", params);
  spec.grid = row.grid();
  spec.block = row.block();
  e.kernel(std::move(spec), params);
  return success();
}

LogicalResult emitBinaryCrossEntropyBackward(Emission &e) {
  auto loss = cast<BinaryCrossEntropyBackwardOp>(e.op());
  int64_t n = numElementsOf(loss.getLogits());
  if (n == 0)
    return success();
  double reductionScale =
      loss.getReduction() == Reduction::mean ? 1.0 / n : 1.0;
  Params params;
  e.addInput(params, 0, "grad");
  e.addInput(params, 1, "logits");
  e.addInput(params, 2, "target");
  e.addOutput(params, 0, "out");
  int64_t blocks = ::kiln::reduce::element_blocks(n, e.targetBlocks);
  KernelSpec spec = templateKernel(
      "kiln_binary_cross_entropy_backward", "cross_entropy.cuh",
      "binary_cross_entropy_backward", "n=" + str(n) + " blocks=" + str(blocks),
      llvm::formatv("kiln::reduce::element_config<idx_t, {0}, {1}>", n, blocks)
          .str(),
      floatMember("scale", reductionScale),
      "binary_cross_entropy_backward<cfg>", params);
  spec.grid = dim3Of(blocks);
  spec.block = dim3Of(::kiln::reduce::kElementThreads);
  e.kernel(std::move(spec), params);
  return success();
}

/// A cross entropy and its gradient of the same logits in one fusion
/// (compiler/transforms/LossGradients.cpp), reading fusion operands; the
/// incoming gradient is a fusion operand or a constant of the fusion.
struct CrossEntropyPair {
  CrossEntropyOp forward;
  CrossEntropyBackwardOp backward;
  int64_t logits = -1, labels = -1, grad = -1; // fusion operands
  std::optional<double> seed; // the incoming gradient when it is constant
  int64_t loss = -1, gradient = -1; // fusion results (-1: not yielded)
};

FailureOr<CrossEntropyPair> matchCrossEntropyPair(FusionOp fusion) {
  Block &body = fusion.getBody().front();
  CrossEntropyPair pair;
  for (Operation &op : body.without_terminator()) {
    if (auto f = dyn_cast<CrossEntropyOp>(op))
      pair.forward = f;
    else if (auto b = dyn_cast<CrossEntropyBackwardOp>(op))
      pair.backward = b;
    else if (!isa<ConstantOp>(op))
      return failure();
  }
  if (!pair.forward || !pair.backward)
    return failure();
  auto argumentOf = [&](Value v) -> int64_t {
    auto arg = dyn_cast<BlockArgument>(v);
    return arg && arg.getOwner() == &body ? int64_t(arg.getArgNumber()) : -1;
  };
  pair.logits = argumentOf(pair.forward.getLogits());
  pair.labels = argumentOf(pair.forward.getLabels());
  if (pair.logits < 0 || pair.labels < 0 ||
      pair.backward.getLogits() != pair.forward.getLogits() ||
      pair.backward.getLabels() != pair.forward.getLabels() ||
      !(CrossEntropyForm::of(pair.backward) ==
        CrossEntropyForm::of(pair.forward)))
    return failure();
  pair.grad = argumentOf(pair.backward.getGrad());
  if (pair.grad < 0) {
    auto constant = pair.backward.getGrad().getDefiningOp<ConstantOp>();
    auto dense = constant ? dyn_cast<DenseElementsAttr>(constant.getValue())
                          : DenseElementsAttr();
    if (!dense || !dense.isSplat() ||
        !isa<FloatType>(dense.getElementType()))
      return failure();
    pair.seed = dense.getSplatValue<APFloat>().convertToDouble();
  }
  for (auto [index, value] :
       llvm::enumerate(body.getTerminator()->getOperands())) {
    if (value == pair.forward.getResult())
      pair.loss = index;
    else if (value == pair.backward.getResult())
      pair.gradient = index;
    else
      return failure();
  }
  if (pair.gradient < 0)
    return failure();
  return pair;
}

/// Loss and gradient in one pass over each row (cross_entropy_fused), then
/// the loss total when the fusion yields the loss.
FailureOr<GeneratedFusion> emitCrossEntropyPair(FusionOp fusion,
                                                CrossEntropyPair pair,
                                                int64_t targetBlocks) {
  KernelSet kernels("// kiln reduction fusion of\n" +
                        describeOp(pair.forward) + describeOp(pair.backward),
                    fusion, targetBlocks);
  auto type = cast<ShapedType>(pair.forward.getLogits().getType());
  int64_t n = type.getDimSize(0), c = type.getDimSize(1);
  CrossEntropyForm form = CrossEntropyForm::of(pair.forward);
  uint64_t rowLoss = kernels.builder.scratch(std::max<int64_t>(n, 1) * 4);
  std::string logitsType = cudaType(pair.forward.getLogits());
  std::optional<uint64_t> count =
      countIfNeeded(kernels, form, LaunchArg::operand(pair.labels), n);
  if (n > 0 && c > 0) {
    // 16-byte steps when every row starts aligned.
    int64_t bytes = type.getElementTypeBitWidth() / 8;
    int64_t width = c % (16 / bytes) == 0 ? 16 / bytes : 1;
    RowKernel row(n, c, width);
    Params params;
    if (!pair.seed)
      params.add("const " + cudaType(pair.backward.getGrad()) +
                     " *__restrict__ grad",
                 LaunchArg::operand(pair.grad));
    params.add("const " + logitsType + " *__restrict__ logits",
               LaunchArg::operand(pair.logits));
    params.add("const int *__restrict__ labels",
               LaunchArg::operand(pair.labels));
    params.add("float *__restrict__ row_loss", LaunchArg::scratch(rowLoss));
    params.add(cudaType(pair.backward.getResult()) + " *__restrict__ out",
               LaunchArg::result(pair.gradient));
    addCount(params, count);
    bool cached = ::kiln::reduce::ceil_div(::kiln::reduce::ceil_div(c, width),
                                           row.group) *
                      width <=
                  32;
    KernelSpec spec = templateKernel(
        "kiln_cross_entropy_fused", "cross_entropy.cuh", "cross_entropy_fused",
        llvm::formatv("rows={0} m={1} group={2} rows_per_block={3} width={4}"
                      "{5}{6}",
                      n, c, row.group, row.rowsPerBlock, width,
                      cached ? " cached" : "", form.words())
            .str(),
        rowConfig("cross_entropy_fused_config", n, c, ", " + str(width)),
        form.members(c) + floatMember("scale", form.scale(n)) +
            floatMember("seed", pair.seed.value_or(0.0)),
        "cross_entropy_fused<cfg>", params);
    // A constant incoming gradient is the configuration's `seed`.
    if (pair.seed)
      spec.body = std::string("  kiln::reduce::cross_entropy_fused<cfg>(ctx, "
                              "(const float *)nullptr, logits, labels, "
                              "row_loss, out") +
                  (count ? ", count" : "") + ");\n";
    spec.grid = row.grid();
    spec.block = row.block();
    kernels.kernel(std::move(spec), params);
  }
  if (pair.loss >= 0) {
    Params final;
    final.add("const float *__restrict__ row_loss",
              LaunchArg::scratch(rowLoss));
    final.add(cudaType(pair.forward.getResult()) + " *__restrict__ out",
              LaunchArg::result(pair.loss));
    addCount(final, count);
    emitCrossEntropyTotal(kernels, final, n, c, form);
  }
  return kernels.builder.take();
}

//===----------------------------------------------------------------------===//
// The emitter
//===----------------------------------------------------------------------===//

bool isSupportedOp(Operation *op) {
  return isa<ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp, ArgmaxOp,
             SoftmaxOp, LogSoftmaxOp, LayerNormOp, RmsNormOp, GroupNormOp,
             LayerNormBackwardOp, RmsNormBackwardOp, GroupNormBackwardOp,
             MseLossOp, CrossEntropyOp,
             CrossEntropyBackwardOp, BinaryCrossEntropyOp,
             BinaryCrossEntropyBackwardOp>(op);
}

/// A fusion of exactly one supported op reading fusion operands and
/// yielding its results.
bool isSingleOpFusion(FusionOp fusion) {
  FailureOr<SingleOpFusion> single = SingleOpFusion::get(fusion);
  if (failed(single) || !isSupportedOp(single->op))
    return false;
  // Every result must be yielded, except the parameter gradients of the
  // norm backward ops (skipped when unused).
  Operation *op = single->op;
  return isa<LayerNormBackwardOp, RmsNormBackwardOp, GroupNormBackwardOp>(
             op) ||
         single->resultOf[0] >= 0;
}

/// The layout of `fusion`'s generic reduction (GenericReduction.cpp), the
/// one kernel of a reduction fusion chosen in the IR; none where its kernels
/// are others (row kernels, multi-tensor, the norms, softmax, cross
/// entropy) or it has nothing to reduce.
std::optional<ReduceLayout> genericLayoutOf(FusionOp fusion) {
  if (succeeded(matchCrossEntropyPair(fusion)))
    return std::nullopt;
  std::optional<ReduceLayout> layout;
  if (isSingleOpFusion(fusion)) {
    Operation *op = SingleOpFusion::get(fusion)->op;
    if (isa<ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp, ArgmaxOp>(op))
      layout = reduceOpLayout(op);
    else if (isa<MseLossOp, BinaryCrossEntropyOp>(op))
      layout = elementLossLayout(op);
  } else if (FailureOr<ReductionPlan> plan = planReduction(fusion);
             succeeded(plan) && plan->form == ReductionPlan::Form::Rows &&
             !plan->needsRowKernel) {
    const ReductionSpace &space = plan->spaces.front();
    layout = ReduceLayout(space.shape, space.dims);
  }
  if (layout && layout->rows == 0)
    return std::nullopt;
  return layout;
}

cuda::ReductionMode modeOf(const ReduceLayout &layout) {
  return layout.rowMode ? cuda::ReductionMode::Rows
                        : cuda::ReductionMode::Columns;
}

/// The kernel choices of a reduction fusion, converted back from its
/// #kiln_cuda.reduction (a generic reduction) or #kiln_cuda.row_reduction
/// (the others).
struct ReductionChoice {
  /// The generic reduction's splits; none: plannedSplits'.
  std::optional<int64_t> splits;
  /// The blocks the kernels fill (KernelSet::targetBlocks).
  int64_t targetBlocks = 0;
};

/// The splits of `fusion`'s generic reduction over `layout` that its
/// #kiln_cuda.reduction records, checked against the fusion (errors at the
/// fusion); none where it records none.
FailureOr<std::optional<int64_t>> recordedSplits(FusionOp fusion,
                                                 const ReduceLayout &layout) {
  Attribute recorded = fusion->getAttr(cuda::kKernelAttrName);
  if (!recorded)
    return std::optional<int64_t>();
  auto error = [&]() {
    return fusion.emitOpError() << cuda::kKernelAttrName << ": ";
  };
  auto attr = dyn_cast<cuda::ReductionAttr>(recorded);
  if (!attr)
    return error() << "a reduction fusion's kernel is a "
                      "#kiln_cuda.reduction, got "
                   << recorded;
  if (modeOf(layout) != attr.getMode())
    return error() << "a reduction "
                   << (layout.rowMode ? "of the innermost elements"
                                      : "keeping the innermost elements")
                   << " runs in "
                   << cuda::stringifyReductionMode(modeOf(layout)) << ", not "
                   << cuda::stringifyReductionMode(attr.getMode());
  if (std::string why = splitsMismatch(layout, attr.getSplits()); !why.empty())
    return error() << why;
  return std::optional<int64_t>(attr.getSplits());
}

/// The choices `fusion` records, checked (errors at the fusion); the
/// planner's for `target` where it records none.
FailureOr<ReductionChoice> recordedChoice(FusionOp fusion,
                                          const GpuTarget &target) {
  ReductionChoice choice;
  choice.targetBlocks = KernelSet::targetBlocksOf(target);
  if (std::optional<ReduceLayout> layout = genericLayoutOf(fusion)) {
    FailureOr<std::optional<int64_t>> splits = recordedSplits(fusion, *layout);
    if (failed(splits))
      return failure();
    choice.splits = *splits;
    return choice;
  }
  FailureOr<cuda::RowReductionAttr> rows =
      recordedKernel<cuda::RowReductionAttr>(fusion);
  if (failed(rows))
    return failure();
  if (*rows)
    choice.targetBlocks = rows->getBlocks();
  return choice;
}

class ReductionEmitter : public KernelEmitter {
public:
  bool matches(FusionOp fusion) const override {
    if (fusion.getKind() != "reduction")
      return false;
    return isSingleOpFusion(fusion) ||
           succeeded(matchCrossEntropyPair(fusion)) ||
           succeeded(planReduction(fusion));
  }

  FailureOr<GeneratedFusion>
  emit(FusionOp fusion, const CodegenOptions &options) const override {
    if (fusion.getKind() != "reduction")
      return (emitFusionError(fusion) << "is not a reduction fusion");
    FailureOr<ReductionChoice> choice =
        recordedChoice(fusion, options.target());
    if (failed(choice))
      return failure();
    if (FailureOr<CrossEntropyPair> pair = matchCrossEntropyPair(fusion);
        succeeded(pair))
      return emitCrossEntropyPair(fusion, *pair, choice->targetBlocks);
    if (!isSingleOpFusion(fusion)) {
      std::string why;
      FailureOr<ReductionPlan> plan = planReduction(fusion, &why);
      if (failed(plan))
        return (emitFusionError(fusion) << "reduction codegen: ") << why;
      return emitComposedReduction(fusion, *plan, choice->targetBlocks,
                                   choice->splits);
    }
    Emission e(*SingleOpFusion::get(fusion), fusion, choice->targetBlocks);
    e.splits = choice->splits;
    Operation *op = e.op();
    LogicalResult result = success();
    if (isa<ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp, ArgmaxOp>(op))
      result = emitReduceOp(e);
    else if (auto s = dyn_cast<SoftmaxOp>(op))
      result = emitSoftmax(e, s.getDim(), /*log=*/false);
    else if (auto s = dyn_cast<LogSoftmaxOp>(op))
      result = emitSoftmax(e, s.getDim(), /*log=*/true);
    else if (isa<LayerNormOp, RmsNormOp, GroupNormOp, LayerNormBackwardOp,
                 RmsNormBackwardOp, GroupNormBackwardOp>(op))
      result = emitNorm(e);
    else if (auto l = dyn_cast<MseLossOp>(op))
      result = emitElementLoss(
          e, "kiln_square(kiln_load(a[off]) - kiln_load(b[off]))",
          l.getReduction());
    else if (auto l = dyn_cast<BinaryCrossEntropyOp>(op))
      result =
          emitElementLoss(e, "kiln_bce(kiln_load(a[off]), kiln_load(b[off]))",
                          l.getReduction());
    else if (isa<CrossEntropyOp>(op))
      result = emitCrossEntropy(e);
    else if (isa<CrossEntropyBackwardOp>(op))
      result = emitCrossEntropyBackward(e);
    else
      result = emitBinaryCrossEntropyBackward(e);
    if (failed(result))
      return failure();
    return e.builder.take();
  }

  FailureOr<Attribute>
  selectKernel(FusionOp fusion, const CodegenOptions &options) const override {
    int64_t blocks = KernelSet::targetBlocksOf(options.target());
    std::optional<ReduceLayout> layout = genericLayoutOf(fusion);
    if (!layout)
      return Attribute(
          cuda::RowReductionAttr::get(fusion.getContext(), blocks));
    return Attribute(cuda::ReductionAttr::get(
        fusion.getContext(), modeOf(*layout), plannedSplits(*layout, blocks)));
  }

  LogicalResult verifyKernel(FusionOp fusion, Attribute,
                             const CodegenOptions &options) const override {
    return failure(failed(recordedChoice(fusion, options.target())));
  }
};

} // namespace

std::unique_ptr<KernelEmitter> createReductionEmitter() {
  return std::make_unique<ReductionEmitter>();
}

static const EmitterRegistration registration(EmitterOrder::Reduction,
                                              createReductionEmitter);

} // namespace mlir::kiln::codegen
