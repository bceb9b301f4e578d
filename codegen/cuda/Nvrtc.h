//===- Nvrtc.h - CUDA C++ to PTX and cubin with NVRTC ------------*- C++
//-*-===//

#ifndef KILN_CODEGEN_CUDA_NVRTC_H
#define KILN_CODEGEN_CUDA_NVRTC_H

#include "codegen/cuda/GpuTarget.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::kiln::codegen {

struct CompiledKernel {
  std::string ptx;
  /// SASS for the requested architecture (empty if not asked for).
  std::vector<uint8_t> cubin;
  /// NVRTC's log (warnings), kept for --emit output.
  std::string log;
};

/// Compiles `source` (which may include the templates of KernelTemplates.h,
/// e.g. "kiln/prelude.cuh") for `arch`
/// ("sm_90"): PTX for compute_XX or, when `withCubin`, PTX and a cubin for
/// sm_XX (both from NVRTC).
/// On failure returns false and puts NVRTC's log (with line numbers of the
/// source) in `error`.
bool compileCuda(llvm::StringRef source, llvm::StringRef name,
                 llvm::StringRef arch, bool withCubin, CompiledKernel &out,
                 std::string &error);

/// Everything besides a kernel's source, name and architecture that decides
/// what compileCuda produces: the NVRTC version, its options and the text of
/// every kernel template.
std::string compilerIdentity();

/// Content hash (FNV-1a 64) used to deduplicate and cache kernels.
uint64_t contentHash(llvm::StringRef text);

} // namespace mlir::kiln::codegen

#endif // KILN_CODEGEN_CUDA_NVRTC_H
