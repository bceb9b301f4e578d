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
//   (whole-tensor losses, sum_all, ...).
// - Multi-tensor reductions (whole-tensor reductions over several tensors,
//   such as a global gradient norm): one kernel of per-block partials over
//   every tensor and one finishing kernel.
// - Weight/bias gradients of the norms: a column kernel over [rows, M] that
//   recomputes x-hat from per-row statistics the dx kernel leaves in
//   scratch, with the same deterministic two-pass split over rows.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/EmitterUtils.h"
#include "codegen/cuda/KernelEmitter.h"
#include "codegen/cuda/ReductionKernels.h"
#include "compiler/transforms/ReductionPlan.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

namespace mlir::kiln::codegen {
namespace {

using namespace reduction;

//===----------------------------------------------------------------------===//
// Shared state of one single-op emission
//===----------------------------------------------------------------------===//

struct Emission : KernelSet {
  SingleOpFusion single;

  Emission(SingleOpFusion s, FusionOp fusion)
      : KernelSet("// kiln reduction fusion of\n" + describeOp(s.op), fusion),
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

/// reduce_sum/mean/max/min and argmax.
LogicalResult emitReduceOp(Emission &e) {
  Operation *op = e.op();
  auto inType = cast<ShapedType>(op->getOperand(0).getType());
  bool isInt = inType.getElementType().isInteger(32);
  std::string value = isInt ? "int" : "float";
  llvm::SmallVector<int64_t> dims;
  ReduceSpec spec;
  spec.prefix = "kiln_" + op->getName().stripDialect().str();
  Accumulator acc;
  std::string load = "kiln_load(in[off])";
  std::string finish = "acc";
  if (auto argmax = dyn_cast<ArgmaxOp>(op)) {
    dims.push_back(int64_t(argmax.getDim()));
    acc.type = "kiln_arg<" + value + ">";
    acc.identity = acc.type + (isInt ? "{(-2147483647 - 1), 2147483647}"
                                     : "{-KILN_INF, 2147483647}");
    acc.combiner = "kiln_argmax_op";
    acc.element = acc.type + "{" + load + ", (int)r}";
    acc.bytes = 8;
    finish = "acc.i";
  } else {
    llvm::ArrayRef<int64_t> reduceDims = reducedDimsOf(op);
    dims.assign(reduceDims.begin(), reduceDims.end());
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
      acc.identity = isInt ? "(-2147483647 - 1)" : "-KILN_INF";
    } else {
      acc.combiner = "kiln_min_op";
      acc.identity = isInt ? "2147483647" : "KILN_INF";
    }
  }
  ReduceLayout layout(inType.getShape(), dims);
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
  llvm::SmallVector<int64_t> dims;
  for (int64_t d = 0; d < type.getRank(); ++d)
    dims.push_back(d);
  ReduceLayout layout(type.getShape(), dims);
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
  Params params;
  e.addInput(params, 0, "in");
  e.addOutput(params, 0, "out");
  // exp(x - max) / sum, or x - (max + log(sum)), as the reference.
  std::string write = log ? "kiln_store(out_row + J, x - lse);"
                          : "kiln_store(out_row + J, expf(x - mx) * inv);";
  std::string finishStats = log ? "  const float lse = mx + logf(s);\n"
                                : "  const float inv = 1.f / s;\n";
  if (inner == 1) {
    RowKernel row(outer, size);
    row.addRowInput("x", "in");
    std::string body = row.prologue({"out"});
    body += "  float mx = -KILN_INF;\n" + row.loop("mx = kiln_max(mx, x);") +
            row.reduce("mx", "kiln_max_op", "-KILN_INF");
    body += "  float s = 0.f;\n" + row.loop("s += expf(x - mx);") +
            row.reduce("s", "kiln_sum_op", "0.f");
    body += finishStats + "  if (!active) return;\n";
    std::string w = write;
    w.replace(w.find("J"), 1, "j");
    body += row.loop(w);
    e.kernel(prefix, "", params, body, row.grid(), row.block());
    return success();
  }
  // Strided slices: 32 consecutive columns per block (coalesced), the
  // softmax dim split 8 ways over threadIdx.y and combined in shared memory
  // in a fixed order.
  int64_t columnTiles = ceilDiv(inner, 32);
  std::string combine = R"(  tile[threadIdx.y][threadIdx.x] = V;
  __syncthreads();
  V = tile[0][threadIdx.x];
#pragma unroll
  for (int t = 1; t < 8; ++t) V = OP(V, tile[t][threadIdx.x]);
  __syncthreads();
)";
  auto combineOf = [&](llvm::StringRef v, llvm::StringRef op) {
    std::string s = combine;
    for (size_t at; (at = s.find('V')) != std::string::npos;)
      s.replace(at, 1, v.str());
    s.replace(s.find("OP"), 2, op.str());
    return s;
  };
  std::string body = llvm::formatv(
      R"(  __shared__ float tile[8][33];
  const idx_t outer = blockIdx.x / {0};
  const idx_t c = (idx_t)(blockIdx.x % {0}) * 32 + threadIdx.x;
  const bool active = c < {1};
  const idx_t base = outer * {2} * {1} + (active ? c : 0);
  const auto *x_col = in + base;
  auto *out_row = out + base;
  float mx = -KILN_INF;
  for (idx_t d = threadIdx.y; d < {2}; d += 8) mx = kiln_max(mx, kiln_load(x_col[d * {1}]));
)",
      columnTiles, inner, size);
  body += combineOf("mx", "kiln_max_op()");
  body +=
      llvm::formatv("  float s = 0.f;\n  for (idx_t d = threadIdx.y; d < {0}; "
                    "d += 8) s += expf(kiln_load(x_col[d * {1}]) - mx);\n",
                    size, inner)
          .str();
  body += combineOf("s", "kiln_sum_op()");
  body += finishStats + "  if (!active) return;\n";
  std::string w = write;
  w.replace(w.find("J"), 1, "d * " + str(inner));
  body += llvm::formatv("  for (idx_t d = threadIdx.y; d < {0}; d += 8) {{\n"
                        "    const float x = kiln_load(x_col[d * {1}]);\n"
                        "    {2}\n  }\n",
                        size, inner, w)
              .str();
  e.kernel(prefix + "_strided", "", params, body, dim3Of(columnTiles * outer),
           dim3Of(32, 8));
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
void emitNormParamGrads(Emission &e, int64_t rows, int64_t m, uint64_t stats,
                        int weightResult, int biasResult) {
  int64_t columnTiles = ceilDiv(m, 32);
  int64_t splits = 1;
  if (columnTiles < kTargetBlocks)
    splits = std::clamp<int64_t>(
        std::min(ceilDiv(kTargetBlocks, columnTiles), ceilDiv(rows, 1024)), 1,
        1024);
  int64_t chunk = ceilDiv(std::max<int64_t>(rows, 1), splits);
  splits = ceilDiv(std::max<int64_t>(rows, 1), chunk);
  bool bias = biasResult >= 0;
  bool weight = weightResult >= 0;

  Params params;
  e.addInput(params, 0, "grad");
  e.addInput(params, 1, "input");
  params.add("const float2 *__restrict__ stats", LaunchArg::scratch(stats));
  uint64_t partialW = 0, partialB = 0;
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
  std::string body = llvm::formatv(
      R"(  __shared__ float tw[8][33], tb[8][33];
  const idx_t j = (idx_t)blockIdx.x * 32 + threadIdx.x;
  const bool active = j < {0};
  const idx_t r0 = (idx_t)blockIdx.y * {1};
  const idx_t r1 = min((idx_t){2}, r0 + {1});
  float aw = 0.f, ab = 0.f;
  if (active)
    for (idx_t r = r0 + threadIdx.y; r < r1; r += 8) {{
      const float g = kiln_load(grad[r * {0} + j]);
      const float2 st = stats[r];
      aw += g * ((kiln_load(input[r * {0} + j]) - st.x) * st.y);
      ab += g;
    }
  tw[threadIdx.y][threadIdx.x] = aw;
  tb[threadIdx.y][threadIdx.x] = ab;
  __syncthreads();
  if (threadIdx.y != 0 || !active) return;
#pragma unroll
  for (int t = 1; t < 8; ++t) {{
    aw += tw[t][threadIdx.x];
    ab += tb[t][threadIdx.x];
  }
)",
      m, chunk, rows);
  std::string target =
      splits == 1 ? "j" : "(idx_t)blockIdx.y * " + str(m) + " + j";
  if (weight)
    body += "  kiln_store(dw + " + target + ", aw);\n";
  if (bias)
    body += "  kiln_store(db + " + target + ", ab);\n";
  e.kernel("kiln_norm_param_grad", "", params, body,
           dim3Of(columnTiles, splits), dim3Of(32, 8));
  if (splits == 1)
    return;
  Params final;
  std::string finalBody =
      "  const idx_t j = (idx_t)blockIdx.x * 256 + threadIdx.x;\n"
      "  if (j >= " +
      str(m) + ") return;\n";
  for (auto [present, partialOffset, result, name] :
       {std::tuple{weight, partialW, weightResult, std::string("w")},
        std::tuple{bias, partialB, biasResult, std::string("b")}}) {
    if (!present)
      continue;
    final.add("const float *__restrict__ p" + name,
              LaunchArg::scratch(partialOffset));
    e.addOutput(final, result, "d" + name);
    finalBody += llvm::formatv("  {{\n    float acc = p{0}[j];\n"
                               "    for (int s = 1; s < {1}; ++s) acc += "
                               "p{0}[(idx_t)s * {2} + j];\n"
                               "    kiln_store(d{0} + j, acc);\n  }\n",
                               name, splits, m)
                     .str();
  }
  e.kernel("kiln_norm_param_grad_final", "", final, finalBody,
           dim3Of(ceilDiv(m, 256)), dim3Of(256));
}

/// layer_norm, rms_norm and their backward ops.
LogicalResult emitNorm(Emission &e) {
  Operation *op = e.op();
  bool backward = isa<LayerNormBackwardOp, RmsNormBackwardOp>(op);
  bool layer = isa<LayerNormOp, LayerNormBackwardOp>(op);
  Value input = op->getOperand(backward ? 1 : 0);
  auto type = cast<ShapedType>(input.getType());
  int64_t normalizedDims = 1;
  double eps;
  Value weight, bias;
  if (auto n = dyn_cast<LayerNormOp>(op)) {
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
  for (int64_t s : type.getShape().take_back(normalizedDims))
    m *= s;
  int64_t rows = m ? type.getNumElements() / m : 0;
  std::string prefix = "kiln_" + op->getName().stripDialect().str();
  unsigned weightOperand = backward ? 2 : 1;
  std::string M = floatLiteral(double(m));

  RowKernel row(rows, m);
  Params params;
  if (backward) {
    e.addInput(params, 0, "grad");
    row.addRowInput("g", "grad");
  }
  e.addInput(params, backward ? 1 : 0, "in");
  row.addRowInput("x", "in");
  if (weight)
    e.addInput(params, weightOperand, "weight");
  if (bias)
    e.addInput(params, 2, "bias");
  bool writeOut = e.yields(0);
  std::vector<std::string> outputs;
  if (writeOut) {
    e.addOutput(params, 0, "out");
    outputs.push_back("out");
  }
  // Backward ops leave each row's statistics for the parameter gradients.
  bool paramGrads = backward && (e.yields(1) || (layer && e.yields(2)));
  uint64_t stats = 0;
  if (paramGrads && rows > 0) {
    stats = e.builder.scratch(rows * 8);
    params.add("float2 *__restrict__ stats", LaunchArg::scratch(stats));
  }

  std::string body = row.prologue(outputs);
  std::string epsText = floatLiteral(eps);
  if (layer) {
    // Two passes for the variance, like the reference: no cancellation.
    body += "  float s = 0.f;\n" + row.loop("s += x;") +
            row.reduce("s", "kiln_sum_op", "0.f") +
            "  const float mean = s / " + M + ";\n";
    body += "  float q = 0.f;\n" + row.loop("q += kiln_square(x - mean);") +
            row.reduce("q", "kiln_sum_op", "0.f") +
            "  const float rstd = 1.f / sqrtf(q / " + M + " + " + epsText +
            ");\n";
  } else {
    body += "  const float mean = 0.f;\n  float q = 0.f;\n" +
            row.loop("q += x * x;") + row.reduce("q", "kiln_sum_op", "0.f") +
            "  const float rstd = 1.f / sqrtf(q / " + M + " + " + epsText +
            ");\n";
  }
  std::string w = weight ? " * kiln_load(weight[j])" : "";
  if (!backward) {
    std::string b = bias ? " + kiln_load(bias[j])" : "";
    body +=
        "  if (!active) return;\n" +
        row.loop("kiln_store(out_row + j, (x - mean) * rstd" + w + b + ");");
  } else {
    // dx = rstd * (gy - mean(gy) - xh * mean(gy * xh)), gy = grad * weight
    // (rms_norm: without the mean(gy) term).
    if (layer)
      body += "  float sg = 0.f;\n" + row.loop("sg += g" + w + ";") +
              row.reduce("sg", "kiln_sum_op", "0.f");
    body += "  float sgx = 0.f;\n" +
            row.loop("sgx += g" + w + " * ((x - mean) * rstd);") +
            row.reduce("sgx", "kiln_sum_op", "0.f");
    body += "  const float meanGyXh = sgx / " + M + ";\n";
    body += layer ? "  const float meanGy = sg / " + M + ";\n"
                  : "  const float meanGy = 0.f;\n";
    if (paramGrads)
      body +=
          "  if (active && lid == 0) stats[row] = make_float2(mean, rstd);\n";
    if (writeOut)
      body += "  if (!active) return;\n" +
              row.loop("kiln_store(out_row + j, rstd * (g" + w +
                       " - meanGy - (x - mean) * rstd * meanGyXh));");
  }
  if (rows > 0 && m > 0)
    e.kernel(prefix, "", params, body, row.grid(), row.block());
  if (paramGrads && m > 0) {
    if (rows == 0) {
      // No rows: the parameter gradients are zeros.
      Params zero;
      std::string zbody =
          "  const idx_t j = (idx_t)blockIdx.x * 256 + threadIdx.x;\n"
          "  if (j >= " +
          str(m) + ") return;\n";
      for (unsigned r = 1; r < op->getNumResults(); ++r)
        if (e.yields(r)) {
          e.addOutput(zero, r, "d" + str(r));
          zbody += "  kiln_store(d" + str(r) + " + j, 0.f);\n";
        }
      e.kernel("kiln_zero", "", zero, zbody, dim3Of(ceilDiv(m, 256)),
               dim3Of(256));
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

/// The row statistics of logits [N, C]: max `mx` and `lse`.
std::string logSumExp(const RowKernel &row) {
  return "  float mx = -KILN_INF;\n" + row.loop("mx = kiln_max(mx, x);") +
         row.reduce("mx", "kiln_max_op", "-KILN_INF") + "  float s = 0.f;\n" +
         row.loop("s += expf(x - mx);") +
         row.reduce("s", "kiln_sum_op", "0.f") +
         "  const float lse = mx + logf(s);\n";
}

LogicalResult emitCrossEntropy(Emission &e) {
  auto loss = cast<CrossEntropyOp>(e.op());
  auto type = cast<ShapedType>(loss.getLogits().getType());
  int64_t n = type.getDimSize(0), c = type.getDimSize(1);
  double eps = loss.getLabelSmoothing().convertToDouble();
  uint64_t rowLoss = e.builder.scratch(std::max<int64_t>(n, 1) * 4);
  if (n > 0 && c > 0) {
    RowKernel row(n, c);
    row.addRowInput("x", "logits");
    Params params;
    e.addInput(params, 0, "logits");
    e.addInput(params, 1, "labels");
    params.add("float *__restrict__ row_loss", LaunchArg::scratch(rowLoss));
    std::string body = row.prologue() + logSumExp(row);
    body += "  const int label = labels[row];\n"
            "  const float picked = label >= 0 && label < " +
            str(c) +
            " ? kiln_load(x_row[label]) - lse : KILN_NAN;\n"
            "  float l = -" +
            floatLiteral(1 - eps) + " * picked;\n";
    if (eps != 0) {
      // -eps/C * sum_c log_softmax
      body += "  float sl = 0.f;\n" + row.loop("sl += x - lse;") +
              row.reduce("sl", "kiln_sum_op", "0.f") +
              "  l -= " + floatLiteral(eps / double(c)) + " * sl;\n";
    }
    body += "  if (active && lid == 0) row_loss[row] = l;\n";
    e.kernel("kiln_cross_entropy_rows", "", params, body, row.grid(),
             row.block());
  }
  // One block adds the row losses in a fixed order.
  Params final;
  final.add("const float *__restrict__ row_loss", LaunchArg::scratch(rowLoss));
  e.addOutput(final, 0, "out");
  std::string scale = loss.getReduction() == Reduction::mean
                          ? " / " + floatLiteral(double(n))
                          : "";
  std::string body =
      llvm::formatv(R"(  __shared__ float kiln_scratch[32];
  float s = 0.f;
  for (idx_t i = threadIdx.x; i < {0}; i += 256) s += {1};
  s = kiln_group_reduce<256>(s, kiln_sum_op(), 0.f, kiln_scratch);
  if (threadIdx.x == 0) kiln_store(out, s{2});
)",
                    n, c > 0 ? "row_loss[i]" : "KILN_NAN", scale);
  e.kernel("kiln_cross_entropy_total", "", final, body, dim3Of(1), dim3Of(256));
  return success();
}

LogicalResult emitCrossEntropyBackward(Emission &e) {
  auto loss = cast<CrossEntropyBackwardOp>(e.op());
  auto type = cast<ShapedType>(loss.getLogits().getType());
  int64_t n = type.getDimSize(0), c = type.getDimSize(1);
  if (n * c == 0)
    return success();
  double eps = loss.getLabelSmoothing().convertToDouble();
  double reductionScale =
      loss.getReduction() == Reduction::mean ? 1.0 / n : 1.0;
  RowKernel row(n, c);
  row.addRowInput("x", "logits");
  Params params;
  e.addInput(params, 0, "grad");
  e.addInput(params, 1, "logits");
  e.addInput(params, 2, "labels");
  e.addOutput(params, 0, "out");
  std::string body = row.prologue({"out"}) + logSumExp(row);
  body += "  const float scale = kiln_load(grad[0]) * " +
          floatLiteral(reductionScale) +
          ";\n"
          "  const int label = labels[row];\n"
          "  const bool valid = label >= 0 && label < " +
          str(c) +
          ";\n"
          "  if (!active) return;\n";
  body += row.loop("float v = scale * (expf(x - lse) - " +
                   floatLiteral(eps / double(c)) +
                   ");\n"
                   "if (j == label) v -= scale * " +
                   floatLiteral(1 - eps) +
                   ";\n"
                   "kiln_store(out_row + j, valid ? v : KILN_NAN);");
  e.kernel("kiln_cross_entropy_backward", "", params, body, row.grid(),
           row.block());
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
  int64_t blocks = std::min<int64_t>(ceilDiv(n, 256), 8 * kTargetBlocks);
  std::string body = llvm::formatv(
      R"(  const float scale = kiln_load(grad[0]) * {0};
  for (idx_t i = (idx_t)blockIdx.x * 256 + threadIdx.x; i < {1}; i += (idx_t){2} * 256)
    kiln_store(out + i, scale * (kiln_sigmoid(kiln_load(logits[i])) - kiln_load(target[i])));
)",
      floatLiteral(reductionScale), n, blocks);
  e.kernel("kiln_binary_cross_entropy_backward", "", params, body,
           dim3Of(blocks), dim3Of(256));
  return success();
}

//===----------------------------------------------------------------------===//
// The emitter
//===----------------------------------------------------------------------===//

bool isSupportedOp(Operation *op) {
  return isa<ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp, ArgmaxOp,
             SoftmaxOp, LogSoftmaxOp, LayerNormOp, RmsNormOp,
             LayerNormBackwardOp, RmsNormBackwardOp, MseLossOp, CrossEntropyOp,
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
  return isa<LayerNormBackwardOp, RmsNormBackwardOp>(op) ||
         single->resultOf[0] >= 0;
}

class ReductionEmitter : public KernelEmitter {
public:
  bool matches(FusionOp fusion) const override {
    if (fusion.getKind() != "reduction")
      return false;
    return isSingleOpFusion(fusion) || succeeded(planReduction(fusion));
  }

  FailureOr<GeneratedFusion>
  emit(FusionOp fusion, const CodegenOptions &options) const override {
    if (fusion.getKind() != "reduction")
      return fusion.emitOpError("is not a reduction fusion");
    if (!isSingleOpFusion(fusion)) {
      std::string why;
      FailureOr<ReductionPlan> plan = planReduction(fusion, &why);
      if (failed(plan))
        return fusion.emitOpError("reduction codegen: ") << why;
      return emitComposedReduction(fusion, *plan);
    }
    Emission e(*SingleOpFusion::get(fusion), fusion);
    Operation *op = e.op();
    LogicalResult result = success();
    if (isa<ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp, ArgmaxOp>(op))
      result = emitReduceOp(e);
    else if (auto s = dyn_cast<SoftmaxOp>(op))
      result = emitSoftmax(e, s.getDim(), /*log=*/false);
    else if (auto s = dyn_cast<LogSoftmaxOp>(op))
      result = emitSoftmax(e, s.getDim(), /*log=*/true);
    else if (isa<LayerNormOp, RmsNormOp, LayerNormBackwardOp,
                 RmsNormBackwardOp>(op))
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
};

} // namespace

std::unique_ptr<KernelEmitter> createReductionEmitter() {
  return std::make_unique<ReductionEmitter>();
}

} // namespace mlir::kiln::codegen
