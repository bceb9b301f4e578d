//===- KilnCudaDialect.cpp - kernel decisions as attributes ---------------===//

#include "codegen/dialect/KilnCudaDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

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
// #kiln_cuda.gemm
//===----------------------------------------------------------------------===//

namespace {
/// The fields of a #kiln_cuda.gemm, with the values an omitted one takes.
struct GemmFields {
  GemmKind kind = GemmKind::Mma;
  SmallVector<int64_t> tile;
  int64_t stages = 0, cluster = 1, split = 1;
  bool pingpong = false, tmaStore = false;
};

/// Parses `, key = value` and `, flag` entries up to the closing `>`.
ParseResult parseGemmEntries(AsmParser &parser, GemmFields &fields) {
  while (succeeded(parser.parseOptionalComma())) {
    SMLoc loc = parser.getCurrentLocation();
    StringRef key;
    if (parser.parseKeyword(&key))
      return failure();
    if (key == "pingpong")
      fields.pingpong = true;
    else if (key == "tma_store")
      fields.tmaStore = true;
    else if (key == "tile") {
      if (parser.parseEqual() ||
          parser.parseDimensionList(fields.tile, /*allowDynamic=*/false,
                                    /*withTrailingX=*/false))
        return failure();
      if (fields.tile.size() != 3)
        return parser.emitError(loc, "expected tile = MxNxK");
    } else if (key == "stages" || key == "cluster" || key == "split") {
      int64_t &value = key == "stages"    ? fields.stages
                       : key == "cluster" ? fields.cluster
                                          : fields.split;
      if (parser.parseEqual() || parser.parseInteger(value))
        return failure();
    } else {
      return parser.emitError(loc, "unknown #kiln_cuda.gemm field '")
             << key
             << "' (expected tile, stages, pingpong, cluster, split or "
                "tma_store)";
    }
  }
  return success();
}
} // namespace

Attribute GemmAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef kindName;
  if (parser.parseLess() || parser.parseKeyword(&kindName))
    return {};
  GemmFields fields;
  std::optional<GemmKind> kind = symbolizeGemmKind(kindName);
  if (!kind) {
    parser.emitError(loc, "unknown GEMM kernel '")
        << kindName << "' (expected tma, wgmma, mma, tf32 or simt)";
    return {};
  }
  fields.kind = *kind;
  if (failed(parseGemmEntries(parser, fields)) || parser.parseGreater())
    return {};
  if (fields.tile.empty()) {
    parser.emitError(loc, "#kiln_cuda.gemm needs tile = MxNxK");
    return {};
  }
  return GemmAttr::getChecked(
      [&] { return parser.emitError(loc); }, parser.getContext(), fields.kind,
      fields.tile[0], fields.tile[1], fields.tile[2], fields.stages,
      fields.pingpong, fields.cluster, fields.split, fields.tmaStore);
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
