//===- DeviceMemory.h - the device memory of each architecture --*- C++ -*-===//
//
// How much memory the GPUs of an architecture have at most: the figure
// kilnc compares an artifact's resident buffers and arena with, so that a
// model no GPU of the target architecture can hold is flagged when it is
// compiled rather than when kiln-run refuses it.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_CUDA_DEVICEMEMORY_H
#define KILN_CODEGEN_CUDA_DEVICEMEMORY_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace mlir::kiln::codegen {

struct DeviceMemory {
  /// The architecture's data-centre part with the most memory ("H200").
  llvm::StringRef part;
  uint64_t bytes = 0;
};

/// The largest memory of a GPU of `arch` ("sm_90", "sm_90a"): the known
/// architecture of the same number, else the newest known one below it;
/// zero bytes when `arch` is older than every known one or not sm_<number>.
DeviceMemory largestDeviceMemory(llvm::StringRef arch);

} // namespace mlir::kiln::codegen

#endif // KILN_CODEGEN_CUDA_DEVICEMEMORY_H
