//===- KilnCudaDialect.cpp - kernel decisions as attributes ---------------===//

#include "codegen/dialect/KilnCudaDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

#include <limits>
#include <utility>

using namespace mlir;
using namespace mlir::kiln::cuda;

#include "codegen/dialect/KilnCudaDialect.cpp.inc"
#include "codegen/dialect/KilnCudaEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "codegen/dialect/KilnCudaAttrs.cpp.inc"

void KilnCudaDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "codegen/dialect/KilnCudaAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// The `<KIND, key = value, flag, ...>` syntax of the kernel attributes
//===----------------------------------------------------------------------===//

namespace {
/// One field of a kernel attribute: `key = N`, `key = AxB...` (`rank`
/// sizes), `key = [N, ...]` (a list) or a bare `key` (a flag).
struct Field {
  StringRef key;
  int64_t *integer = nullptr;
  SmallVector<int64_t> *dims = nullptr;
  size_t rank = 0;
  bool *flag = nullptr;
  /// Sizes that may be left out (they stay empty).
  bool optional = false;
  SmallVector<int64_t> *list = nullptr;

  static Field listOf(StringRef key, SmallVector<int64_t> *values) {
    Field field{key};
    field.list = values;
    return field;
  }
};

/// `MxNxK` for rank 3, `MxN` for rank 2.
std::string dimsSyntax(size_t rank) { return rank == 3 ? "MxNxK" : "MxN"; }

/// Parses `< KIND` and the `, field` entries up to the closing `>` of
/// attribute `name`, whose kind is one of `kinds` (their names); `kind` is
/// its index. An attribute without kinds starts with its first field.
ParseResult parseKernelAttr(AsmParser &parser, StringRef name,
                            ArrayRef<StringRef> kinds, unsigned &kind,
                            ArrayRef<Field> fields) {
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseLess())
    return failure();
  if (!kinds.empty()) {
    StringRef kindName;
    if (parser.parseKeyword(&kindName))
      return failure();
    const StringRef *found = llvm::find(kinds, kindName);
    if (found == kinds.end())
      return parser.emitError(loc, "unknown kernel '")
             << kindName << "' of #kiln_cuda." << name << " (expected "
             << llvm::join(kinds, ", ") << ")";
    kind = found - kinds.begin();
  }
  bool first = kinds.empty();
  while (std::exchange(first, false) ||
         succeeded(parser.parseOptionalComma())) {
    SMLoc keyLoc = parser.getCurrentLocation();
    StringRef key;
    if (parser.parseKeyword(&key))
      return failure();
    const Field *field = llvm::find_if(
        fields, [&](const Field &f) { return f.key == key; });
    if (field == fields.end()) {
      InFlightDiagnostic diag = parser.emitError(keyLoc, "unknown #kiln_cuda.")
                                << name << " field '" << key
                                << "' (expected";
      for (const Field &f : fields)
        diag << " " << f.key;
      return diag << ")";
    }
    if (field->flag) {
      *field->flag = true;
    } else if (field->list) {
      field->list->clear();
      if (parser.parseEqual() ||
          parser.parseCommaSeparatedList(
              AsmParser::Delimiter::Square, [&]() -> ParseResult {
                return parser.parseInteger(field->list->emplace_back());
              }))
        return failure();
    } else if (field->integer) {
      if (parser.parseEqual() || parser.parseInteger(*field->integer))
        return failure();
    } else {
      field->dims->clear();
      if (parser.parseEqual() ||
          parser.parseDimensionList(*field->dims, /*allowDynamic=*/false,
                                    /*withTrailingX=*/false))
        return failure();
      if (field->dims->size() != field->rank)
        return parser.emitError(keyLoc, "expected ")
               << key << " = " << dimsSyntax(field->rank);
    }
  }
  if (parser.parseGreater())
    return failure();
  for (const Field &f : fields)
    if (f.dims && f.dims->size() != f.rank && !(f.optional && f.dims->empty()))
      return parser.emitError(loc, "#kiln_cuda.")
             << name << " needs " << f.key << " = " << dimsSyntax(f.rank);
  return success();
}

/// Parses attribute `name`, which has no kinds, from `fields`.
ParseResult parseFields(AsmParser &parser, StringRef name,
                        ArrayRef<Field> fields) {
  unsigned noKind = 0;
  return parseKernelAttr(parser, name, {}, noKind, fields);
}

/// Prints `key = [N, ...]`.
void printList(AsmPrinter &printer, StringRef key, ArrayRef<int64_t> values) {
  printer << key << " = [";
  llvm::interleaveComma(values, printer);
  printer << "]";
}

/// Whether every value is positive (an empty list is not).
bool allPositive(ArrayRef<int64_t> values) {
  return !values.empty() &&
         llvm::all_of(values, [](int64_t value) { return value > 0; });
}

/// A block size the grid-stride kernels take: whole warps, at most 1024.
bool isBlockSize(int64_t threads) {
  return threads >= 32 && threads <= 1024 && threads % 32 == 0;
}

/// 1, 2, 4 or 8 elements per 16-byte access.
bool isVectorWidth(int64_t width) {
  return width == 1 || width == 2 || width == 4 || width == 8;
}
} // namespace

//===----------------------------------------------------------------------===//
// #kiln_cuda.gemm
//===----------------------------------------------------------------------===//

Attribute GemmAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  static constexpr StringRef kinds[] = {"tma", "wgmma", "mma", "tf32", "simt"};
  unsigned kind = 0;
  SmallVector<int64_t> tile;
  int64_t stages = 0, cluster = 1, split = 1;
  bool pingpong = false, tmaStore = false;
  Field fields[] = {{"tile", nullptr, &tile, 3},
                    {"stages", &stages},
                    {"pingpong", nullptr, nullptr, 0, &pingpong},
                    {"cluster", &cluster},
                    {"split", &split},
                    {"tma_store", nullptr, nullptr, 0, &tmaStore}};
  if (failed(parseKernelAttr(parser, "gemm", kinds, kind, fields)))
    return {};
  return GemmAttr::getChecked([&] { return parser.emitError(loc); },
                              parser.getContext(), *symbolizeGemmKind(kind),
                              tile[0], tile[1], tile[2], stages, pingpong,
                              cluster, split, tmaStore);
}

void GemmAttr::print(AsmPrinter &printer) const {
  printer << "<" << stringifyGemmKind(getKind()) << ", tile = " << getTileM()
          << "x" << getTileN() << "x" << getTileK();
  if (getStages())
    printer << ", stages = " << getStages();
  if (getPingpong())
    printer << ", pingpong";
  if (getCluster() != 1)
    printer << ", cluster = " << getCluster();
  if (getSplit() != 1)
    printer << ", split = " << getSplit();
  if (getTmaStore())
    printer << ", tma_store";
  printer << ">";
}

LogicalResult GemmAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               GemmKind kind, int64_t tileM, int64_t tileN,
                               int64_t tileK, int64_t stages, bool pingpong,
                               int64_t cluster, int64_t split, bool tmaStore) {
  if (tileM <= 0 || tileN <= 0 || tileK <= 0)
    return emitError() << "#kiln_cuda.gemm tile dimensions must be positive";
  if (stages < 0 || cluster < 1 || split < 1)
    return emitError() << "#kiln_cuda.gemm needs stages >= 0, cluster >= 1 "
                          "and split >= 1";
  if ((pingpong || cluster > 1 || tmaStore) && kind != GemmKind::Tma)
    return emitError() << "pingpong, cluster and tma_store are the tma "
                          "kernel's";
  return success();
}

//===----------------------------------------------------------------------===//
// #kiln_cuda.conv
//===----------------------------------------------------------------------===//

/// The wgmma kernels' tiles have no warp grid.
static bool hasWarps(ConvKind kind) {
  return kind == ConvKind::Mma || kind == ConvKind::Tf32;
}

Attribute ConvAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  static constexpr StringRef kinds[] = {"tma", "wgmma", "mma", "tf32",
                                        "depthwise"};
  unsigned kind = 0;
  SmallVector<int64_t> tile, warps = {0, 0};
  int64_t stages = 0, blocksPerSm = 1, split = 1;
  Field fields[] = {{"tile", nullptr, &tile, 3, nullptr, /*optional=*/true},
                    {"warps", nullptr, &warps, 2},
                    {"stages", &stages},
                    {"blocks_per_sm", &blocksPerSm},
                    {"split", &split}};
  if (failed(parseKernelAttr(parser, "conv", kinds, kind, fields)))
    return {};
  if (tile.empty())
    tile = {0, 0, 0};
  return ConvAttr::getChecked([&] { return parser.emitError(loc); },
                              parser.getContext(), *symbolizeConvKind(kind),
                              tile[0], tile[1], tile[2], warps[0], warps[1],
                              stages, blocksPerSm, split);
}

void ConvAttr::print(AsmPrinter &printer) const {
  if (getKind() == ConvKind::Depthwise) {
    printer << "<depthwise>";
    return;
  }
  printer << "<" << stringifyConvKind(getKind()) << ", tile = " << getTileM()
          << "x" << getTileN() << "x" << getTileK();
  if (hasWarps(getKind()))
    printer << ", warps = " << getWarpsM() << "x" << getWarpsN();
  printer << ", stages = " << getStages()
          << ", blocks_per_sm = " << getBlocksPerSm();
  if (getSplit() != 1)
    printer << ", split = " << getSplit();
  printer << ">";
}

LogicalResult ConvAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               ConvKind kind, int64_t tileM, int64_t tileN,
                               int64_t tileK, int64_t warpsM, int64_t warpsN,
                               int64_t stages, int64_t blocksPerSm,
                               int64_t split) {
  if (kind == ConvKind::Depthwise) {
    if (tileM || tileN || tileK || warpsM || warpsN || stages ||
        blocksPerSm != 1 || split != 1)
      return emitError() << "the depthwise kernels take no tile, warps, "
                            "stages, blocks_per_sm or split";
    return success();
  }
  if (tileM <= 0 || tileN <= 0 || tileK <= 0)
    return emitError() << "#kiln_cuda.conv tile dimensions must be positive";
  if (hasWarps(kind) ? warpsM < 1 || warpsN < 1 : warpsM || warpsN)
    return emitError() << "the mma and tf32 kernels' tiles take warps = MxN "
                          "(positive), the wgmma kernels' none";
  if (stages < 1 || blocksPerSm < 1 || split < 1)
    return emitError() << "#kiln_cuda.conv needs positive stages, "
                          "blocks_per_sm and split";
  return success();
}

//===----------------------------------------------------------------------===//
// #kiln_cuda.attention
//===----------------------------------------------------------------------===//

Attribute AttentionAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  static constexpr StringRef kinds[] = {"simt", "wgmma"};
  unsigned kind = 0;
  SmallVector<int64_t> forward, dq, dkdv;
  int64_t tile = 0, persistent = 0;
  bool pingpong = false, separateDkdv = false, fused = false;
  Field fields[] = {{"tile", &tile},
                    {"forward", nullptr, &forward, 3, nullptr, true},
                    {"dq", nullptr, &dq, 3, nullptr, true},
                    {"dkdv", nullptr, &dkdv, 3, nullptr, true},
                    {"pingpong", nullptr, nullptr, 0, &pingpong},
                    {"separate_dkdv", nullptr, nullptr, 0, &separateDkdv},
                    {"fused", nullptr, nullptr, 0, &fused},
                    {"persistent", &persistent}};
  if (failed(parseKernelAttr(parser, "attention", kinds, kind, fields)))
    return {};
  return AttentionAttr::getChecked(
      [&] { return parser.emitError(loc); }, parser.getContext(),
      *symbolizeAttentionKind(kind), tile, forward, dq, dkdv, pingpong,
      separateDkdv, fused, persistent);
}

void AttentionAttr::print(AsmPrinter &printer) const {
  printer << "<" << stringifyAttentionKind(getKind());
  if (getTile())
    printer << ", tile = " << getTile();
  auto kernel = [&](StringRef key, ArrayRef<int64_t> sizes) {
    if (!sizes.empty())
      printer << ", " << key << " = " << sizes[0] << "x" << sizes[1] << "x"
              << sizes[2];
  };
  kernel("forward", getForward());
  kernel("dq", getDq());
  kernel("dkdv", getDkdv());
  if (getPingpong())
    printer << ", pingpong";
  if (getSeparateDkdv())
    printer << ", separate_dkdv";
  if (getFused())
    printer << ", fused";
  if (getPersistent())
    printer << ", persistent = " << getPersistent();
  printer << ">";
}

/// Why the fields of a #kiln_cuda.attention do not describe one of the
/// kernels' forms; empty if they do.
static std::string
attentionMismatch(AttentionKind kind, int64_t tile, ArrayRef<int64_t> forward,
                  ArrayRef<int64_t> dq, ArrayRef<int64_t> dkdv, bool pingpong,
                  bool separateDkdv, bool fused, int64_t persistent) {
  bool wgmmaFields = !forward.empty() || !dq.empty() || !dkdv.empty() ||
                     pingpong || separateDkdv || fused || persistent;
  if (kind == AttentionKind::Simt)
    return tile > 0 && !wgmmaFields
               ? ""
               : "the simt kernels take a positive tile and nothing else";
  if (tile)
    return "the wgmma kernels take no tile";
  for (ArrayRef<int64_t> sizes : {forward, dq, dkdv})
    if (!sizes.empty() && sizes.size() != 3)
      return "a wgmma kernel is BMxBNxS";
  if (llvm::any_of(llvm::concat<const int64_t>(forward, dq, dkdv),
                   [](int64_t size) { return size <= 0; }) ||
      persistent < 0)
    return "the wgmma kernels' sizes must be positive, persistent at "
           "least 0";
  bool backward = !dq.empty() || !dkdv.empty() || separateDkdv || fused;
  if (forward.empty() == !backward)
    return "a wgmma attention is a forward (forward = BMxBNxS) or a "
           "backward (dkdv = BMxBNxS), not both";
  if (pingpong && backward)
    return "pingpong is the forward's";
  if (!backward)
    return "";
  if (dkdv.empty())
    return "the backward needs dkdv = BMxBNxS";
  if (dq.empty() != fused)
    return "the backward takes dq = BMxBNxS, or is fused and takes none";
  if (fused && separateDkdv)
    return "the fused backward has no separate dK and dV launches";
  return "";
}

LogicalResult
AttentionAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      AttentionKind kind, int64_t tile,
                      ArrayRef<int64_t> forward, ArrayRef<int64_t> dq,
                      ArrayRef<int64_t> dkdv, bool pingpong, bool separateDkdv,
                      bool fused, int64_t persistent) {
  std::string why = attentionMismatch(kind, tile, forward, dq, dkdv, pingpong,
                                      separateDkdv, fused, persistent);
  if (!why.empty())
    return emitError() << "#kiln_cuda.attention: " << why;
  return success();
}

//===----------------------------------------------------------------------===//
// #kiln_cuda.rnn
//===----------------------------------------------------------------------===//

Attribute RnnAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  static constexpr StringRef kinds[] = {"block", "cluster", "grid"};
  unsigned sync = 0;
  int64_t batchTile = 0, blocks = 0, splits = 1;
  Field fields[] = {{"batch_tile", &batchTile},
                    {"blocks", &blocks},
                    {"splits", &splits}};
  if (failed(parseKernelAttr(parser, "rnn", kinds, sync, fields)))
    return {};
  return RnnAttr::getChecked([&] { return parser.emitError(loc); },
                             parser.getContext(), *symbolizeRnnSync(sync),
                             batchTile, blocks, splits);
}

void RnnAttr::print(AsmPrinter &printer) const {
  printer << "<" << stringifyRnnSync(getSync())
          << ", batch_tile = " << getBatchTile() << ", blocks = " << getBlocks()
          << ", splits = " << getSplits() << ">";
}

LogicalResult RnnAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                              RnnSync sync, int64_t batchTile, int64_t blocks,
                              int64_t splits) {
  if (batchTile <= 0 || blocks <= 0 || splits <= 0)
    return emitError() << "#kiln_cuda.rnn needs a positive batch_tile, "
                          "blocks and splits";
  if ((sync == RnnSync::Block) != (blocks == 1))
    return emitError() << "#kiln_cuda.rnn: one block per group meets "
                          "alone (block), more in a cluster or grid";
  return success();
}

//===----------------------------------------------------------------------===//
// #kiln_cuda.reduction
//===----------------------------------------------------------------------===//

Attribute ReductionAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  static constexpr StringRef kinds[] = {"rows", "columns"};
  unsigned mode = 0;
  int64_t splits = 1;
  Field fields[] = {{"splits", &splits}};
  if (failed(parseKernelAttr(parser, "reduction", kinds, mode, fields)))
    return {};
  return ReductionAttr::getChecked([&] { return parser.emitError(loc); },
                                   parser.getContext(),
                                   *symbolizeReductionMode(mode), splits);
}

void ReductionAttr::print(AsmPrinter &printer) const {
  printer << "<" << stringifyReductionMode(getMode())
          << ", splits = " << getSplits() << ">";
}

LogicalResult
ReductionAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      ReductionMode, int64_t splits) {
  if (splits < 1 || splits > 1024)
    return emitError() << "#kiln_cuda.reduction splits the reduced range "
                          "over 1 to 1024 blocks";
  return success();
}

//===----------------------------------------------------------------------===//
// Kernels sized by a block count: #kiln_cuda.row_reduction, #kiln_cuda.custom,
// #kiln_cuda.batch_norm
//===----------------------------------------------------------------------===//

/// Parses `<blocks = B>` into attribute `Attr` named `name`.
template <class Attr>
static Attribute parseBlocksAttr(AsmParser &parser, StringRef name) {
  SMLoc loc = parser.getCurrentLocation();
  int64_t blocks = 0;
  Field fields[] = {{"blocks", &blocks}};
  if (failed(parseFields(parser, name, fields)))
    return {};
  return Attr::getChecked([&] { return parser.emitError(loc); },
                          parser.getContext(), blocks);
}

static LogicalResult verifyBlocks(function_ref<InFlightDiagnostic()> emitError,
                                  StringRef name, int64_t blocks) {
  if (blocks < 1 || blocks > std::numeric_limits<int32_t>::max())
    return emitError() << "#kiln_cuda." << name
                       << " needs blocks = B, from 1 to 2^31 - 1";
  return success();
}

Attribute RowReductionAttr::parse(AsmParser &parser, Type) {
  return parseBlocksAttr<RowReductionAttr>(parser, "row_reduction");
}
void RowReductionAttr::print(AsmPrinter &printer) const {
  printer << "<blocks = " << getBlocks() << ">";
}
LogicalResult
RowReductionAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                         int64_t blocks) {
  return verifyBlocks(emitError, "row_reduction", blocks);
}

Attribute CustomAttr::parse(AsmParser &parser, Type) {
  return parseBlocksAttr<CustomAttr>(parser, "custom");
}
void CustomAttr::print(AsmPrinter &printer) const {
  printer << "<blocks = " << getBlocks() << ">";
}
LogicalResult CustomAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 int64_t blocks) {
  return verifyBlocks(emitError, "custom", blocks);
}

Attribute BatchNormAttr::parse(AsmParser &parser, Type) {
  return parseBlocksAttr<BatchNormAttr>(parser, "batch_norm");
}
void BatchNormAttr::print(AsmPrinter &printer) const {
  printer << "<blocks = " << getBlocks() << ">";
}
LogicalResult
BatchNormAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      int64_t blocks) {
  return verifyBlocks(emitError, "batch_norm", blocks);
}

//===----------------------------------------------------------------------===//
// #kiln_cuda.pointwise
//===----------------------------------------------------------------------===//

Attribute PointwiseAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  SmallVector<int64_t> threads, widths, blocks;
  Field fields[] = {Field::listOf("threads", &threads),
                    Field::listOf("widths", &widths),
                    Field::listOf("blocks", &blocks)};
  if (failed(parseFields(parser, "pointwise", fields)))
    return {};
  return PointwiseAttr::getChecked([&] { return parser.emitError(loc); },
                                   parser.getContext(), threads, widths,
                                   blocks);
}

void PointwiseAttr::print(AsmPrinter &printer) const {
  printer << "<";
  printList(printer, "threads", getThreads());
  printer << ", ";
  printList(printer, "widths", getWidths());
  printer << ", ";
  printList(printer, "blocks", getBlocks());
  printer << ">";
}

LogicalResult
PointwiseAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      ArrayRef<int64_t> threads, ArrayRef<int64_t> widths,
                      ArrayRef<int64_t> blocks) {
  if (threads.empty() || !llvm::all_of(threads, isBlockSize))
    return emitError() << "#kiln_cuda.pointwise threads are block sizes of "
                          "whole warps, at most 1024, one per kernel";
  if (widths.empty() || !llvm::all_of(widths, isVectorWidth))
    return emitError() << "#kiln_cuda.pointwise widths are 1, 2, 4 or 8, "
                          "one per group";
  if (blocks.size() != widths.size() || !allPositive(blocks))
    return emitError() << "#kiln_cuda.pointwise takes positive blocks, one "
                          "per group as its widths";
  if (threads.size() > widths.size())
    return emitError() << "#kiln_cuda.pointwise: every kernel has a group";
  return success();
}

//===----------------------------------------------------------------------===//
// #kiln_cuda.pool
//===----------------------------------------------------------------------===//

Attribute PoolAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  int64_t vector = 0;
  SmallVector<int64_t> threads, blocks;
  bool argmax = false;
  Field fields[] = {{"vector", &vector},
                    Field::listOf("threads", &threads),
                    Field::listOf("blocks", &blocks),
                    {"argmax", nullptr, nullptr, 0, &argmax}};
  if (failed(parseFields(parser, "pool", fields)))
    return {};
  return PoolAttr::getChecked([&] { return parser.emitError(loc); },
                              parser.getContext(), vector, threads, blocks,
                              argmax);
}

void PoolAttr::print(AsmPrinter &printer) const {
  printer << "<vector = " << getVector() << ", ";
  printList(printer, "threads", getThreads());
  printer << ", ";
  printList(printer, "blocks", getBlocks());
  if (getArgmax())
    printer << ", argmax";
  printer << ">";
}

LogicalResult PoolAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               int64_t vector, ArrayRef<int64_t> threads,
                               ArrayRef<int64_t> blocks, bool argmax) {
  if (!isVectorWidth(vector))
    return emitError() << "#kiln_cuda.pool vector is 1, 2, 4 or 8";
  if (!llvm::all_of(threads, isBlockSize))
    return emitError() << "#kiln_cuda.pool threads are block sizes of whole "
                          "warps, at most 1024";
  if (threads.size() != blocks.size() ||
      !llvm::all_of(blocks, [](int64_t b) { return b > 0; }))
    return emitError() << "#kiln_cuda.pool takes positive blocks, one per "
                          "launch as its threads";
  return success();
}

//===----------------------------------------------------------------------===//
// #kiln_cuda.resize
//===----------------------------------------------------------------------===//

Attribute ResizeAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  int64_t threads = 0, blocks = 0;
  Field fields[] = {{"threads", &threads}, {"blocks", &blocks}};
  if (failed(parseFields(parser, "resize", fields)))
    return {};
  return ResizeAttr::getChecked([&] { return parser.emitError(loc); },
                                parser.getContext(), threads, blocks);
}

void ResizeAttr::print(AsmPrinter &printer) const {
  printer << "<threads = " << getThreads() << ", blocks = " << getBlocks()
          << ">";
}

LogicalResult ResizeAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 int64_t threads, int64_t blocks) {
  if (!isBlockSize(threads))
    return emitError() << "#kiln_cuda.resize threads is a block size of "
                          "whole warps, at most 1024";
  return verifyBlocks(emitError, "resize", blocks);
}

//===----------------------------------------------------------------------===//
// #kiln_cuda.embedding
//===----------------------------------------------------------------------===//

Attribute EmbeddingAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  int64_t vector = 0;
  Field fields[] = {{"vector", &vector}};
  if (failed(parseFields(parser, "embedding", fields)))
    return {};
  return EmbeddingAttr::getChecked([&] { return parser.emitError(loc); },
                                   parser.getContext(), vector);
}

void EmbeddingAttr::print(AsmPrinter &printer) const {
  printer << "<vector = " << getVector() << ">";
}

LogicalResult
EmbeddingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      int64_t vector) {
  if (!isVectorWidth(vector))
    return emitError() << "#kiln_cuda.embedding vector is 1, 2, 4 or 8";
  return success();
}

//===----------------------------------------------------------------------===//
// #kiln_cuda.target
//===----------------------------------------------------------------------===//

Attribute TargetAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  std::string arch;
  bool tf32 = false;
  if (parser.parseLess() || parser.parseString(&arch))
    return {};
  if (succeeded(parser.parseOptionalComma())) {
    if (parser.parseKeyword("tf32"))
      return {};
    tf32 = true;
  }
  if (parser.parseGreater())
    return {};
  return TargetAttr::getChecked([&] { return parser.emitError(loc); },
                                parser.getContext(), arch, tf32);
}

void TargetAttr::print(AsmPrinter &printer) const {
  printer << "<\"" << getArch() << "\"";
  if (getTf32())
    printer << ", tf32";
  printer << ">";
}

LogicalResult TargetAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 StringRef arch, bool) {
  if (!arch.starts_with("sm_"))
    return emitError() << "#kiln_cuda.target names an architecture, sm_XX";
  return success();
}
