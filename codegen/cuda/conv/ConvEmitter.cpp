//===- ConvEmitter.cpp - kiln.fusion "conv": convolution + epilogue -------===//
//
// Generates the kernels of a conv fusion (ConvPlan.h says what one is and
// how it is configured): the configuration struct that instantiates
// kernels/conv_tma.cuh, conv_wgmma.cuh, conv_igemm.cuh or conv_depthwise.cuh
// with the convolution's geometry as constants, the parameters (conv_tma's
// tensor maps among them), and the fused
// epilogue, written by the ScalarEmitter at the output element of group g,
// GEMM row r and column c (the bias of kiln.conv2d is added to the f32 sum
// before it is rounded once to the element type, as the reference does).
// A split reduction adds a second kernel that sums the f32 partials in
// split order and applies the epilogue. A trailing batch norm adds its
// kernels (BatchNormKernels.h) after the convolution's; where the wgmma
// kernel stages the channels-last tiles it stores, its epilogue also writes
// their per-channel statistics (kernels/tile_stats.cuh), which spares batch
// norm its pass over the activation.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/conv/ConvEmitter.h"

#include "codegen/cuda/EmitterRegistry.h"
#include "codegen/cuda/EmitterUtils.h"
#include "codegen/cuda/KernelEmitter.h"
#include "codegen/cuda/KernelRenderer.h"
#include "codegen/cuda/conv/ConvKernelAttr.h"
#include "codegen/cuda/conv/ConvPlan.h"
#include "codegen/cuda/conv/ConvSetup.h"
#include "codegen/cuda/norm/BatchNormKernels.h"
#include "codegen/cuda/scalar/ScalarEmitter.h"

#include "kiln/batch_norm_layout.cuh"
#include "kiln/conv_layout.cuh"
#include "kiln/gemm_layout.cuh"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>

namespace mlir::kiln::codegen {
namespace {

constexpr const char *kFn = "  static __device__ __forceinline__ ";

const char *passName(int pass) {
  switch (pass) {
  case ::kiln::conv::kForward:
    return "forward";
  case ::kiln::conv::kBackwardInput:
    return "backward_input";
  default:
    return "backward_filter";
  }
}

const char *kindName(ConvKind kind) {
  switch (kind) {
  case ConvKind::Bf16:
    return "bf16";
  case ConvKind::F16:
    return "f16";
  case ConvKind::Tf32:
    return "tf32";
  case ConvKind::Tf32x3:
    return "f32 (3xtf32)";
  }
  return "f32";
}

const char *boolText(bool value) { return value ? "true" : "false"; }

/// The CUDA type of a fusion operand or result in memory.
std::string bufferType(Value value) {
  return storageCType(cast<ShapedType>(value.getType()).getElementType()).str();
}

/// Where the epilogue of group g, GEMM row r and column c stores: the
/// output's coordinates (channels-first names: the first is the batch or,
/// for the filter gradient, the output channel) and its flat index.
struct OutputIndex {
  SmallVector<std::string> coords;
  std::string flat;
  /// Columns c .. c + n - 1, for n dividing `granule` and c a multiple of
  /// n, are adjacent elements (aligned to n): pairs when it is even, 16-byte
  /// runs when it is a multiple of their elements.
  int64_t granule = 1;
};

OutputIndex outputIndex(const ConvPlan &plan) {
  const ConvGeometry &g = plan.geometry;
  auto lit = [](int64_t v) { return indexLiteral(v); };
  int64_t og = g.O / g.GROUPS, cg = g.C / g.GROUPS;
  // The GEMM's rows are pixels (channels last, and channels first run as
  // channels last), else its columns are.
  bool pixelRows = g.NHWC;
  bool channelsFirst = !g.NHWC || plan.viaChannelsLast;
  OutputIndex out;
  if (g.PASS == ::kiln::conv::kBackwardFilter) {
    // Output channel o = row r; column c is a tap in the GEMM's order:
    // (kh, kw, ci) channels last, (ci, kh, kw) channels first.
    std::string o = "(g * " + lit(og) + " + r)";
    if (g.NHWC) {
      std::string kh = "(c / " + lit(g.KW * cg) + ")",
                  kw = "((c / " + lit(cg) + ") % " + lit(g.KW) + ")",
                  ci = "(c % " + lit(cg) + ")";
      if (!channelsFirst) {
        out.coords = {o, kh, kw, ci};
        out.flat = o + " * " + lit(plan.cols) + " + c";
        out.granule = plan.cols;
        return out;
      }
      // Stored as the channels-first filter dw[o][ci][kh][kw].
      out.coords = {o, ci, kh, kw};
      out.flat = "((" + o + " * " + lit(cg) + " + " + ci + ") * " + lit(g.KH) +
                 " + " + kh + ") * " + lit(g.KW) + " + " + kw;
      return out;
    }
    out.coords = {o, "c / " + lit(g.KH * g.KW),
                  "(c / " + lit(g.KW) + ") % " + lit(g.KH), "c % " + lit(g.KW)};
    out.flat = o + " * " + lit(plan.cols) + " + c";
    out.granule = plan.cols;
    return out;
  }
  bool forward = g.PASS == ::kiln::conv::kForward;
  // The activation the pass writes: channels, channels per group, pixels.
  int64_t channels = forward ? g.O : g.C, perGroup = forward ? og : cg;
  int64_t h = forward ? g.OH : g.H, w = forward ? g.OW : g.W;
  std::string ch =
      "(g * " + lit(perGroup) + " + " + (pixelRows ? "c" : "r") + ")";
  std::string pixel = pixelRows ? "r" : "c";
  if (!channelsFirst) {
    out.coords = {pixel + " / " + lit(h * w),
                  "(" + pixel + " / " + lit(w) + ") % " + lit(h),
                  pixel + " % " + lit(w), ch};
    out.flat = pixel + " * " + lit(channels) + " + " + ch;
    out.granule = std::gcd(channels, perGroup);
    return out;
  }
  std::string n = "(" + pixel + " / " + lit(h * w) + ")",
              p = "(" + pixel + " % " + lit(h * w) + ")";
  out.coords = {n, ch, p + " / " + lit(w), p + " % " + lit(w)};
  out.flat = "(" + n + " * " + lit(channels) + " + " + ch + ") * " +
             lit(h * w) + " + " + p;
  // Columns are adjacent pixels of one image when the GEMM's columns are
  // pixels.
  out.granule = pixelRows ? 1 : h * w;
  return out;
}

/// The elements of a 16-byte run of the epilogue's single result along the
/// columns, or 0 where it has no such runs (several results, or columns
/// that are not adjacent elements).
int64_t resultRun(const ConvPlan &plan, FusionOp fusion) {
  if (plan.epilogueResults.size() != 1)
    return 0;
  Value result = fusion.getResult(plan.epilogueResults.front());
  int64_t run =
      16 /
      std::max<int64_t>(
          1, (cast<ShapedType>(result.getType()).getElementTypeBitWidth() + 7) /
                 8);
  return outputIndex(plan).granule % run == 0 ? run : 0;
}

/// The file-scope tables of the epilogue's statements, then `struct
/// Epilogue`.
FailureOr<std::string> writeEpilogue(const ConvPlan &plan, FusionOp fusion,
                                     bool stats) {
  Block &body = fusion.getBody().front();
  OutputIndex index = outputIndex(plan);
  ScalarEmitter emitter(plan.outShape, "ke_", "idx");
  SmallVector<std::string> coordNames;
  for (size_t d = 0; d < index.coords.size(); ++d)
    coordNames.push_back("e_d" + std::to_string(d));
  emitter.setIndex(coordNames, "e_flat");
  emitter.bindValue(plan.conv->getResult(0), "v0");
  for (BlockArgument argument : body.getArguments())
    emitter.bindBuffer(argument,
                       "p.in" + std::to_string(argument.getArgNumber()));
  std::string statements;
  SmallVector<std::string> values;
  Operation *yield = body.getTerminator();
  SmallVector<std::string> outs;
  for (unsigned result : plan.epilogueResults) {
    outs.push_back("p.out" + std::to_string(result));
    FailureOr<std::string> expr =
        emitter.emit(yield->getOperand(result), statements, 4);
    if (failed(expr))
      return failure();
    values.push_back(*expr);
  }
  size_t count = values.size();

  std::string text;
  llvm::raw_string_ostream os(text);
  os << emitter.globals() << "struct Epilogue {\n";
  os << kFn << "idx flat(idx g, idx r, idx c) { return " << index.flat
     << "; }\n";
  os << kFn << "void values(const Params &p, idx g, idx r, idx c, float acc, "
     << "float (&res)[" << count << "]) {\n";
  os << "    const idx e_flat = flat(g, r, c);\n";
  for (auto [d, coord] : llvm::enumerate(index.coords))
    os << "    const idx " << coordNames[d] << " = " << coord << ";\n";
  for (size_t d = 0; d < coordNames.size(); ++d)
    os << "    (void)" << coordNames[d] << ";\n";
  std::string sum = "acc";
  if (plan.biasArg >= 0) {
    // The channel the bias belongs to (the forward pass's output channel).
    size_t channelDim = plan.geometry.NHWC && !plan.viaChannelsLast ? 3 : 1;
    sum = "acc + kiln_load(p.in" + std::to_string(plan.biasArg) + "[" +
          coordNames[channelDim] + "])";
  }
  os << "    // " << plan.conv->getName().getStringRef()
     << ", rounded once to its element type\n";
  os << "    const float v0 = " << roundedToElement(plan.elementType, sum)
     << ";\n";
  os << statements;
  for (auto [i, value] : llvm::enumerate(values))
    os << "    res[" << i << "] = " << value << ";\n";
  os << "  }\n";

  os << kFn << "void store(const Params &p, idx g, idx r, idx c, float acc) {\n"
     << "    float res[" << count << "];\n"
     << "    values(p, g, r, c, acc, res);\n"
     << "    const idx at = flat(g, r, c);\n";
  for (size_t i = 0; i < count; ++i)
    os << "    kiln_store(" << outs[i] << " + at, res[" << i << "]);\n";
  os << "  }\n";
  os << "  // Columns c and c + 1 (c even); c + 1 may lie past the last.\n"
     << kFn
     << "void store_pair(const Params &p, idx g, idx r, idx c, float acc0, "
        "float acc1) {\n"
     << "    if (c + 1 >= " << indexLiteral(plan.cols) << ") {\n"
     << "      if (c < " << indexLiteral(plan.cols) << ")\n"
     << "        store(p, g, r, c, acc0);\n"
     << "      return;\n    }\n";
  if (index.granule % 2 == 0) {
    os << "    float res0[" << count << "], res1[" << count << "];\n"
       << "    values(p, g, r, c, acc0, res0);\n"
       << "    values(p, g, r, c + 1, acc1, res1);\n"
       << "    const idx at = flat(g, r, c);\n";
    for (size_t i = 0; i < count; ++i)
      os << "    kiln::gemm::store2(" << outs[i] << " + at, res0[" << i
         << "], res1[" << i << "]);\n";
  } else {
    os << "    store(p, g, r, c, acc0);\n"
       << "    store(p, g, r, c + 1, acc1);\n";
  }
  os << "  }\n";
  // 16-byte runs of a single result along the columns, for the kernels that
  // stage a tile's results in shared memory (kernels/conv_wgmma.cuh); RUN 0
  // where the result's columns are not such runs.
  int64_t run = resultRun(plan, fusion);
  bool runs = run > 0;
  os << "  typedef "
     << (runs ? bufferType(fusion.getResult(plan.epilogueResults.front()))
              : std::string("float"))
     << " run_t;\n"
     << "  static constexpr int RUN = " << (runs ? run : 0) << ";\n";
  if (runs) {
    os << "  // The result at column c in its storage type.\n"
       << kFn
       << "run_t value(const Params &p, idx g, idx r, idx c, float acc) {\n"
       << "    float res[1];\n"
       << "    values(p, g, r, c, acc, res);\n"
       << "    run_t v;\n"
       << "    kiln_store(&v, res[0]);\n"
       << "    return v;\n  }\n"
       << "  // RUN results from column c (a multiple of RUN), one access.\n"
       << kFn
       << "void store_run(const Params &p, idx g, idx r, idx c, "
          "const run_t (&v)[RUN]) {\n"
       << "    kiln_store_vec<RUN>(" << outs[0]
       << " + flat(g, r, c), v);\n  }\n"
       << kFn
       << "void store_value(const Params &p, idx g, idx r, idx c, run_t v) "
          "{\n"
       << "    " << outs[0] << "[flat(g, r, c)] = v;\n  }\n";
  }
  os << "  // Batch-norm partials of the stored tiles "
        "(kernels/tile_stats.cuh).\n"
     << "  static constexpr bool STATS = " << boolText(stats) << ";\n";
  if (stats)
    os << kFn << "kiln::bn::welford *stats(const Params &p) {\n"
       << "    return p.stats;\n  }\n";
  os << "};\n";
  return text;
}

/// The parameters of every kernel of the fusion: A's and B's tensors (or
/// their channels-last copies in scratch), the split partials, every operand
/// and every result.
struct Buffers {
  std::vector<KernelParam> params;
  std::string structText, initializer;
  /// conv_tma.cuh's tensor maps: the main kernel's parameters and the
  /// initializer's end there (null pointers in the other kernels).
  std::vector<KernelParam> mapParams;
  std::string mapInitializer, noMapInitializer;
};

/// Where the fusion's scratch holds what: the split partials (at offset 0,
/// LaunchArg::scratch(0)), the channels-last copies of A and B, and the
/// batch-norm partials of the epilogue.
struct ScratchLayout {
  bool partials = false;
  std::optional<uint64_t> aCopy, bCopy, stats;
};

/// The tensor maps of conv_tma.cuh: the input [N][H][W][C] as im2col
/// columns of BM output pixels' windows by 64 channels, the filter
/// [O][KH * KW * CG] in boxes of 64 taps by BN rows.
std::pair<TensorMapLayout, TensorMapLayout> tensorMapsOf(const ConvPlan &plan) {
  const ConvGeometry &g = plan.geometry;
  const GemmTileConfig &tile = plan.choice.config;
  uint64_t e = plan.elementBytes();
  uint64_t c = g.C, w = g.W, h = g.H;
  TensorMapLayout input;
  input.im2col = true;
  input.dims = {c, w, h, static_cast<uint64_t>(g.N)};
  input.strides = {c * e, w * c * e, h * w * c * e};
  input.elementStrides = {1, static_cast<uint32_t>(g.SW),
                          static_cast<uint32_t>(g.SH), 1};
  input.lowerCorner = {static_cast<int32_t>(-g.PL),
                       static_cast<int32_t>(-g.PT)};
  input.upperCorner = {static_cast<int32_t>(::kiln::conv::im2col_upper_corner(
                           g.OW, g.SW, g.PL, g.W)),
                       static_cast<int32_t>(::kiln::conv::im2col_upper_corner(
                           g.OH, g.SH, g.PT, g.H))};
  input.channelsPerPixel = ::kiln::gemm::wgmma_block_k;
  input.pixelsPerColumn = static_cast<uint32_t>(tile.bm);
  input.swizzleBytes = 128;
  TensorMapLayout filter;
  uint64_t k = static_cast<uint64_t>(plan.k);
  filter.dims = {k, static_cast<uint64_t>(g.O)};
  filter.strides = {k * e};
  filter.box = {static_cast<uint32_t>(::kiln::gemm::wgmma_block_k),
                static_cast<uint32_t>(tile.bn)};
  filter.elementStrides = {1, 1};
  filter.swizzleBytes = 128;
  return {std::move(input), std::move(filter)};
}

Buffers buffersOf(const ConvPlan &plan, FusionOp fusion,
                  const ScratchLayout &scratch) {
  Buffers b;
  std::string element = cudaType(plan.elementType);
  b.structText = "struct Params {\n  const " + element + " *a;\n  const " +
                 element + " *b;\n  float *scratch;\n";
  b.initializer = (scratch.aCopy ? std::string("a_copy")
                                 : "in" + std::to_string(plan.aArg)) +
                  ", " +
                  (scratch.bCopy ? std::string("b_copy")
                                 : "in" + std::to_string(plan.bArg)) +
                  ", " + (scratch.partials ? "scratch" : "nullptr");
  for (auto [i, input] : llvm::enumerate(fusion.getInputs())) {
    std::string name = "in" + std::to_string(i);
    b.params.push_back({"const " + bufferType(input) + " *__restrict__", name,
                        LaunchArg::operand(i)});
    b.structText += "  const " + bufferType(input) + " *" + name + ";\n";
    b.initializer += ", " + name;
  }
  for (auto [i, result] : llvm::enumerate(fusion.getResults())) {
    std::string name = "out" + std::to_string(i);
    b.params.push_back(
        {bufferType(result) + " *__restrict__", name, LaunchArg::result(i)});
    b.structText += "  " + bufferType(result) + " *" + name + ";\n";
    b.initializer += ", " + name;
  }
  if (scratch.partials)
    b.params.push_back(
        {"float *__restrict__", "scratch", LaunchArg::scratch(0)});
  if (scratch.aCopy)
    b.params.push_back({"const " + element + " *__restrict__", "a_copy",
                        LaunchArg::scratch(*scratch.aCopy)});
  if (scratch.bCopy)
    b.params.push_back({"const " + element + " *__restrict__", "b_copy",
                        LaunchArg::scratch(*scratch.bCopy)});
  if (scratch.stats) {
    b.params.push_back({"kiln::bn::welford *__restrict__", "stats",
                        LaunchArg::scratch(*scratch.stats)});
    b.structText += "  kiln::bn::welford *stats;\n";
    b.initializer += ", stats";
  }
  if (plan.tma) {
    auto [aMap, bMap] = tensorMapsOf(plan);
    b.mapParams.push_back({kTensorMapParamType.str(), "a_map",
                           LaunchArg::tensorMapOf(LaunchArg::operand(plan.aArg),
                                                  std::move(aMap))});
    b.mapParams.push_back({kTensorMapParamType.str(), "b_map",
                           LaunchArg::tensorMapOf(LaunchArg::operand(plan.bArg),
                                                  std::move(bMap))});
    b.structText += "  const kiln::tensor_map *a_map;\n"
                    "  const kiln::tensor_map *b_map;\n";
    b.mapInitializer = ", &a_map, &b_map";
    b.noMapInitializer = ", nullptr, nullptr";
  }
  b.structText += "};\n";
  return b;
}

std::string configText(const ConvPlan &plan) {
  const ConvGeometry &g = plan.geometry;
  const GemmTileConfig &tile = plan.choice.config;
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "// Element offsets and indices.\n"
     << "typedef " << (plan.narrowIndex ? "int" : "long long") << " idx;\n"
     << "struct Config {\n"
     << "  typedef " << cudaType(plan.elementType) << " element;\n"
     << "  typedef idx index;\n"
     << "  // The convolution, channels-first names (kiln/conv_layout.cuh).\n"
     << llvm::formatv("  static constexpr idx N = {0}, C = {1}, H = {2}, W = "
                      "{3}, O = {4}, OH = {5}, OW = {6};\n",
                      g.N, g.C, g.H, g.W, g.O, g.OH, g.OW)
            .str()
     << llvm::formatv("  static constexpr idx KH = {0}, KW = {1}, SH = {2}, "
                      "SW = {3}, PT = {4}, PL = {5}, DH = {6}, DW = {7}, "
                      "GROUPS = {8};\n",
                      g.KH, g.KW, g.SH, g.SW, g.PT, g.PL, g.DH, g.DW, g.GROUPS)
            .str()
     << "  static constexpr bool NHWC = " << boolText(g.NHWC) << ";\n"
     << "  static constexpr int PASS = " << g.PASS << "; // "
     << passName(g.PASS) << "\n";
  if (!plan.depthwise) {
    int kind = static_cast<int>(plan.kind);
    os << "  static constexpr int KIND = " << kind
       << "; // 0 bf16, 1 f16, 2 tf32, 3 tf32 in three products\n"
       << "  static constexpr bool TF32 = " << boolText(kind >= 2) << ";\n"
       << "  static constexpr int BM = " << tile.bm << ", BN = " << tile.bn
       << ", BK = " << tile.bk << ";\n";
    if (plan.tma)
      os << "  static constexpr int STAGES = " << plan.tmaStages
         << ", BLOCKS_PER_SM = " << tile.occupancy << ";\n";
    else if (tile.path == GemmPath::Wgmma)
      os << "  static constexpr int STAGES = " << tile.stages << ";\n";
    else
      os << "  static constexpr int WARPS_M = " << tile.warpsM
         << ", WARPS_N = " << tile.warpsN << ", STAGES = " << tile.stages
         << ";\n";
    os << "  static constexpr bool A_KMAJOR = " << boolText(plan.aKMajor)
       << ", B_KMAJOR = " << boolText(plan.bKMajor) << ";\n"
       << "  static constexpr bool A_VEC = " << boolText(plan.aVec)
       << ", B_VEC = " << boolText(plan.bVec) << ";\n"
       << "  static constexpr int SPLIT = " << plan.choice.split
       << ", KT_PER_SPLIT = " << plan.choice.ktPerSplit << ";\n";
  }
  os << "};\n";
  return text;
}

/// The configuration line of --stats.
std::string describe(const ConvPlan &plan) {
  const ConvGeometry &g = plan.geometry;
  std::string text;
  llvm::raw_string_ostream os(text);
  os << passName(g.PASS) << " "
     << (plan.viaChannelsLast ? "nchw (as nhwc)"
         : g.NHWC             ? "nhwc"
                              : "nchw")
     << " ";
  if (plan.depthwise) {
    os << "depthwise " << cudaType(plan.elementType) << " " << g.C
       << " channels " << g.KH << "x" << g.KW;
    return text;
  }
  const GemmTileConfig &tile = plan.choice.config;
  os << kindName(plan.kind) << " gemm " << plan.rows << "x" << plan.cols << "x"
     << plan.k;
  if (g.GROUPS > 1)
    os << " groups " << g.GROUPS;
  os << " tile " << tile.bm << "x" << tile.bn << "x" << tile.bk;
  if (plan.tma)
    os << " wgmma warpgroups " << tile.bm / 64 << " and a TMA producer";
  else if (tile.path == GemmPath::Wgmma)
    os << " wgmma warpgroups " << tile.bm / 64;
  else
    os << " mma warps " << tile.warpsM << "x" << tile.warpsN;
  os << " stages " << (plan.tma ? plan.tmaStages : tile.stages) << " split "
     << plan.choice.split;
  if (plan.tma) {
    os << " a im2col TMA b tiled TMA";
    return text;
  }
  os << " a " << (plan.aKMajor ? "K" : "M") << "-major "
     << (plan.aVec ? "16-byte" : "gathered") << " b "
     << (plan.bKMajor ? "K" : "N") << "-major "
     << (plan.bVec ? "16-byte" : "gathered");
  return text;
}

std::string describeFusion(const ConvPlan &plan, FusionOp fusion) {
  std::string text = "// kiln conv fusion of\n" + describeOp(plan.conv);
  for (Operation &op : fusion.getBody().front().without_terminator())
    if (&op != plan.conv && &op != plan.norm)
      text += "// epilogue: " + op.getName().getStringRef().str() + "\n";
  if (plan.norm)
    text += "// then " + describeOp(plan.norm).substr(3);
  return text;
}

/// The trailing batch norm's kernels, which read its input from the
/// fusion's result and its other operands from the fusion's.
void emitNorm(FusionBuilder &builder, const ConvPlan &plan, FusionOp fusion,
              const GpuTarget &target,
              std::optional<BatchNormPartials> partials) {
  BatchNormBindings bindings;
  bindings.operands.push_back(LaunchArg::result(plan.normInputResult));
  for (Value operand : plan.norm->getOperands().drop_front())
    bindings.operands.push_back(
        LaunchArg::operand(cast<BlockArgument>(operand).getArgNumber()));
  Operation *yield = fusion.getBody().front().getTerminator();
  for (Value result : plan.norm->getResults()) {
    auto yielded = llvm::find(yield->getOperands(), result);
    bindings.results.push_back(
        yielded == yield->getOperands().end()
            ? std::nullopt
            : std::optional<LaunchArg>(LaunchArg::result(yielded.getIndex())));
  }
  emitBatchNormKernels(builder, plan.norm, fusion, bindings,
                       batchNormBlocks(target), partials);
}

} // namespace

bool convStatsInEpilogue(const ConvPlan &plan, FusionOp fusion) {
  const GemmTileConfig &tile = plan.choice.config;
  int64_t run = resultRun(plan, fusion);
  return plan.norm && !plan.depthwise && tile.path == GemmPath::Wgmma &&
         plan.geometry.NHWC && !plan.viaChannelsLast &&
         plan.epilogueResults.front() == plan.normInputResult &&
         ::kiln::conv::wgmma_stages_results(
             tile.bm, tile.bn, plan.choice.split, static_cast<int>(run),
             static_cast<int>(16 / std::max<int64_t>(run, 1)));
}

FailureOr<GeneratedFusion>
emitConv(FusionOp fusion, const CodegenOptions &options,
         const std::optional<ConvKernelChoice> &kernel) {
  FailureOr<ConvPlan> prepared = prepareConv(fusion, options);
  if (failed(prepared))
    return failure();
  ConvPlan &plan = *prepared;
  const GpuTarget &target = options.target();
  if (kernel) {
    if (failed(verifyConv(plan, fusion, options, *kernel)))
      return failure();
    setConvChoice(plan, kernel->choice.config, kernel->choice.split);
    plan.tma = kernel->tma;
    plan.tmaStages = kernel->tmaStages;
  } else if (!plan.depthwise) {
    return emitFusionError(fusion) << "a convolution's kernel is not chosen";
  }
  bool split = !plan.depthwise && plan.choice.split > 1;
  bool depthwiseFilter =
      plan.depthwise && plan.geometry.PASS == ::kiln::conv::kBackwardFilter;
  std::string header = describeFusion(plan, fusion);
  FusionBuilder builder(header);
  if (plan.outElements() == 0) {
    if (plan.norm)
      emitNorm(builder, plan, fusion, options.target(), std::nullopt);
    return builder.take();
  }
  // Scratch: the partials first (the kernels address them at offset 0),
  // then the channels-last copies.
  ScratchLayout scratch;
  scratch.partials = split || depthwiseFilter;
  if (split)
    builder.scratch(4ull * plan.choice.split * plan.outElements());
  if (depthwiseFilter)
    builder.scratch(4ull *
                    ::kiln::conv::depthwise_slices(
                        plan.geometry.N * plan.geometry.OH * plan.geometry.OW) *
                    plan.geometry.C * plan.geometry.KH * plan.geometry.KW);
  if (plan.viaChannelsLast) {
    scratch.aCopy =
        builder.scratch(uint64_t(plan.elementBytes()) * plan.aCopy.elements());
    scratch.bCopy =
        builder.scratch(uint64_t(plan.elementBytes()) * plan.bCopy.elements());
  }
  const GemmTileConfig &tile = plan.choice.config;
  // One kiln::bn::welford (12 bytes) per row tile and output channel.
  bool stats = convStatsInEpilogue(plan, fusion);
  if (stats)
    scratch.stats = builder.scratch(
        12ull * ((plan.rows + tile.bm - 1) / tile.bm) * plan.geometry.O);
  Buffers buffers = buffersOf(plan, fusion, scratch);
  FailureOr<std::string> epilogue = writeEpilogue(plan, fusion, stats);
  if (failed(epilogue))
    return failure();
  std::string functors = configText(plan) + buffers.structText + *epilogue;

  bool wgmma = !plan.depthwise && tile.path == GemmPath::Wgmma;
  // `maps`: the kernel takes conv_tma.cuh's tensor maps.
  auto spec = [&](const char *prefix, const char *function,
                  const char *templateName, bool maps = false) {
    KernelSpec s;
    s.prefix = prefix;
    s.header = header;
    s.functors = functors;
    s.params = buffers.params;
    if (maps)
      s.params.insert(s.params.end(), buffers.mapParams.begin(),
                      buffers.mapParams.end());
    s.templates = {"kiln/" + std::string(templateName) + ".cuh",
                   kScalarOpsHeader.str()};
    s.templateName = templateName;
    s.configuration = describe(plan) +
                      (stats ? " batch-norm statistics in the epilogue" : "");
    s.body = "  const Params p{" + buffers.initializer +
             (maps ? buffers.mapInitializer : buffers.noMapInitializer) +
             "};\n" + "  kiln::conv::" + function +
             "<Config, Epilogue>(ctx, p);\n";
    return s;
  };
  // A grid-stride launch of 256 threads over `items`.
  int64_t maxBlocks = target.blocksForWaves(4, 8);
  auto strided = [&](KernelSpec s, int64_t items) {
    s.grid = {static_cast<uint32_t>(
                  std::clamp<int64_t>((items + 255) / 256, 1, maxBlocks)),
              1, 1};
    s.block = {256, 1, 1};
    return s;
  };

  if (plan.depthwise) {
    const ConvGeometry &g = plan.geometry;
    if (g.PASS == ::kiln::conv::kForward) {
      builder.kernel(strided(
          spec("kiln_conv_depthwise", "depthwise_forward", "conv_depthwise"),
          g.N * g.C * g.OH * g.OW));
    } else if (g.PASS == ::kiln::conv::kBackwardInput) {
      builder.kernel(strided(spec("kiln_conv_depthwise",
                                  "depthwise_backward_input", "conv_depthwise"),
                             g.N * g.C * g.H * g.W));
    } else {
      int64_t slices = ::kiln::conv::depthwise_slices(g.N * g.OH * g.OW);
      int64_t taps = g.KH * g.KW;
      KernelSpec partials = spec("kiln_conv_depthwise_partials",
                                 "depthwise_filter_partials", "conv_depthwise");
      // The partials take no epilogue.
      partials.body = "  const Params p{" + buffers.initializer +
                      buffers.noMapInitializer + "};\n" +
                      "  kiln::conv::depthwise_filter_partials<Config>(ctx, "
                      "p);\n";
      partials.grid = {static_cast<uint32_t>(std::clamp<int64_t>(
                           ::kiln::conv::depthwise_filter_blocks(slices, g.C),
                           1, maxBlocks)),
                       1, 1};
      partials.block = {::kiln::conv::depthwise_threads, 1, 1};
      builder.kernel(std::move(partials));
      builder.kernel(strided(spec("kiln_conv_depthwise_sum",
                                  "depthwise_filter_sum", "conv_depthwise"),
                             g.C * taps));
    }
    if (plan.norm)
      emitNorm(builder, plan, fusion, target, std::nullopt);
    return builder.take();
  }

  if (plan.viaChannelsLast) {
    // The channels-last copies of A and B.
    std::string element = cudaType(plan.elementType);
    auto copy = [&](const ConvPlan::Copy &c, unsigned arg, uint64_t offset) {
      KernelSpec s;
      s.prefix = "kiln_conv_channels_last";
      s.header = header;
      s.templates = {"kiln/conv_layout_change.cuh"};
      s.templateName = "conv_layout_change";
      s.configuration = llvm::formatv("{0} x [{1}][{2}] -> [{2}][{1}]", c.batch,
                                      c.rows, c.cols)
                            .str();
      s.addParam("const " + element + " *__restrict__", "src",
                 LaunchArg::operand(arg));
      s.addParam(element + " *__restrict__", "dst", LaunchArg::scratch(offset));
      s.body = llvm::formatv("  kiln::conv::to_channels_last<{0}, {1}LL, "
                             "{2}LL, {3}LL>(ctx, src, dst);\n",
                             element, c.batch, c.rows, c.cols)
                   .str();
      int64_t tiles = c.batch * ((c.rows + 31) / 32) * ((c.cols + 31) / 32);
      s.grid = {static_cast<uint32_t>(std::clamp<int64_t>(tiles, 1, maxBlocks)),
                1, 1};
      s.block = {256, 1, 1};
      builder.kernel(std::move(s));
    };
    copy(plan.aCopy, plan.aArg, *scratch.aCopy);
    copy(plan.bCopy, plan.bArg, *scratch.bCopy);
  }

  KernelSpec main =
      plan.tma ? spec("kiln_conv", "tma_igemm", "conv_tma", /*maps=*/true)
      : wgmma  ? spec("kiln_conv", "wgmma_igemm", "conv_wgmma")
               : spec("kiln_conv", "igemm", "conv_igemm");
  int64_t tiles = ((plan.rows + tile.bm - 1) / tile.bm) *
                  ((plan.cols + tile.bn - 1) / tile.bn);
  if (tiles > std::numeric_limits<int32_t>::max())
    return (emitFusionError(fusion) << "the convolution has too many tiles (")
           << tiles << ") for one launch";
  int64_t zs = plan.geometry.GROUPS * plan.choice.split;
  if (wgmma) {
    // Persistent: the blocks that fit the SMs walk every (tile, group,
    // split).
    main.grid = {static_cast<uint32_t>(std::min<int64_t>(
                     tiles * zs, target.blocksForWaves(1, tile.occupancy))),
                 1, 1};
    main.archSpecific = true;
  } else {
    main.grid = {static_cast<uint32_t>(tiles), 1,
                 static_cast<uint32_t>(std::min<int64_t>(zs, 65535))};
  }
  // The TMA kernel adds its producer warpgroup.
  main.block = {static_cast<uint32_t>(tile.threads() + (plan.tma ? 128 : 0)), 1,
                1};
  main.dynamicSharedBytes =
      plan.tma
          ? ::kiln::conv::tma_shared_bytes(tile.bm, tile.bn, plan.tmaStages)
          : tile.sharedBytes(plan.aKMajor, plan.bKMajor, plan.elementBytes());
  main.minBlocksPerSm = tile.occupancy;
  // Never merged: a merged kernel takes the register count of its largest
  // part, and one convolution's tiles fill the GPU by themselves.
  main.mergeable = false;
  // The persistent kernels' blocks are one wave: launched early they would
  // crowd onto the SMs the predecessor leaves free (KernelSpec::programmatic;
  // results/bench/2026-12-02-h200-conv-tma-notes.md).
  main.programmatic = !wgmma;
  builder.kernel(std::move(main));
  if (split)
    builder.kernel(
        strided(spec("kiln_conv_split_sum", "igemm_split_sum", "conv_igemm"),
                (plan.outElements() + 1) / 2));
  if (plan.norm)
    emitNorm(builder, plan, fusion, target,
             stats ? std::optional<BatchNormPartials>(
                         BatchNormPartials{*scratch.stats, tile.bm})
                   : std::nullopt);
  return builder.take();
}

namespace {

class ConvEmitter final : public KernelEmitter {
public:
  bool matches(FusionOp fusion) const override {
    std::string why;
    return succeeded(analyzeConv(fusion, why));
  }

  FailureOr<GeneratedFusion>
  emit(FusionOp fusion, const CodegenOptions &options) const override {
    FailureOr<std::optional<ConvKernelChoice>> kernel =
        convKernelOf(fusion, options);
    if (failed(kernel))
      return failure();
    return emitConv(fusion, options, *kernel);
  }

  FailureOr<Attribute>
  selectKernel(FusionOp fusion, const CodegenOptions &options) const override {
    FailureOr<std::optional<ConvKernelChoice>> kernel =
        selectConv(fusion, options);
    if (failed(kernel))
      return failure();
    if (!*kernel)
      return Attribute(cuda::ConvAttr::get(fusion.getContext(),
                                           cuda::ConvKind::Depthwise, 0, 0, 0,
                                           0, 0, 0, 1, 1));
    return Attribute(convKernelAttr(fusion.getContext(), **kernel));
  }

  LogicalResult verifyKernel(FusionOp fusion, Attribute,
                             const CodegenOptions &options) const override {
    FailureOr<std::optional<ConvKernelChoice>> kernel =
        convKernelOf(fusion, options);
    if (failed(kernel))
      return failure();
    // A depthwise kernel is checked against the fusion as it is read.
    return failure(*kernel && failed(verifyConv(fusion, options, **kernel)));
  }
};

} // namespace

std::unique_ptr<KernelEmitter> createConvEmitter() {
  return std::make_unique<ConvEmitter>();
}

static const EmitterRegistration registration(EmitterOrder::Conv,
                                              createConvEmitter);

} // namespace mlir::kiln::codegen
