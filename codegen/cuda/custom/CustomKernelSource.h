//===- CustomKernelSource.h - the user's file of a kiln.custom -*- C++ -*-===//
//
// Finds and reads the CUDA C++ file a kiln.custom (or its backward) names,
// at code generation time: relative to the IR file the op comes from, then
// to each directory of CodegenOptions::customKernelDirs (kilnc -I). The text
// becomes part of the kernel's source, so it is hashed into the kernel's
// name and cache key like the rest of the source.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_CUDA_CUSTOM_CUSTOMKERNELSOURCE_H
#define KILN_CODEGEN_CUDA_CUSTOM_CUSTOMKERNELSOURCE_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace mlir::kiln::codegen {

struct CustomKernelSource {
  /// The path as the op names it (used in #line directives, so that the
  /// generated source does not depend on where the file was found).
  std::string name;
  /// Where it was found.
  std::string path;
  std::string text;
};

/// The directories `source` is looked for in: that of the file `location`
/// points into (when it has one), then `includeDirs`.
std::vector<std::string>
customKernelSearchPath(Location location,
                       llvm::ArrayRef<std::string> includeDirs);

/// Reads `source` (absolute, or relative to a directory of `searchPath`).
/// When it is missing, or does not mention the function `entry`, reports
/// through `emitError` (which heads a diagnostic at the user's op) and
/// fails.
FailureOr<CustomKernelSource>
loadCustomKernelSource(llvm::StringRef source, llvm::StringRef entry,
                       llvm::ArrayRef<std::string> searchPath,
                       llvm::function_ref<InFlightDiagnostic()> emitError);

/// Whether `text` has `name` (the last component of a qualified name) as a
/// whole identifier outside comments and string literals: a cheap test
/// that the entry exists, so that its absence is a clear error rather than
/// NVRTC's message about the stub.
bool mentionsIdentifier(llvm::StringRef text, llvm::StringRef name);

} // namespace mlir::kiln::codegen

#endif // KILN_CODEGEN_CUDA_CUSTOM_CUSTOMKERNELSOURCE_H
