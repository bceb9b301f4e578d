//===- GemmEmitter.cpp - kiln.fusion "gemm": matmul + elementwise epilogue ===//
//
// Plans the kernels of a gemm fusion (GemmPlan.h says what one is): the
// configuration the cost model picks for the GpuTarget (GemmConfig.h), the
// generated functors (the configuration struct, the operand matrices of a
// GEMM batch, the fused epilogue of GemmEpilogue.h) and the KernelSpec of
// each kernel (GemmKernelSpec.h). The kernels are templates under kernels/:
//  - bf16/f16 on sm_90: warpgroup MMA (sm_90a) on 128-byte swizzled shared
//    tiles, both operands in whole 16-byte chunks; the cost model picks it
//    per shape. One GEMM (a batch sharing the rhs folded into the rows) of
//    up to kGemmTmaMaxProblems grouped or summed problems takes the
//    warp-specialised kernel whose producer copies by TMA (gemm_tma.cuh);
//    a batch of GEMMs, or --no-tma, the kernel filled by cp.async
//    (gemm_wgmma.cuh), which runs one problem.
//  - bf16/f16: mma.sync m16n8k16 (gemm_mma.cuh), f32 with allowTf32: the
//    same kernel with m16n8k8 tf32. Operands whose contiguous dimension is
//    not a multiple of 16 bytes are loaded element by element.
//  - f32 by default: exact f32 FMA (gemm_simt.cuh).
//  - Small problems split K across blocks for parallelism: each split writes
//    f32 partial products to scratch and a second kernel (gemm_splitk.cuh)
//    adds them in split order (deterministic) and applies the epilogue.
// Batch dimensions broadcast through per-batch offset functions; when the
// rhs is shared by every batch and the lhs is dense and not transposed, the
// batch is folded into M (one large GEMM).
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/gemm/GemmEmitter.h"

#include "codegen/cuda/EmitterRegistry.h"
#include "codegen/cuda/EmitterUtils.h"
#include "codegen/cuda/KernelEmitter.h"
#include "codegen/cuda/gemm/GemmConfig.h"
#include "codegen/cuda/gemm/GemmEpilogue.h"
#include "codegen/cuda/gemm/GemmKernelAttr.h"
#include "codegen/cuda/gemm/GemmKernelSpec.h"
#include "codegen/cuda/gemm/GemmPlan.h"
#include "codegen/cuda/gemm/GemmSetup.h"

#include "kiln/gemm_layout.cuh"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <limits>
#include <optional>

namespace mlir::kiln::codegen {
namespace {

/// Body of a device function computing an element offset from a row-major
/// coordinate decomposition. `index` is the linear index over `dims`;
/// `strides` (one per dim) weight the coordinates.
std::string offsetBody(ArrayRef<int64_t> dims, ArrayRef<int64_t> strides,
                       const std::string &index) {
  bool any = llvm::any_of(strides, [](int64_t s) { return s != 0; });
  if (!any)
    return "    return 0;\n";
  // Dense row-major strides: the offset is the index itself times the
  // innermost stride.
  SmallVector<int64_t> dense(dims.size());
  int64_t stride = strides.empty() ? 1 : strides.back();
  for (size_t i = 0; i < dims.size(); ++i) {
    dense[dims.size() - 1 - i] = stride;
    stride *= dims[dims.size() - 1 - i];
  }
  if (ArrayRef<int64_t>(dense) == strides)
    return "    return " + index + " * " + std::to_string(strides.back()) +
           ";\n";
  std::string text = "    idx rest = " + index + ", off = 0;\n";
  for (size_t i = 0; i < dims.size(); ++i) {
    size_t d = dims.size() - 1 - i;
    if (strides[d] != 0)
      text += "    off += (rest % " + std::to_string(dims[d]) + ") * " +
              std::to_string(strides[d]) + ";\n";
    if (i + 1 < dims.size())
      text += "    rest /= " + std::to_string(dims[d]) + ";\n";
  }
  return text + "    return off;\n";
}

/// The comment lines heading the kernels: the fused ops and the results.
std::string describeFusion(const GemmPlan &plan, FusionOp fusion,
                           int64_t groups) {
  Block &body = fusion.getBody().front();
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "// kiln gemm fusion: ";
  if (groups > 1)
    os << groups << " x ";
  os << "kiln.matmul";
  if (plan.transposeLhs)
    os << " transpose_lhs";
  if (plan.transposeRhs)
    os << " transpose_rhs";
  MatmulOp first = plan.problems.front().matmul;
  os << " " << first.getLhs().getType() << ", " << first.getRhs().getType();
  for (Operation &op : body.without_terminator())
    if (!isa<MatmulOp>(op))
      os << "; " << op.getName().getStringRef();
  os << "\n// yields:";
  for (Value value : body.getTerminator()->getOperands())
    os << " " << value.getType();
  os << "\n";
  return text;
}

/// `struct Operands`: the operand matrices of GEMM batch b (batches of
/// problem g follow those of problem g - 1, whether the problems are stacked
/// or summed) and the batch offsets (elements) behind them.
std::string writeOperands(const GemmPlan &plan, bool fold) {
  ArrayRef<int64_t> outBatch = ArrayRef<int64_t>(plan.outShape).drop_back(2);
  auto batchOffset = [&](ArrayRef<int64_t> strides, int64_t matrix) {
    SmallVector<int64_t> scaled;
    for (int64_t s : strides)
      scaled.push_back(s * matrix);
    if (fold)
      return std::string("    return 0;\n");
    return offsetBody(outBatch, scaled, "b");
  };
  const char *fn = "  static __device__ __forceinline__ ";
  std::string text = "struct Operands {\n";
  text += std::string(fn) + "idx lhs_batch(idx b) {\n" +
          batchOffset(plan.lhsBatchStrides, plan.m * plan.k) + "  }\n";
  text += std::string(fn) + "idx rhs_batch(idx b) {\n" +
          batchOffset(plan.rhsBatchStrides, plan.k * plan.n) + "  }\n";
  auto operandOf = [&](const char *name, bool lhs) {
    std::string t = std::string(fn) + "const Config::element *" + name +
                    "(const Params &p, idx b) {\n";
    const char *offset = lhs ? "lhs_batch" : "rhs_batch";
    auto arg = [&](const GemmProblem &problem) {
      return "p.in" + std::to_string(lhs ? problem.lhsArg : problem.rhsArg);
    };
    if (plan.problems.size() == 1)
      return t + "    return " + arg(plan.problems.front()) + " + " + offset +
             "(b);\n  }\n";
    t += "    const idx g = b / Config::GEMM_BATCH;\n"
         "    b -= g * Config::GEMM_BATCH;\n    switch (g) {\n";
    for (auto [g, problem] : llvm::enumerate(plan.problems))
      t +=
          (g + 1 < plan.problems.size() ? "    case " + std::to_string(g) + ": "
                                        : std::string("    default: ")) +
          "return " + arg(problem) + " + " + offset + "(b);\n";
    return t + "    }\n  }\n";
  };
  return text + operandOf("lhs", true) + operandOf("rhs", false) + "};\n";
}

/// The tensor maps of gemm_tma.cuh: each problem's lhs, then each one's
/// rhs, as 2-D tiled maps {contiguous, outer} of the GEMM's rows (the batch
/// folded in), K and N, 128-byte swizzled, in boxes of 64 by the tile's
/// rows (K-major; the rhs's by a cluster block's share of them) or 64 by 64
/// (M/N-major: one per 64-wide column).
SmallVector<GemmBuffer> tensorMapsOf(const GemmPlan &plan,
                                     const GemmKernelConfig &config) {
  const GemmTileConfig &tile = config.choice.config;
  uint64_t e = static_cast<uint64_t>(config.elementBytes());
  auto mapOf = [&](bool kMajor, int64_t rows, int tileRows) {
    TensorMapLayout map;
    uint64_t inner = static_cast<uint64_t>(kMajor ? plan.k : rows);
    uint64_t outer = static_cast<uint64_t>(kMajor ? rows : plan.k);
    map.dims = {inner, outer};
    map.strides = {inner * e};
    map.box = {static_cast<uint32_t>(::kiln::gemm::wgmma_block_k),
               static_cast<uint32_t>(kMajor ? tileRows : 64)};
    map.elementStrides = {1, 1};
    map.swizzleBytes = 128;
    return map;
  };
  SmallVector<GemmBuffer> maps;
  for (bool lhs : {true, false})
    for (auto [g, problem] : llvm::enumerate(plan.problems)) {
      TensorMapLayout map = lhs ? mapOf(config.aKMajor, config.rows, tile.bm)
                                : mapOf(config.bKMajor, plan.n,
                                        tile.bn / config.clusterM);
      unsigned arg = lhs ? problem.lhsArg : problem.rhsArg;
      maps.push_back(
          {kTensorMapParamType.str(), true,
           (lhs ? "a_map" : "b_map") + std::to_string(g),
           LaunchArg::tensorMapOf(LaunchArg::operand(arg), std::move(map))});
    }
  return maps;
}

/// The map of the result a TMA store writes: {N, rows of every output},
/// in the staged epilogue's boxes of 64 columns by a warp's 16 rows,
/// 128-byte swizzled (kernels/gemm_layout.cuh, wgmma_staged_offset).
TensorMapLayout outputMapOf(const GemmPlan &plan,
                            const GemmKernelConfig &config) {
  uint64_t n = static_cast<uint64_t>(plan.n);
  TensorMapLayout map;
  map.dims = {n, static_cast<uint64_t>(config.outRows)};
  map.strides = {n * static_cast<uint64_t>(config.elementBytes())};
  map.box = {64, 16};
  map.elementStrides = {1, 1};
  map.swizzleBytes = 128;
  return map;
}

/// The CUDA element type of a fusion operand or result.
std::string bufferType(Value value) {
  Type element = gemmElementTypeOf(value);
  if (isGemmFloatElement(element))
    return cudaType(element);
  return element.isInteger(1) ? "bool" : "int";
}

} // namespace

FailureOr<GeneratedFusion> emitGemm(FusionOp fusion,
                                    const CodegenOptions &options,
                                    const GemmKernelChoice &kernel) {
  FailureOr<GemmSetup> setUp = setUpGemm(fusion, options);
  if (failed(setUp) || failed(verifyGemm(*setUp, fusion, options, kernel)))
    return failure();
  const GemmSetup &setup = *setUp;
  const GemmPlan &plan = setup.plan;
  const GpuTarget &target = options.target();
  GemmKernelConfig config = setup.config;
  // Of every problem together.
  int64_t outElements = config.outElements();
  if (outElements == 0)
    return GeneratedFusion{}; // nothing to compute

  const GemmTileConfig &tile = kernel.choice.config;
  config.choice = {tile, kernel.choice.split,
                   static_cast<int>(
                       gemmKTilesPerSplit(setup, tile, kernel.choice.split))};
  config.tf32 = tile.path == GemmPath::Tf32;
  config.tma = kernel.tma;
  // The staged epilogue stores whole runs of 8 columns of one split's
  // results, in the shared memory the stages leave. It reads the
  // epilogue's operands one run at a time, a load latency each, so it
  // prefetches the rows of those of the product's shape into the L2 when it
  // takes a tile: a ping-pong GELU gradient (K = 1024 on the H200) then
  // takes 170 us against 186 without the prefetch and the fragment stores'
  // 165, and the step as a whole is fastest with every epilogue staged.
  config.stagedEpilogue = gemmStagedEpilogue(setup, config, target);
  // The copy engine stores the staged rows of the first result when it has
  // the operands' element type (the staging's) and one problem writes it.
  std::optional<unsigned> storedResult =
      kernel.tmaStore
          ? gemmTmaStoreResult(setup, fusion, config.stagedEpilogue)
          : std::nullopt;
  config.tmaStore = storedResult.has_value();
  config.clusterM = kernel.clusterM;

  // 32-bit index math (fewer registers) when every buffer, the scratch
  // and the tile overhang stay far below 2^31 elements.
  int64_t largest = static_cast<int64_t>(config.choice.split) * outElements;
  for (Value value : fusion.getInputs())
    largest = std::max(largest, gemmProduct(gemmShapeOf(value)));
  for (Value value : fusion.getResults())
    largest = std::max(largest, gemmProduct(gemmShapeOf(value)));
  config.narrowIndex = largest <= (int64_t(1) << 30);

  int64_t tiles = ((config.rows + tile.bm - 1) / tile.bm) *
                  ((plan.n + tile.bn - 1) / tile.bn);
  if (tiles > std::numeric_limits<int32_t>::max())
    return (emitFusionError(fusion) << "the gemm has too many tiles (")
           << tiles << ") for one launch";

  // Parameters: every operand, every result (then the split-K scratch).
  SmallVector<GemmBuffer> buffers;
  for (auto [i, input] : llvm::enumerate(fusion.getInputs()))
    buffers.push_back({bufferType(input), true, "in" + std::to_string(i),
                       LaunchArg::operand(i)});
  for (auto [i, result] : llvm::enumerate(fusion.getResults()))
    buffers.push_back({bufferType(result), false, "out" + std::to_string(i),
                       LaunchArg::result(i)});

  SmallVector<GemmBuffer> maps;
  if (config.tma)
    maps = tensorMapsOf(plan, config);
  if (config.tmaStore)
    maps.push_back({kTensorMapParamType.str(), false, "o_map",
                    LaunchArg::tensorMapOf(LaunchArg::result(*storedResult),
                                           outputMapOf(plan, config))});

  FailureOr<std::string> epilogue =
      writeGemmEpilogue(plan, fusion, config.stagedEpilogue,
                        /*prefetch=*/config.stagedEpilogue, config.tmaStore);
  if (failed(epilogue))
    return failure();
  std::string functors = gemmConfigFunctors(config, buffers) +
                         writeOperands(plan, setup.fold) + *epilogue;
  std::string header = describeFusion(plan, fusion, config.groups);

  FusionBuilder builder(header);
  if (config.choice.split > 1)
    // The only scratch of the fusion: the partials start at offset 0,
    // where the kernels' LaunchArg::scratch(0) points.
    builder.scratch(4ull * config.choice.split * outElements);
  builder.kernel(
      gemmKernelSpec(config, buffers, maps, functors, header, target));
  if (config.choice.split > 1)
    builder.kernel(
        gemmSplitReduceSpec(config, buffers, functors, header, target));
  return builder.take();
}

namespace {

class GemmEmitter final : public KernelEmitter {
public:
  bool matches(FusionOp fusion) const override {
    std::string why;
    return succeeded(analyzeGemm(fusion, why));
  }

  FailureOr<GeneratedFusion>
  emit(FusionOp fusion, const CodegenOptions &options) const override {
    FailureOr<GemmKernelChoice> kernel = gemmKernelOf(fusion, options);
    if (failed(kernel))
      return failure();
    return emitGemm(fusion, options, *kernel);
  }

  FailureOr<Attribute>
  selectKernel(FusionOp fusion, const CodegenOptions &options) const override {
    FailureOr<GemmKernelChoice> kernel = selectGemm(fusion, options);
    if (failed(kernel))
      return failure();
    return Attribute(gemmKernelAttr(fusion.getContext(), *kernel));
  }

  LogicalResult verifyKernel(FusionOp fusion, Attribute,
                             const CodegenOptions &options) const override {
    FailureOr<GemmKernelChoice> kernel = gemmKernelOf(fusion, options);
    return failure(failed(kernel) ||
                   failed(verifyGemm(fusion, options, *kernel)));
  }
};

} // namespace

std::unique_ptr<KernelEmitter> createGemmEmitter() {
  return std::make_unique<GemmEmitter>();
}

static const EmitterRegistration registration(EmitterOrder::Gemm,
                                              createGemmEmitter);

} // namespace mlir::kiln::codegen
