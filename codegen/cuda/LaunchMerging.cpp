//===- LaunchMerging.cpp - independent launches as one kernel -------------===//

#include "codegen/cuda/LaunchMerging.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Regex.h"
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
         arg.kind == LaunchArg::Kind::Scratch;
}

bool hasSlot(const CompiledArg &arg) {
  return arg.kind == LaunchArg::Kind::Operand ||
         arg.kind == LaunchArg::Kind::Result ||
         arg.kind == LaunchArg::Kind::Scratch;
}

/// The byte range [begin, end) an argument may touch.
std::pair<uint64_t, uint64_t> rangeOf(const CompiledArg &arg) {
  if (arg.kind == LaunchArg::Kind::Scratch) // after the planned tensors
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
        (arg.kind == LaunchArg::Kind::I32 || arg.kind == LaunchArg::Kind::F32)
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
  return launch.dynamicSharedBytes <= kMaxMergedDynamicShared &&
         kernels[launch.kernel].arch == arch;
}

/// The merged kernel's parameter for argument `index` of part `part`.
std::string paramName(size_t part, size_t index) {
  return "p" + std::to_string(part) + "_" + std::to_string(index);
}

std::string paramDecl(const CompiledArg &arg, size_t part, size_t index) {
  std::string name = paramName(part, index);
  switch (arg.kind) {
  case LaunchArg::Kind::I32:
    return "int " + name;
  case LaunchArg::Kind::I64:
    return "long long " + name;
  case LaunchArg::Kind::F32:
    return "float " + name;
  default:
    return "void *" + name;
  }
}

/// `source` as the body of namespace `space`: the prelude include dropped
/// (the merged source includes it once, outside), the kernel turned into a
/// device function of the same name, and every macro it defines undefined
/// after it.
std::string partSource(llvm::StringRef source, llvm::StringRef space) {
  std::string body, undefs;
  static const llvm::Regex kernelHead(
      "extern \"C\" __global__ void __launch_bounds__\\([^)]*\\) *");
  llvm::SmallVector<llvm::StringRef> lines;
  source.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    if (line.trim() == "#include \"kiln_prelude.cuh\"")
      continue;
    if (line.starts_with("#define ")) {
      llvm::StringRef macro = line.drop_front(8).ltrim();
      macro = macro.take_until([](char c) { return c == ' ' || c == '('; });
      undefs += "#undef " + macro.str() + "\n";
    }
    body += kernelHead.sub("__device__ __forceinline__ void ", line) + "\n";
  }
  return "namespace " + space.str() + " {\n" + body + "} // namespace " +
         space.str() + "\n" + undefs;
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
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "// " << launches.size()
     << " independent launches as one kernel: each block runs one of them.\n"
     << "#include \"kiln_prelude.cuh\"\n\n"
     << "// Converts to the pointer type of a part's parameter.\n"
     << "struct kiln_any_pointer {\n"
     << "  void *p;\n"
     << "  template <typename T> __device__ operator T *() const {\n"
     << "    return static_cast<T *>(p);\n"
     << "  }\n"
     << "};\n\n";
  // Parts of different block shapes run in one-dimensional blocks, each on
  // the first threads of the block with its own block shape and thread index.
  const bool reshaped = !allSameBlock(launches);
  const std::array<uint32_t, 3> block = mergedBlock(launches);
  uint64_t start = 0;
  std::vector<uint64_t> ends;
  for (auto [part, launch] : llvm::enumerate(launches)) {
    std::string space = "kiln_part_" + std::to_string(part);
    const auto &g = launch.grid;
    // The part's own block index and grid, from its range of the flat grid.
    os << "namespace " << space << " {\n"
       << "__device__ __forceinline__ uint3 kiln_block_index() {\n"
       << "  const unsigned v = blockIdx.x - " << start << "u;\n"
       << "  return make_uint3(v % " << g[0] << "u, v / " << g[0] << "u % "
       << g[1] << "u, v / " << uint64_t{g[0]} * g[1] << "u);\n"
       << "}\n"
       << "__device__ __forceinline__ dim3 kiln_grid() { return dim3(" << g[0]
       << ", " << g[1] << ", " << g[2] << "); }\n";
    if (reshaped) {
      // Its own block shape over the merged block's first threads.
      const auto &b = launch.block;
      os << "__device__ __forceinline__ dim3 kiln_block() { return dim3("
         << b[0] << ", " << b[1] << ", " << b[2] << "); }\n"
         << "__device__ __forceinline__ uint3 kiln_thread_index() {\n"
         << "  const unsigned t = threadIdx.x;\n"
         << "  return make_uint3(t % " << b[0] << "u, t / " << b[0] << "u % "
         << b[1] << "u, t / " << b[0] * b[1] << "u);\n"
         << "}\n";
    }
    os << "} // namespace " << space << "\n"
       << "#define blockIdx (" << space << "::kiln_block_index())\n"
       << "#define gridDim (" << space << "::kiln_grid())\n";
    if (reshaped)
      os << "#define blockDim (" << space << "::kiln_block())\n"
         << "#define threadIdx (" << space << "::kiln_thread_index())\n";
    os << partSource(kernels[launch.kernel].source, space)
       << "#undef blockIdx\n#undef gridDim\n";
    if (reshaped)
      os << "#undef blockDim\n#undef threadIdx\n";
    os << "\n";
    start += blockCount(launch);
    ends.push_back(start);
  }
  os << "extern \"C\" __global__ void __launch_bounds__("
     << block[0] * block[1] * block[2] << ") KILN_KERNEL_NAME(";
  bool first = true;
  for (auto [part, launch] : llvm::enumerate(launches))
    for (auto [index, arg] : llvm::enumerate(launch.args)) {
      os << (first ? "\n    " : ",\n    ") << paramDecl(arg, part, index);
      first = false;
    }
  os << ") {\n  " << kWaitForPredecessor << "\n";
  for (auto [part, launch] : llvm::enumerate(launches)) {
    bool last = part + 1 == launches.size();
    os << (last ? "  "
                : "  if (blockIdx.x < " + std::to_string(ends[part]) + "u) ")
       << "{\n";
    // A part of fewer threads than the block: its other warps exit.
    if (reshaped && threadCount(launch) < block[0])
      os << "    if (threadIdx.x >= " << threadCount(launch) << "u) return;\n";
    os << "    kiln_part_" << part << "::" << kernels[launch.kernel].name
       << "(";
    for (auto [index, arg] : llvm::enumerate(launch.args)) {
      std::string name = paramName(part, index);
      os << (index ? ", " : "")
         << (hasSlot(arg) ? "kiln_any_pointer{" + name + "}" : name);
    }
    os << ");\n    return;\n  }\n";
  }
  os << "}\n";
  return text;
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
