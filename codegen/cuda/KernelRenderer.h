//===- KernelRenderer.h - kernel specs to CUDA sources ------------*- C++ -*-===//
//
// Emitters plan; this renders. A planner turns a fusion and the GpuTarget into
// a KernelSpec: which template the kernel instantiates (a header under
// codegen/cuda/kernels/) with which configuration, the small functors it
// generates (element prologue, epilogue, scalar ops, parameter structs), the
// kernel's parameters and its launch geometry. The renderer writes the one
// instantiation stub NVRTC compiles: the includes, the functors and the
// part's `run` function in a namespace of its own, and the `__global__`
// entry that calls it with the launch's context. The same part, placed in a
// merged kernel, runs with the context of its block range instead.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_CUDA_KERNELRENDERER_H
#define KILN_CODEGEN_CUDA_KERNELRENDERER_H

#include "codegen/cuda/KernelEmitter.h"

#include <string>
#include <vector>

namespace mlir::kiln::codegen {

/// A kernel parameter: its CUDA type, its name in the part's code, and the
/// launch argument bound to it.
struct KernelParam {
  std::string type;
  std::string name;
  LaunchArg arg;
};

struct KernelSpec {
  /// The kernel's name is the prefix and a hash of its whole source.
  std::string prefix;
  /// Comment lines that head the source (the fused ops).
  std::string header;
  /// The kernel template (for --stats, e.g. "gemm_mma") and the headers it
  /// includes besides the prelude ("kiln/gemm_mma.cuh").
  std::string templateName;
  std::vector<std::string> templates;
  /// The template's configuration, one line for --stats.
  std::string configuration;
  /// Device code placed at file scope after the includes, before the
  /// kernel's namespace: a user's kernel file (kiln.custom). A kernel with
  /// such code is never part of a merged kernel, whose parts live in
  /// namespaces of their own.
  std::string globalCode;
  /// Generated device code the body uses: configuration structs, functors.
  std::string functors;
  std::vector<KernelParam> params;
  /// Statements of `run(const kiln::launch_ctx &ctx, <params>)`; they take
  /// the block and thread position from `ctx`, never from CUDA's built-ins.
  std::string body;
  /// __launch_bounds__' second argument; 0 leaves it out.
  unsigned minBlocksPerSm = 0;
  std::array<uint32_t, 3> grid = {1, 1, 1};
  std::array<uint32_t, 3> block = {1, 1, 1};
  uint32_t dynamicSharedBytes = 0;
  /// The launch's thread-block cluster and whether it is cooperative
  /// (GeneratedLaunch); such a kernel is never part of a merged one.
  std::array<uint32_t, 3> cluster = {1, 1, 1};
  bool cooperative = false;
  /// Nonzero: a persistent kernel sized for the target's SMs, whose blocks
  /// take the work in turn by a stride of the grid (GeneratedLaunch).
  unsigned persistentBlocksPerSm = 0;
  /// Needs the arch-specific target (sm_90a).
  bool archSpecific = false;
  /// May run as part of a merged kernel (KernelPart::mergeable).
  bool mergeable = true;
  /// Starts with kWaitForPredecessor, so that the runtime may launch it
  /// while its predecessor still runs. False for persistent kernels of one
  /// wave: their blocks, launched early, would crowd onto the SMs the
  /// predecessor leaves free and run two to an SM while others idle.
  bool programmatic = true;

  void addParam(std::string type, std::string name, LaunchArg arg) {
    params.push_back({std::move(type), std::move(name), arg});
  }
};

/// The kernel of `spec`, named `<prefix>_<12 hex digits of its hash>`. A
/// grid past CUDA's limits is run in tiles: the kernel is launched with
/// launchGridOf(spec) blocks, each of which runs the blocks of spec.grid
/// that fall to it (kiln/tiled_grid.cuh); such a kernel is never part of a
/// merged one.
GeneratedKernel renderKernel(const KernelSpec &spec);

/// The grid `spec`'s kernel is launched with: its own grid where CUDA takes
/// it (and for cooperative or clustered launches, whose blocks must all run
/// at once), else, per dimension past its limit, the fewest blocks that
/// take the dimension's blocks in equal tiles.
std::array<uint32_t, 3> launchGridOf(const KernelSpec &spec);

/// One part of a merged kernel: a kernel's part and the geometry of the
/// launch it replaces.
struct MergedPart {
  const KernelPart *part = nullptr;
  std::array<uint32_t, 3> grid = {1, 1, 1};
  std::array<uint32_t, 3> block = {1, 1, 1};
};

/// The source of a kernel that runs `parts` side by side in a
/// one-dimensional grid of their blocks, in order, with blocks of
/// `mergedBlock` threads; its parameters are the parts' in order. The
/// kernel is named `name`.
std::string renderMergedKernel(llvm::ArrayRef<MergedPart> parts,
                               std::array<uint32_t, 3> mergedBlock,
                               llvm::StringRef name);

} // namespace mlir::kiln::codegen

#endif // KILN_CODEGEN_CUDA_KERNELRENDERER_H
