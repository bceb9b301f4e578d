//===- LaunchMerging.cpp - independent launches as one kernel -------------===//

#include "codegen/cuda/LaunchMerging.h"

#include "codegen/cuda/KernelRenderer.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <limits>

namespace mlir::kiln::codegen {
namespace {

/// Kernel parameters of a merged launch: well inside CUDA's 4 KiB and the
/// artifact's 512 parameters.
constexpr size_t kMaxMergedParamBytes = 4000;
constexpr size_t kMaxMergedParams = 256;
/// Merged kernels share their parts' dynamic shared memory (the largest part's
/// size) and add up their static shared memory (at most 48 KiB): with at most
/// this much dynamic memory per part they stay within a block's 227 KiB.
constexpr uint32_t kMaxMergedDynamicShared = 96 * 1024;

bool writes(const CompiledArg &arg) {
  return arg.kind == LaunchArg::Kind::Result ||
         arg.kind == LaunchArg::Kind::Scratch ||
         (arg.kind == LaunchArg::Kind::TensorMap && arg.mapsResult);
}

bool hasSlot(const CompiledArg &arg) {
  return arg.kind == LaunchArg::Kind::Operand ||
         arg.kind == LaunchArg::Kind::Result ||
         arg.kind == LaunchArg::Kind::Scratch ||
         arg.kind == LaunchArg::Kind::TensorMap;
}

/// The byte range [begin, end) an argument may touch.
std::pair<uint64_t, uint64_t> rangeOf(const CompiledArg &arg) {
  // Scratch: to the end of its fusion's workspace (of unknown size: to the
  // end of the arena).
  if (arg.kind == LaunchArg::Kind::Scratch && arg.slot.size == 0)
    return {arg.slot.offset, std::numeric_limits<uint64_t>::max()};
  return {arg.slot.offset, arg.slot.offset + arg.slot.size};
}

bool overlap(const CompiledArg &a, const CompiledArg &b) {
  if (a.slot.resident != b.slot.resident ||
      (a.slot.resident && a.slot.name != b.slot.name))
    return false;
  auto [aBegin, aEnd] = rangeOf(a);
  auto [bBegin, bEnd] = rangeOf(b);
  if (a.kind == LaunchArg::Kind::Scratch && b.kind == LaunchArg::Kind::Scratch)
    return true;
  return aBegin < bEnd && bBegin < aEnd;
}

size_t paramBytes(const CompiledLaunch &launch) {
  size_t bytes = 0;
  for (const CompiledArg &arg : launch.args)
    bytes +=
        arg.kind == LaunchArg::Kind::TensorMap ? 128
        : (arg.kind == LaunchArg::Kind::I32 || arg.kind == LaunchArg::Kind::F32)
            ? 4
            : 8;
  return bytes;
}

uint64_t blockCount(const CompiledLaunch &launch) {
  return uint64_t{launch.grid[0]} * launch.grid[1] * launch.grid[2];
}

uint32_t threadCount(const CompiledLaunch &launch) {
  return launch.block[0] * launch.block[1] * launch.block[2];
}

/// Blocks of whole warps: such a part may run in a larger one-dimensional
/// block, its threads numbered as CUDA numbers them (x fastest), so that its
/// warps stay the same; the other warps exit at once (a barrier does not
/// wait for exited threads).
bool wholeWarps(const CompiledLaunch &launch) {
  return threadCount(launch) % 32 == 0;
}

bool allSameBlock(llvm::ArrayRef<CompiledLaunch> launches) {
  return llvm::all_of(launches, [&](const CompiledLaunch &l) {
    return l.block == launches.front().block;
  });
}

/// Whether `launch` may run in one kernel with the launches of `group`: the
/// same block shape, or blocks of whole warps.
bool sameBlocks(llvm::ArrayRef<CompiledLaunch> group,
                const CompiledLaunch &launch) {
  return llvm::all_of(group,
                      [&](const CompiledLaunch &m) {
                        return m.block == launch.block;
                      }) ||
         (wholeWarps(launch) && llvm::all_of(group, wholeWarps));
}

/// The block of the merged launch: the parts' common shape, else
/// one-dimensional with the most threads of any part.
std::array<uint32_t, 3> mergedBlock(llvm::ArrayRef<CompiledLaunch> launches) {
  if (allSameBlock(launches))
    return launches.front().block;
  uint32_t threads = 0;
  for (const CompiledLaunch &launch : launches)
    threads = std::max(threads, threadCount(launch));
  return {threads, 1, 1};
}

bool mergeable(const CompiledLaunch &launch,
               const std::vector<CompiledKernelImage> &kernels,
               llvm::StringRef arch) {
  const CompiledKernelImage &kernel = kernels[launch.kernel];
  // A merged launch is one plain grid: it has no cluster shape, no
  // grid-wide barrier and no grid the runtime may shrink to offer its parts,
  // and its parameters are plain values (a tensor map must be a
  // __grid_constant__ of the kernel that uses it).
  return launch.dynamicSharedBytes <= kMaxMergedDynamicShared &&
         !launch.clustered() && !launch.cooperative &&
         launch.persistentBlocksPerSm == 0 && kernel.arch == arch &&
         !kernel.part.code.empty() && kernel.part.mergeable &&
         llvm::none_of(launch.args, [](const CompiledArg &arg) {
           return arg.kind == LaunchArg::Kind::TensorMap;
         });
}

} // namespace

bool launchesIndependent(const CompiledLaunch &a, const CompiledLaunch &b) {
  for (const CompiledArg &x : a.args) {
    if (!hasSlot(x))
      continue;
    for (const CompiledArg &y : b.args)
      if (hasSlot(y) && (writes(x) || writes(y)) && overlap(x, y))
        return false;
  }
  return true;
}

std::string mergedKernelSource(llvm::ArrayRef<CompiledKernelImage> kernels,
                               llvm::ArrayRef<CompiledLaunch> launches) {
  std::vector<MergedPart> parts;
  for (const CompiledLaunch &launch : launches)
    parts.push_back({&kernels[launch.kernel].part, launch.grid, launch.block});
  return renderMergedKernel(parts, mergedBlock(launches), "KILN_KERNEL_NAME");
}

void mergeIndependentLaunches(
    CompiledEntry &entry, const std::vector<CompiledKernelImage> &kernels,
    llvm::StringRef arch,
    llvm::function_ref<std::optional<size_t>(const std::string &source)>
        addKernel) {
  // Each launch joins the latest earlier group it may move up to (it is
  // independent of everything from there on) whose launches it may run with.
  std::vector<std::vector<CompiledLaunch>> groups;
  for (CompiledLaunch &launch : entry.launches) {
    std::optional<size_t> target;
    if (mergeable(launch, kernels, arch)) {
      for (size_t g = groups.size(); g-- > 0;) {
        const std::vector<CompiledLaunch> &group = groups[g];
        bool independent = llvm::all_of(group, [&](const CompiledLaunch &m) {
          return launchesIndependent(launch, m);
        });
        if (!independent)
          break;
        const CompiledLaunch &head = group.front();
        size_t bytes = paramBytes(launch), params = launch.args.size();
        uint64_t blocks = blockCount(launch);
        for (const CompiledLaunch &m : group) {
          bytes += paramBytes(m);
          params += m.args.size();
          blocks += blockCount(m);
        }
        if (mergeable(head, kernels, arch) && sameBlocks(group, launch) &&
            bytes <= kMaxMergedParamBytes && params <= kMaxMergedParams &&
            blocks <= uint64_t{std::numeric_limits<int32_t>::max()}) {
          target = g;
          break;
        }
      }
    }
    if (target)
      groups[*target].push_back(std::move(launch));
    else
      groups.push_back({std::move(launch)});
  }

  std::vector<CompiledLaunch> launches;
  for (std::vector<CompiledLaunch> &group : groups) {
    std::optional<size_t> kernel;
    if (group.size() > 1)
      kernel = addKernel(mergedKernelSource(kernels, group));
    if (!kernel) {
      // Alone, or kept apart: every launch of the group may run here.
      for (CompiledLaunch &launch : group)
        launches.push_back(std::move(launch));
      continue;
    }
    CompiledLaunch merged;
    merged.kernel = *kernel;
    merged.block = mergedBlock(group);
    uint64_t blocks = 0;
    for (CompiledLaunch &launch : group) {
      blocks += blockCount(launch);
      merged.dynamicSharedBytes =
          std::max(merged.dynamicSharedBytes, launch.dynamicSharedBytes);
      llvm::append_range(merged.args, launch.args);
    }
    merged.grid = {static_cast<uint32_t>(blocks), 1, 1};
    launches.push_back(std::move(merged));
  }
  entry.launches = std::move(launches);
}

} // namespace mlir::kiln::codegen
