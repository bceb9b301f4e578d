//===- PredecessorWait.h - what a kernel does before it waits ----*- C++
//-*-===//
//
// On sm_90 and newer the runtime launches a kernel that waits for its
// predecessor itself (griddepcontrol.wait, kWaitForPredecessor) with
// programmatic stream serialization: the kernel may start while the kernel
// before it on the stream still runs. Until its wait returns it must not
// read anything that kernel (or one before it) writes, nor write anything
// they read. The renderer makes the wait the first statement of every
// kernel it writes; this checks the compiled PTX, where the compiler has
// had its say: from the entry's first instruction to its first
// griddepcontrol.wait there may be no access to global or generic memory,
// no call and no branch or label (so that the wait comes first on every
// path through the kernel).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_CUDA_PREDECESSORWAIT_H
#define KILN_CODEGEN_CUDA_PREDECESSORWAIT_H

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace mlir::kiln::codegen {

/// Nothing when the entry `kernel` of `ptx` executes griddepcontrol.wait
/// before anything that may touch its predecessors' memory or leave the
/// straight line; otherwise what comes first, e.g. "line 41: ld.global.f32
/// %f1, [%rd2];", "it ends without a griddepcontrol.wait (line 60: ret;)"
/// or "no entry 'k' in the PTX".
std::optional<std::string> accessBeforeWait(llvm::StringRef ptx,
                                            llvm::StringRef kernel);

} // namespace mlir::kiln::codegen

#endif // KILN_CODEGEN_CUDA_PREDECESSORWAIT_H
