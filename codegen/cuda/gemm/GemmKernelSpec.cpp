//===- GemmKernelSpec.cpp - GEMM configurations to kernel specs -----------===//

#include "codegen/cuda/gemm/GemmKernelSpec.h"

#include "codegen/cuda/scalar/ScalarEmitter.h"

#include "kiln/gemm_layout.cuh"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>

namespace mlir::kiln::codegen {
namespace {

const char *boolText(bool value) { return value ? "true" : "false"; }

const char *elementName(GemmElement element) {
  switch (element) {
  case GemmElement::Bf16:
    return "bf16";
  case GemmElement::F16:
    return "f16";
  case GemmElement::F32:
    return "f32";
  }
  return "f32";
}

const char *cudaElement(GemmElement element) {
  switch (element) {
  case GemmElement::Bf16:
    return "__nv_bfloat16";
  case GemmElement::F16:
    return "__half";
  case GemmElement::F32:
    return "float";
  }
  return "float";
}

/// The parameters of both kernels: every buffer, then the split-K scratch
/// (and the GEMM kernel's tensor maps, `maps`, whose addresses `Params`
/// holds; the split-K reduce leaves them null).
void addParams(KernelSpec &spec, const GemmKernelConfig &config,
               llvm::ArrayRef<GemmBuffer> buffers,
               llvm::ArrayRef<GemmBuffer> maps = {}) {
  std::string names;
  for (const GemmBuffer &buffer : buffers) {
    spec.addParam((buffer.input ? "const " : "") + buffer.type +
                      " *__restrict__",
                  buffer.name, buffer.arg);
    names += buffer.name + ", ";
  }
  // The f32 partial products of split-K (absent without a split).
  if (config.choice.split > 1) {
    spec.addParam("float *__restrict__", "scratch", LaunchArg::scratch(0));
    names += "scratch";
  } else {
    names += "nullptr";
  }
  // The lhs maps of every problem, then the rhs maps (then the result's
  // map of a TMA store).
  size_t count = config.groups * config.ksums;
  for (size_t half = 0; half < 2 && !maps.empty(); ++half) {
    names += ", {";
    for (size_t i = 0; i < count; ++i) {
      const GemmBuffer &map = maps[half * count + i];
      spec.addParam(map.type, map.name, map.arg);
      names += (i ? ", &" : "&") + map.name;
    }
    names += "}";
  }
  if (config.tmaStore) {
    const GemmBuffer &map = maps[2 * count];
    spec.addParam(map.type, map.name, map.arg);
    names += ", &" + map.name;
  }
  spec.body = "  const Params p{" + names + "};\n";
}

/// The tile, its kernel's own parameters and the split, for --stats.
std::string describe(const GemmKernelConfig &config) {
  const GemmTileConfig &tile = config.choice.config;
  std::string text;
  llvm::raw_string_ostream os(text);
  os << elementName(config.element) << (config.tf32 ? "/tf32" : "") << " "
     << tile.bm << "x" << tile.bn << "x" << tile.bk;
  switch (tile.path) {
  case GemmPath::Wgmma:
    os << (tile.pingpong ? " ping-pong warpgroups 2"
                         : " warpgroups " + std::to_string(tile.bm / 64))
       << (config.tma ? " + TMA producer" : "") << " stages " << tile.stages
       << (config.stagedEpilogue ? " staged epilogue" : "")
       << (config.tmaStore ? " TMA store" : "")
       << (config.clusterM > 1
               ? " cluster " + std::to_string(config.clusterM) + "x1"
               : "");
    break;
  case GemmPath::MmaSync:
  case GemmPath::Tf32:
    os << " warps " << tile.warpsM << "x" << tile.warpsN << " stages "
       << tile.stages;
    break;
  case GemmPath::Simt:
    os << " thread " << tile.tm << "x" << tile.tn << " slices " << tile.slices;
    break;
  }
  os << (tile.pingpong ? " tiles/SM " : " blocks/SM ") << tile.occupancy
     << " split " << config.choice.split;
  os << " lhs " << (config.aKMajor ? "K" : "M") << "-major"
     << (config.aVec ? "" : " (scalar loads)") << " rhs "
     << (config.bKMajor ? "K" : "N") << "-major"
     << (config.bVec ? "" : " (scalar loads)");
  if (config.groups > 1)
    os << " problems " << config.groups;
  if (config.ksums > 1)
    os << " summed " << config.ksums;
  return text;
}

} // namespace

uint32_t gemmTmaSharedBytes(const GemmKernelConfig &config) {
  const GemmTileConfig &tile = config.choice.config;
  int consumerWarps = tile.threads() / 32;
  // The layout the kernel addresses its stages, staging and barriers by
  // (gemm_tma_shared.cuh).
  return ::kiln::gemm::tma_smem(tile.bm, tile.bn, tile.stages,
                                config.stagedEpilogue ? consumerWarps : 0)
      .bytes();
}

std::string gemmConfigFunctors(const GemmKernelConfig &config,
                               llvm::ArrayRef<GemmBuffer> buffers) {
  const GemmTileConfig &tile = config.choice.config;
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "// Element offsets and indices.\n"
     << "typedef " << (config.narrowIndex ? "int" : "long long") << " idx;\n";
  os << "struct Config {\n"
     << "  typedef " << cudaElement(config.element) << " element;\n"
     << "  typedef idx index;\n";
  int kind = config.element == GemmElement::Bf16  ? 0
             : config.element == GemmElement::F16 ? 1
                                                  : 2;
  os << "  static constexpr int KIND = " << kind
     << "; // 0 bf16, 1 f16, 2 tf32/f32\n";
  os << "  static constexpr bool TF32 = " << boolText(config.tf32) << ";\n";
  os << "  static constexpr idx M = " << config.m << ";\n";
  os << "  static constexpr idx N = " << config.n << ";\n";
  os << "  static constexpr idx K = " << config.k << ";\n";
  os << "  static constexpr idx BATCH = " << config.batch << ";\n";
  os << "  // The GEMM's batch and rows (the batch is folded into the rows "
        "when the rhs is shared).\n";
  os << "  static constexpr idx GEMM_BATCH = " << config.gemmBatch << ";\n";
  os << "  static constexpr idx ROWS = " << config.rows << ";\n";
  os << "  static constexpr idx OUT_ROWS = " << config.outRows
     << "; // rows of every output, r = batch * M + m\n";
  os << "  static constexpr idx GROUPS = " << config.groups
     << "; // problems of one shape in this launch, outputs stacked\n";
  os << "  static constexpr int KSUMS = " << config.ksums
     << "; // problems whose products are summed over their concatenated K\n";
  os << "  static constexpr bool A_KMAJOR = " << boolText(config.aKMajor)
     << "; // lhs stored [M][K]\n";
  os << "  static constexpr bool B_KMAJOR = " << boolText(config.bKMajor)
     << "; // rhs stored [N][K]\n";
  os << "  static constexpr bool A_VEC = " << boolText(config.aVec) << ";\n";
  os << "  static constexpr bool B_VEC = " << boolText(config.bVec) << ";\n";
  os << "  static constexpr int BM = " << tile.bm << ", BN = " << tile.bn
     << ", BK = " << tile.bk << ";\n";
  if (tile.path == GemmPath::Simt)
    os << "  static constexpr int TM = " << tile.tm << ", TN = " << tile.tn
       << ", SLICES = " << tile.slices << ";\n";
  else if (tile.path == GemmPath::Wgmma)
    os << "  static constexpr int STAGES = " << tile.stages << ";\n"
       << "  static constexpr bool PINGPONG = " << boolText(tile.pingpong)
       << ";\n"
       << "  static constexpr bool STAGED_EPILOGUE = "
       << boolText(config.stagedEpilogue) << ";\n"
       << "  static constexpr bool TMA_STORE = " << boolText(config.tmaStore)
       << ";\n"
       << "  static constexpr int CLUSTER_M = " << config.clusterM << ";\n";
  else
    os << "  static constexpr int WARPS_M = " << tile.warpsM
       << ", WARPS_N = " << tile.warpsN << ", STAGES = " << tile.stages
       << ";\n";
  os << "  static constexpr int MIN_BLOCKS = "
     << (tile.pingpong ? 1 : tile.occupancy) << ";\n";
  os << "  static constexpr int SPLIT = " << config.choice.split
     << ", KT_PER_SPLIT = " << config.choice.ktPerSplit << ";\n";
  os << "  static constexpr int GROUP_M = 8;\n";
  os << "};\n";
  os << "struct Params {\n";
  for (const GemmBuffer &buffer : buffers)
    os << "  " << (buffer.input ? "const " : "") << buffer.type << " *"
       << buffer.name << ";\n";
  os << "  float *scratch;\n";
  if (config.tma) {
    int64_t problems = config.groups * config.ksums;
    os << "  // Every problem's lhs and rhs tensor maps.\n"
       << "  const kiln::tensor_map *a_map[" << problems << "];\n"
       << "  const kiln::tensor_map *b_map[" << problems << "];\n";
    if (config.tmaStore)
      os << "  // The first result's tensor map (TMA stores).\n"
         << "  const kiln::tensor_map *o_map;\n";
  }
  os << "};\n";
  return text;
}

KernelSpec gemmKernelSpec(const GemmKernelConfig &config,
                          llvm::ArrayRef<GemmBuffer> buffers,
                          llvm::ArrayRef<GemmBuffer> maps, std::string functors,
                          std::string header, const GpuTarget &target) {
  const GemmTileConfig &tile = config.choice.config;
  KernelSpec spec;
  spec.prefix = "kiln_gemm";
  spec.header = std::move(header);
  spec.functors = std::move(functors);
  spec.configuration = describe(config);
  addParams(spec, config, buffers, config.tma ? maps : ArrayRef<GemmBuffer>());
  const char *function = nullptr;
  switch (tile.path) {
  case GemmPath::Wgmma:
    spec.templateName = config.tma ? "gemm_tma" : "gemm_wgmma";
    function = config.tma ? "tma_gemm" : "wgmma_gemm";
    break;
  case GemmPath::MmaSync:
  case GemmPath::Tf32:
    spec.templateName = "gemm_mma";
    function = "mma_gemm";
    break;
  case GemmPath::Simt:
    spec.templateName = "gemm_simt";
    function = "simt_gemm";
    break;
  }
  // The epilogue's scalar statements call kiln/scalar_ops.cuh.
  spec.templates = {"kiln/" + spec.templateName + ".cuh",
                    kScalarOpsHeader.str()};
  spec.body += std::string("  kiln::gemm::") + function +
               "<Config, Operands, Epilogue>(ctx, p);\n";
  // A ping-pong block holds its two tiles itself.
  spec.minBlocksPerSm = tile.pingpong ? 1 : tile.occupancy;
  spec.archSpecific = tile.path == GemmPath::Wgmma;

  int64_t tiles = ((config.rows + tile.bm - 1) / tile.bm) *
                  ((config.n + tile.bn - 1) / tile.bn);
  int64_t split = config.choice.split;
  // The TMA kernel adds its producer warpgroup.
  spec.block = {static_cast<uint32_t>(tile.threads() + (config.tma ? 128 : 0)),
                1, 1};
  if (tile.path == GemmPath::Wgmma) {
    // Persistent: one block per SM walks every (tile, problem or batch,
    // split); a cluster of blocks every (tile row of the cluster, ...).
    int64_t cluster = config.clusterM;
    int64_t clusterTiles = ((config.rows + tile.bm * cluster - 1) /
                            (tile.bm * cluster)) *
                           ((config.n + tile.bn - 1) / tile.bn);
    int64_t items = clusterTiles * config.groups * config.gemmBatch * split;
    spec.grid = {static_cast<uint32_t>(
                     std::min<int64_t>(items, target.smCount / cluster) *
                     cluster),
                 1, 1};
    spec.cluster = {static_cast<uint32_t>(cluster), 1, 1};
    spec.persistentBlocksPerSm = 1;
  } else
    spec.grid = {static_cast<uint32_t>(tiles), 1,
                 static_cast<uint32_t>(std::min<int64_t>(
                     config.groups * config.gemmBatch * split, 65535))};
  spec.dynamicSharedBytes =
      config.tma ? gemmTmaSharedBytes(config)
                 : tile.sharedBytes(config.aKMajor, config.bKMajor,
                                    config.elementBytes());
  // A merged kernel takes the largest part's registers and threads; a
  // warp-specialised block reallocates its own.
  if (config.tma)
    spec.mergeable = false;
  return spec;
}

KernelSpec gemmSplitReduceSpec(const GemmKernelConfig &config,
                               llvm::ArrayRef<GemmBuffer> buffers,
                               std::string functors, std::string header,
                               const GpuTarget &target) {
  KernelSpec spec;
  spec.prefix = "kiln_gemm_splitk";
  spec.header = std::move(header);
  spec.functors = std::move(functors);
  spec.templateName = "gemm_splitk";
  spec.templates = {"kiln/gemm_splitk.cuh", kScalarOpsHeader.str()};
  spec.configuration = "split " + std::to_string(config.choice.split) + " of " +
                       describe(config);
  addParams(spec, config, buffers);
  spec.body += "  kiln::gemm::splitk_reduce<Config, Epilogue>(ctx, p);\n";
  int64_t perThread = config.n % 4 == 0 ? 4 : 1;
  spec.grid = {static_cast<uint32_t>(std::min<int64_t>(
                   (config.outElements() / perThread + 255) / 256,
                   int64_t{target.smCount} * 16)),
               1, 1};
  spec.block = {256, 1, 1};
  return spec;
}

} // namespace mlir::kiln::codegen
