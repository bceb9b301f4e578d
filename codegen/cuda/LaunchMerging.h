//===- LaunchMerging.h - independent launches as one kernel -----*- C++ -*-===//
//
// Small kernels are launch-bound: each one costs a few microseconds of
// scheduling however little it computes. Launches of an entry that touch no
// common memory (or only read it) can run as one kernel whose blocks each run
// one of them. This step finds such launches and builds that kernel from their
// sources.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_CUDA_LAUNCHMERGING_H
#define KILN_CODEGEN_CUDA_LAUNCHMERGING_H

#include "codegen/cuda/ModuleCodegen.h"

#include <optional>

namespace mlir::kiln::codegen {

/// True when `a` and `b` may run in either order or at once: no byte that
/// one of them writes (a result or scratch argument) is read or written by the
/// other. A scratch argument covers the rest of its fusion's workspace (to
/// the arena's end when its size is unknown), and any two scratch arguments
/// count as touching the same bytes.
bool launchesIndependent(const CompiledLaunch &a, const CompiledLaunch &b);

/// The source of one kernel that runs `launches` (of `kernels`, each
/// rendered with its part, KernelRenderer.h) side by side: block b of the
/// flat grid runs the part of the launch whose block range holds b, with that
/// launch's own block index, block size and grid (kernels/merged.cuh). Its
/// parameters are the launches' arguments in order; the caller substitutes
/// the kernel's name for KILN_KERNEL_NAME.
std::string mergedKernelSource(llvm::ArrayRef<CompiledKernelImage> kernels,
                               llvm::ArrayRef<CompiledLaunch> launches);

/// Rewrites the launches of `entry` so that launches that may run at once
/// (independent of each other and of every launch they are moved past) run as
/// one merged launch. Only launches with the same block shape (or
/// one-dimensional blocks of whole warps: the merged block is the largest and
/// a smaller part's other warps exit), at most 96 KiB of dynamic shared memory
/// (parts share it), neither clustered nor cooperative, and kernels for the
/// plain target (not arch-specific) are merged, and only kernels that can be parts of another (rendered from a
/// KernelSpec); `arch` is that target. `addKernel` is given each merged source and
/// returns the new kernel's index, or nothing to keep those launches apart
/// (e.g. when the merged kernel does not compile).
void mergeIndependentLaunches(
    CompiledEntry &entry, const std::vector<CompiledKernelImage> &kernels,
    llvm::StringRef arch,
    llvm::function_ref<std::optional<size_t>(const std::string &source)>
        addKernel);

} // namespace mlir::kiln::codegen

#endif // KILN_CODEGEN_CUDA_LAUNCHMERGING_H
