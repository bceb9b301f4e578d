//===- Nvrtc.h - CUDA C++ to PTX and cubin with NVRTC ------------*- C++
//-*-===//

#ifndef KILN_CODEGEN_CUDA_NVRTC_H
#define KILN_CODEGEN_CUDA_NVRTC_H

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

/// Compiles `source` (which may include "kiln_prelude.cuh") for `arch`
/// ("sm_90"): PTX for compute_XX and, when `withCubin`, a cubin for sm_XX.
/// On failure returns false and puts NVRTC's log (with line numbers of the
/// source) in `error`.
bool compileCuda(llvm::StringRef source, llvm::StringRef name,
                 llvm::StringRef arch, bool withCubin, CompiledKernel &out,
                 std::string &error);

/// The arch-specific target of `arch` ("sm_90" -> "sm_90a"; "sm_90a" stays):
/// what kernels that use its arch-specific instructions (wgmma) are compiled
/// for. Their code runs only on that exact architecture.
std::string archSpecificTarget(llvm::StringRef arch);

/// The number of an architecture name ("sm_90" and "sm_90a" -> 90); 0 when
/// `arch` does not look like sm_<digits>.
unsigned archNumber(llvm::StringRef arch);

/// Everything besides a kernel's source, name and architecture that decides
/// what compileCuda produces: the NVRTC and nvJitLink versions, NVRTC's
/// options and the kernel prelude.
std::string compilerIdentity();

/// Content hash (FNV-1a 64) used to deduplicate and cache kernels.
uint64_t contentHash(llvm::StringRef text);

} // namespace mlir::kiln::codegen

#endif // KILN_CODEGEN_CUDA_NVRTC_H
