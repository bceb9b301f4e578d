//===- KernelTemplates.h - the embedded kernel templates ---------*- C++ -*-===//
//
// The CUDA headers under codegen/cuda/kernels/ (prelude.cuh, the kernel
// templates), embedded into the compiler at build time. Generated kernels
// include them as "kiln/<file>"; NVRTC gets every one as a named header, and
// their text is part of the compiler identity, so editing a template misses
// the kernel cache instead of returning stale code.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_CUDA_KERNELTEMPLATES_H
#define KILN_CODEGEN_CUDA_KERNELTEMPLATES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <vector>

namespace mlir::kiln::codegen {

struct KernelTemplate {
  /// The include name, e.g. "kiln/prelude.cuh".
  llvm::StringRef name;
  llvm::StringRef text;
};

/// Every embedded template, sorted by name.
llvm::ArrayRef<KernelTemplate> kernelTemplates();

/// The text of the template included as `name`; empty when there is none.
llvm::StringRef kernelTemplate(llvm::StringRef name);

/// The templates `source` includes, directly or through other templates,
/// each once, every one after the templates it includes (the order a
/// self-contained listing needs).
std::vector<llvm::StringRef> includedTemplates(llvm::StringRef source);

} // namespace mlir::kiln::codegen

#endif // KILN_CODEGEN_CUDA_KERNELTEMPLATES_H
