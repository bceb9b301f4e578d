//===- OpVersions.h - the ONNX op definitions the importer follows -*- C++
//-*-===//
//
// An ONNX model names a version of each operator set it uses; each op binds
// to its newest definition at or below that version. The importer keeps its
// own table of those definitions (the versions in which ONNX's operator
// changelog redefines each default-domain op it imports) rather than
// libonnx's schema registry, which stops at the opset of its release: each
// op's importer implements every definition listed here, and rejects by name
// what kiln cannot express in one.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_ONNX_OPVERSIONS_H
#define KILN_COMPILER_IMPORT_ONNX_OPVERSIONS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <vector>

namespace mlir::kiln::onnx_import {

/// The newest default-domain opset whose changes the table covers (ONNX
/// 1.22); a newer one may redefine any op, so models importing it are
/// refused as a whole.
constexpr int64_t kNewestOpset = 27;

/// The newest ONNX IR version (the file format) the importer reads (ONNX
/// 1.22: IR 13). Newer versions may add fields that change a model's
/// meaning.
constexpr int64_t kNewestIrVersion = 13;

/// The versions in which the default-domain op `opType` was defined or
/// redefined, ascending; empty where the importer has no importer for it.
llvm::ArrayRef<int> opVersions(llvm::StringRef opType);

/// The version of `opType`'s definition a model of default-domain opset
/// `opset` uses: its newest at or below `opset`, or 0 where the op is not
/// defined yet at `opset` (or not known).
int definitionVersion(llvm::StringRef opType, int64_t opset);

/// Every op of the table (for the test that the table and the importers
/// agree).
std::vector<llvm::StringRef> versionedOps();

} // namespace mlir::kiln::onnx_import

#endif // KILN_COMPILER_IMPORT_ONNX_OPVERSIONS_H
