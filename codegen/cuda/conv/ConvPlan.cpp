//===- ConvPlan.cpp - conv fusions: analysis and configuration ------------===//

#include "codegen/cuda/conv/ConvPlan.h"

#include "dialects/kiln/Utils/ShapeInference.h"

#include "kiln/conv_layout.cuh"
#include "kiln/gemm_layout.cuh"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseSet.h"

#include <algorithm>

namespace mlir::kiln::codegen {
namespace {

using ::kiln::gemm::wgmma_block_k;

// Block tiles of the implicit GEMM (GemmTileConfig's fields: path, BM, BN,
// BK, warps, stages, -, -, blocks per SM, efficiency). The gathers cost
// registers beyond the GEMM's, so the largest tile is 128x128 (8 warps of
// 64x32); the narrow tiles serve the channel counts of small layers. The
// efficiencies are relative speeds measured on the H200 over the ResNet-50
// layers (a 128x64 tile eight warps deep in K steps of 64 ran best on most
// of them).
const GemmTileConfig kConvMmaConfigs[] = {
    {GemmPath::MmaSync, 128, 64, 64, 4, 2, 3, 0, 0, 2, 0.80},
    {GemmPath::MmaSync, 128, 128, 32, 2, 4, 4, 0, 0, 2, 0.90},
    {GemmPath::MmaSync, 128, 64, 32, 2, 2, 4, 0, 0, 3, 0.75},
    {GemmPath::MmaSync, 64, 128, 32, 2, 2, 4, 0, 0, 3, 0.75},
    {GemmPath::MmaSync, 64, 64, 32, 2, 2, 4, 0, 0, 4, 0.65},
};
// wgmma (sm_90a, kernels/conv_wgmma.cuh): warpgroups of 64 x BN over
// 64-deep swizzled stages. The efficiencies and stage counts come from the
// H200 sweep over the ResNet-50 layers (results/bench/
// 2026-12-01-h200-conv-tile-sweep-wgmma.txt): 128x128 with six stages runs
// best where K is long; 128x64 with four stages, two blocks per SM (whose
// sixteen warps hide the gathers' address arithmetic and each other's
// epilogues), on 64-channel outputs and short K; one warpgroup of 64x128,
// two per SM, on few output rows (the filter gradients of 64-channel
// layers, small images). 128x256 tiles and eight stages ran slower
// everywhere.
const GemmTileConfig kConvWgmmaConfigs[] = {
    {GemmPath::Wgmma, 128, 128, wgmma_block_k, 0, 0, 6, 0, 0, 1, 0.90},
    {GemmPath::Wgmma, 128, 64, wgmma_block_k, 0, 0, 4, 0, 0, 2, 0.80},
    {GemmPath::Wgmma, 64, 128, wgmma_block_k, 0, 0, 4, 0, 0, 2, 0.75},
};
// A tile's pipeline fill and epilogue as the work of this much more K (the
// cost model's tileOverheadK): what makes short-K layers favour tiles with
// company on their SM.
constexpr double kConvTileOverheadK = 128;
const GemmTileConfig kConvTf32Configs[] = {
    {GemmPath::Tf32, 128, 128, 32, 2, 4, 3, 0, 0, 1, 1.00},
    {GemmPath::Tf32, 64, 128, 32, 2, 2, 3, 0, 0, 2, 0.80},
    {GemmPath::Tf32, 64, 64, 32, 2, 2, 3, 0, 0, 2, 0.60},
};
// f32 in three tf32 products holds high and low fragments: larger tiles
// spill.
const GemmTileConfig kConvTf32x3Configs[] = {
    {GemmPath::Tf32, 64, 64, 32, 2, 2, 3, 0, 0, 2, 0.60},
};

ArrayRef<int64_t> shapeOf(Value value) {
  return cast<ShapedType>(value.getType()).getShape();
}

/// Fills the geometry from the shapes of the forward input, filter and
/// output and the attributes every conv op shares.
template <typename OpTy>
ConvGeometry geometryOf(OpTy op, Value input, Value filter, Value output,
                        int pass) {
  ConvGeometry g;
  g.NHWC = op.getLayout() == ConvLayout::nhwc;
  g.PASS = pass;
  ArrayRef<int64_t> x = shapeOf(input), w = shapeOf(filter),
                    y = shapeOf(output);
  int ch = g.NHWC ? 3 : 1, hd = g.NHWC ? 1 : 2, wd = g.NHWC ? 2 : 3;
  g.N = x[0], g.C = x[ch], g.H = x[hd], g.W = x[wd];
  g.O = y[ch], g.OH = y[hd], g.OW = y[wd];
  g.KH = w[g.NHWC ? 1 : 2], g.KW = w[g.NHWC ? 2 : 3];
  g.SH = op.getStride()[0], g.SW = op.getStride()[1];
  g.PT = op.getPadding()[0], g.PL = op.getPadding()[2];
  g.DH = op.getDilation()[0], g.DW = op.getDilation()[1];
  g.GROUPS = op.getGroups();
  return g;
}

bool isConvFloat(Type type) {
  return type.isF32() || type.isBF16() || type.isF16();
}

} // namespace

llvm::ArrayRef<GemmTileConfig> convMmaConfigs() { return kConvMmaConfigs; }
llvm::ArrayRef<GemmTileConfig> convWgmmaConfigs() { return kConvWgmmaConfigs; }
llvm::ArrayRef<GemmTileConfig> convTf32Configs() { return kConvTf32Configs; }
llvm::ArrayRef<GemmTileConfig> convTf32x3Configs() {
  return kConvTf32x3Configs;
}

GemmTileConfig convTileFor(const ConvPlan &plan, GemmTileConfig tile) {
  if (tile.path == GemmPath::Wgmma)
    return tile; // one block per SM already
  // The input gradient's gathers (dy at strided windows) and 16-bit
  // element gathers need more than the 128 registers a thread that two
  // blocks of 256 threads per SM leave: one such block per SM.
  bool heavyGathers = plan.geometry.PASS == ::kiln::conv::kBackwardInput ||
                      (plan.elementBytes() == 2 && !(plan.aVec && plan.bVec));
  if (tile.threads() >= 256 && heavyGathers)
    tile.occupancy = 1;
  return tile;
}

FailureOr<ConvPlan> analyzeConv(FusionOp fusion, std::string &why) {
  if (fusion.getKind() != "conv") {
    why = "not a conv fusion";
    return failure();
  }
  Block &body = fusion.getBody().front();
  ConvPlan plan;
  for (Operation &op : body.without_terminator()) {
    if (isa<Conv2dOp, Conv2dBackwardInputOp, Conv2dBackwardFilterOp>(op)) {
      if (plan.conv) {
        why = "two convolutions";
        return failure();
      }
      plan.conv = &op;
    }
  }
  if (!plan.conv) {
    why = "no convolution";
    return failure();
  }
  // Which fusion argument an operand of the convolution is.
  auto argOf = [&](Value value, unsigned &arg) {
    auto block = dyn_cast<BlockArgument>(value);
    if (!block || block.getOwner() != &body)
      return false;
    arg = block.getArgNumber();
    return true;
  };
  // The tensors the GEMM's A and B gather from, by pass and layout
  // (kernels/conv_layout.cuh).
  Value a, b;
  if (auto conv = dyn_cast<Conv2dOp>(plan.conv)) {
    plan.geometry = geometryOf(conv, conv.getInput(), conv.getFilter(),
                               conv.getResult(), ::kiln::conv::kForward);
    bool nhwc = plan.geometry.NHWC;
    a = nhwc ? conv.getInput() : conv.getFilter();
    b = nhwc ? conv.getFilter() : conv.getInput();
    if (Value bias = conv.getBias()) {
      unsigned arg;
      if (!argOf(bias, arg)) {
        why = "the convolution's bias must be an argument of the fusion";
        return failure();
      }
      plan.biasArg = arg;
    }
  } else if (auto conv = dyn_cast<Conv2dBackwardInputOp>(plan.conv)) {
    plan.geometry = geometryOf(conv, conv.getResult(), conv.getFilter(),
                               conv.getGrad(), ::kiln::conv::kBackwardInput);
    bool nhwc = plan.geometry.NHWC;
    a = nhwc ? conv.getGrad() : conv.getFilter();
    b = nhwc ? conv.getFilter() : conv.getGrad();
  } else {
    auto filter = cast<Conv2dBackwardFilterOp>(plan.conv);
    plan.geometry = geometryOf(filter, filter.getInput(), filter.getResult(),
                               filter.getGrad(), ::kiln::conv::kBackwardFilter);
    a = filter.getGrad();
    b = filter.getInput();
  }
  if (!argOf(a, plan.aArg) || !argOf(b, plan.bArg)) {
    why = "the convolution's operands must be arguments of the fusion";
    return failure();
  }
  Value result = plan.conv->getResult(0);
  plan.elementType = cast<ShapedType>(result.getType()).getElementType();
  if (!isConvFloat(plan.elementType)) {
    why = "the convolution must be f32, bf16 or f16";
    return failure();
  }
  ArrayRef<int64_t> out = shapeOf(result);
  plan.outShape.assign(out.begin(), out.end());
  const ConvGeometry &g = plan.geometry;
  plan.rows = ::kiln::conv::gemm_rows(g);
  plan.cols = ::kiln::conv::gemm_cols(g);
  plan.k = ::kiln::conv::gemm_k(g);
  plan.depthwise = ::kiln::conv::depthwise(g);

  // The epilogue: element-wise ops of values computed from the result,
  // every one of them evaluated at an element of the result.
  llvm::DenseSet<Value> fromResult = {result};
  for (Operation &op : body.without_terminator()) {
    if (&op == plan.conv)
      continue;
    if (auto norm = dyn_cast<BatchNormOp>(op)) {
      if (plan.norm || !isa<Conv2dOp>(plan.conv) || norm.getEval() ||
          &op != body.getTerminator()->getPrevNode()) {
        why = "a batch norm in a conv fusion must be the last op, in "
              "training mode, after a forward convolution";
        return failure();
      }
      plan.norm = norm;
      continue;
    }
    if (op.getNumResults() != 1 ||
        !isBroadcastableTo(shapeOf(op.getResult(0)), out)) {
      why = "'" + op.getName().getStringRef().str() +
            "' computes a value that does not broadcast to the convolution's "
            "result";
      return failure();
    }
    if (llvm::any_of(op.getOperands(),
                     [&](Value v) { return fromResult.contains(v); }))
      fromResult.insert(op.getResult(0));
  }
  if (plan.norm) {
    // It normalises the output channels of a yielded epilogue value, whose
    // other operands are the fusion's.
    Value input = plan.norm.getInput();
    int64_t channelDim = plan.geometry.NHWC ? 3 : 1;
    auto yielded = llvm::find(body.getTerminator()->getOperands(), input);
    if (!fromResult.contains(input) ||
        plan.norm.getDimAttr().getInt() != channelDim ||
        yielded == body.getTerminator()->getOperands().end() ||
        llvm::any_of(plan.norm->getOperands().drop_front(), [&](Value v) {
          unsigned arg;
          return !argOf(v, arg);
        })) {
      why = "the batch norm of a conv fusion must normalise the output "
            "channels of a yielded epilogue value, its other operands "
            "arguments of the fusion";
      return failure();
    }
    plan.normInputResult = yielded.getIndex();
  }
  for (OpOperand &yielded : body.getTerminator()->getOpOperands()) {
    Value value = yielded.get();
    if (plan.norm && value.getDefiningOp() == plan.norm)
      continue;
    plan.epilogueResults.push_back(yielded.getOperandNumber());
    if (!fromResult.contains(value)) {
      why = "a yielded value is not computed from the convolution's result";
      return failure();
    }
    if (shapeOf(value) != out ||
        !isConvFloat(cast<ShapedType>(value.getType()).getElementType())) {
      why = "a yielded value must be a float tensor of the convolution's "
            "result shape";
      return failure();
    }
  }
  return plan;
}

LogicalResult configureConv(ConvPlan &plan, const GpuTarget &target,
                            bool allowTf32, bool allowWgmma, std::string &why) {
  // The convolution as written (plan.geometry may become its channels-last
  // form).
  const ConvGeometry g = plan.geometry;
  plan.kind = plan.elementType.isBF16()  ? ConvKind::Bf16
              : plan.elementType.isF16() ? ConvKind::F16
              : allowTf32                ? ConvKind::Tf32
                                         : ConvKind::Tf32x3;
  int vec = 16 / plan.elementBytes();
  if (!g.NHWC && !plan.depthwise &&
      !(::kiln::conv::a_vector(g, vec) && ::kiln::conv::b_vector(g, vec))) {
    ConvGeometry last = g;
    last.NHWC = true;
    if (::kiln::conv::a_vector(last, vec) &&
        ::kiln::conv::b_vector(last, vec)) {
      plan.viaChannelsLast = true;
      plan.geometry = last;
      // Channels last, A is the activation (x, dy) and B the filter (or x):
      // the reverse of channels first for the forward and input passes.
      if (g.PASS != ::kiln::conv::kBackwardFilter)
        std::swap(plan.aArg, plan.bArg);
      int64_t cg = g.C / g.GROUPS, taps = g.KH * g.KW;
      ConvPlan::Copy x{g.N, g.C, g.H * g.W}, w{g.O, cg, taps},
          dy{g.N, g.O, g.OH * g.OW};
      switch (g.PASS) {
      case ::kiln::conv::kForward:
        plan.aCopy = x, plan.bCopy = w;
        break;
      case ::kiln::conv::kBackwardInput:
        plan.aCopy = dy, plan.bCopy = w;
        break;
      default:
        plan.aCopy = dy, plan.bCopy = x;
        break;
      }
      plan.rows = ::kiln::conv::gemm_rows(last);
      plan.cols = ::kiln::conv::gemm_cols(last);
      plan.k = ::kiln::conv::gemm_k(last);
    }
  }
  const ConvGeometry &k = plan.geometry;
  plan.aKMajor = ::kiln::conv::a_k_major(k);
  plan.bKMajor = ::kiln::conv::b_k_major(k);
  plan.aVec = ::kiln::conv::a_vector(k, vec);
  plan.bVec = ::kiln::conv::b_vector(k, vec);

  if (plan.depthwise) {
    setConvChoice(plan, {}, 1);
    return success();
  }

  ArrayRef<GemmTileConfig> table =
      plan.kind == ConvKind::Tf32x3 ? convTf32x3Configs()
      : plan.kind == ConvKind::Tf32 ? convTf32Configs()
                                    : convMmaConfigs();
  SmallVector<GemmTileConfig> candidates;
  auto consider = [&](ArrayRef<GemmTileConfig> tiles) {
    for (const GemmTileConfig &tile : tiles)
      if (tile.sharedBytes(plan.aKMajor, plan.bKMajor, plan.elementBytes()) <=
          target.sharedBytesPerBlock)
        candidates.push_back(convTileFor(plan, tile));
  };
  // wgmma reads both operands from swizzled tiles that only 16-byte runs
  // fill; the cost model weighs it against mma.sync per shape.
  plan.wgmmaAllowed =
      allowWgmma && target.hasWgmma && plan.aVec && plan.bVec &&
      (plan.kind == ConvKind::Bf16 || plan.kind == ConvKind::F16);
  if (plan.wgmmaAllowed)
    consider(convWgmmaConfigs());
  consider(table);
  if (candidates.empty()) {
    why = "no convolution tile fits the shared memory of " + target.arch.str();
    return failure();
  }
  // The filter gradient reduces over every pixel of the batch into a small
  // output: it takes splits beyond the GEMM's.
  static constexpr int kConvSplits[] = {1,  2,  3,  4,  6,  8,
                                        12, 16, 24, 32, 48, 64};
  GemmChoice choice = chooseGemmConfig(candidates, target, g.GROUPS, plan.rows,
                                       plan.cols, plan.k, 1, plan.outElements(),
                                       kConvSplits, kConvTileOverheadK);
  setConvChoice(plan, choice.config, choice.split);
  return success();
}

void setConvChoice(ConvPlan &plan, const GemmTileConfig &tile, int split) {
  // 32-bit offsets when every tensor and the split partials stay below
  // 2^31 elements (with room for the tiles' overhang).
  auto elements = [](ArrayRef<int64_t> shape) {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  };
  const ConvGeometry &g = plan.geometry;
  int64_t largest =
      std::max({g.N * g.C * g.H * g.W, g.N * g.O * g.OH * g.OW,
                g.O * g.KH * g.KW * (g.C / g.GROUPS), elements(plan.outShape)});
  if (!plan.depthwise) {
    int64_t kTiles = (plan.k + tile.bk - 1) / tile.bk;
    int64_t perSplit = kTiles ? (kTiles + split - 1) / split : 0;
    plan.choice = {tile, split, static_cast<int>(perSplit)};
    largest = std::max(largest, split * plan.outElements());
  }
  plan.narrowIndex = largest <= (int64_t(1) << 30);
}

bool convTmaFits(const ConvPlan &plan) {
  const ConvGeometry &g = plan.geometry;
  const GemmTileConfig &tile = plan.choice.config;
  if (plan.depthwise || tile.path != GemmPath::Wgmma ||
      g.PASS != ::kiln::conv::kForward || !g.NHWC || plan.viaChannelsLast ||
      plan.elementBytes() != 2 || (g.C / g.GROUPS) % wgmma_block_k != 0 ||
      tile.bm > 256 || tile.bn > 256)
    return false;
  // The im2col copy walks window origins with the convolution's stride
  // (at most 8) inside the box of the output's origins, whose corners an
  // NHWC map holds in 8 bits; taps shift them by 16-bit offsets.
  auto corner = [](int64_t c) { return c >= -128 && c < 128; };
  return g.SH <= 8 && g.SW <= 8 && corner(-g.PL) && corner(-g.PT) &&
         corner(::kiln::conv::im2col_upper_corner(g.OW, g.SW, g.PL, g.W)) &&
         corner(::kiln::conv::im2col_upper_corner(g.OH, g.SH, g.PT, g.H)) &&
         (g.KH - 1) * g.DH < 65536 && (g.KW - 1) * g.DW < 65536;
}

void chooseConvTma(ConvPlan &plan, const GpuTarget &target, bool allowed,
                   uint32_t staticBytes) {
  plan.tma = false;
  plan.tmaStages = 0;
  const ConvGeometry &g = plan.geometry;
  GemmTileConfig &tile = plan.choice.config;
  if (!allowed || !convTmaFits(plan))
    return;
  // Where the work items fit the SMs one each, a second block per SM would
  // find none: the one block takes the SM's shared memory for more stages
  // (results/bench/2026-12-02-h200-conv-tma-sweep.txt).
  int64_t items = ((plan.rows + tile.bm - 1) / tile.bm) *
                  ((plan.cols + tile.bn - 1) / tile.bn) * g.GROUPS *
                  plan.choice.split;
  int occupancy =
      items <= static_cast<int64_t>(target.smCount) ? 1 : tile.occupancy;
  // As many stages as fit the blocks per SM the tile runs (eight at most:
  // more no longer hide a copy's latency).
  uint32_t perBlock =
      std::min<uint32_t>(target.sharedBytesPerBlock,
                         target.sharedBytesPerSm / std::max(1, occupancy) -
                             1024) -
      staticBytes;
  int stages = 0;
  for (int s = 2; s <= 8; ++s)
    if (::kiln::conv::tma_shared_bytes(tile.bm, tile.bn, s) <= perBlock)
      stages = s;
  if (stages == 0)
    return;
  plan.tma = true;
  plan.tmaStages = stages;
  tile.occupancy = occupancy;
}

} // namespace mlir::kiln::codegen
