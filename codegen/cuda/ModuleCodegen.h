//===- ModuleCodegen.h - a planned module to kernels and launches -*- C++
//-*-===//
//
// Generates every fusion of every entry of a fused, memory-planned module,
// compiles the kernels (deduplicated by content), and resolves each launch
// argument to a buffer slot. The result is what the artifact holds, in plain
// values, independent of the file format.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_CUDA_MODULECODEGEN_H
#define KILN_CODEGEN_CUDA_MODULECODEGEN_H

#include "codegen/artifact/ValueRanges.h"
#include "codegen/cuda/KernelEmitter.h"
#include "codegen/cuda/Nvrtc.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir::kiln::codegen {

/// A byte range of the entry's arena or of a named resident buffer.
struct SlotRef {
  bool resident = false;
  std::string name;
  uint64_t offset = 0;
  uint64_t size = 0;
};

struct CompiledArg {
  LaunchArg::Kind kind = LaunchArg::Kind::Operand;
  /// For Operand/Result/Scratch, and the buffer a TensorMap maps.
  SlotRef slot;
  uint64_t scalarBits = 0;
  /// TensorMap: the map, whether its buffer is a result, and the buffer's
  /// tensor type.
  std::shared_ptr<const TensorMapLayout> tensorMap;
  bool mapsResult = false;
  Type bufferType;
};

struct CompiledLaunch {
  size_t kernel = 0;
  std::array<uint32_t, 3> grid = {1, 1, 1}, block = {1, 1, 1};
  uint32_t dynamicSharedBytes = 0;
  /// Thread-block cluster, cooperative launch and persistent blocks per SM,
  /// as GeneratedLaunch has them.
  std::array<uint32_t, 3> cluster = {1, 1, 1};
  bool cooperative = false;
  unsigned persistentBlocksPerSm = 0;
  std::vector<CompiledArg> args;

  bool clustered() const { return cluster != std::array<uint32_t, 3>{1, 1, 1}; }
};

/// How a launch is shaped beyond its grid and block, for --stats: "cluster
/// 2x1x1", "cooperative", or empty for a plain launch.
std::string describeLaunchShape(const CompiledLaunch &launch);

/// A tensor the host reads or writes: an entry input or output.
struct TensorRef {
  std::string name;
  std::string role;
  Type type;
  SlotRef slot;
  /// The values an i32 input of the caller may hold (ValueRanges.h).
  std::optional<IndexRange> validRange;
};

/// A bucket of gradients averaged over the ranks (data parallel, see
/// codegen/distributed/GradientBuckets.h): issued once the first
/// `afterLaunches` launches are issued, waited for by launch `waitBefore`
/// (launches.size(): the end of the entry).
struct CompiledCollective {
  std::vector<TensorRef> tensors;
  uint64_t bytes = 0;
  uint32_t afterLaunches = 0;
  uint32_t waitBefore = 0;
};

struct CompiledEntry {
  std::string name;
  uint64_t arenaBytes = 0;
  std::vector<TensorRef> inputs, outputs;
  std::vector<CompiledLaunch> launches;
  /// In issue order; empty unless planned for data parallelism.
  std::vector<CompiledCollective> collectives;
};

struct CompiledKernelImage {
  std::string name;
  uint64_t hash = 0;
  std::string source;
  /// The architecture it was compiled for: the module's, or its
  /// arch-specific variant (sm_90a) for kernels that need it.
  std::string arch;
  CompiledKernel binary;
  /// Kinds of the kernel's parameters, in order.
  std::vector<LaunchArg::Kind> params;
  /// The kernel waits for its predecessor itself (waitsForPredecessor).
  bool waitsForPredecessor = false;
  /// The template and configuration it instantiates ("merged" for merged
  /// launches), for --stats.
  std::string templateName, configuration;
  /// Its part, for merging it with others (KernelRenderer.h).
  KernelPart part;
};

/// A resident buffer: parameter, model state, master weight, optimizer state,
/// gradient, constant (whose values `value` holds).
struct ResidentInfo {
  std::string name;
  std::string role;
  Type type;
  DenseElementsAttr value;
};

/// The initialiser of a parameter or of model state (kiln.state): `stream`
/// is its position in forward. With `value` (its kiln.value: an imported
/// model's weights) it starts from those values instead.
struct ParameterInfo {
  std::string name;
  Type type;
  InitAttr init;
  uint32_t stream = 0;
  DenseElementsAttr value;
};

struct CompiledModule {
  std::string arch;
  std::vector<CompiledKernelImage> kernels;
  std::vector<CompiledEntry> entries;
  std::vector<ResidentInfo> residents;
  std::vector<ParameterInfo> parameters;
  /// Distinct kernels found in the on-disk cache, and compiled by NVRTC.
  unsigned kernelCacheHits = 0, kernelsCompiled = 0;
  /// Groups of launches left apart because their merged kernel did not
  /// compile.
  unsigned mergesKeptApart = 0;
};

/// Generates and compiles `module` (after --kiln-fuse and --kiln-plan-memory).
/// With `compile` false, kernels are generated but not compiled (for
/// --emit=cuda).
FailureOr<CompiledModule> generateModule(ModuleOp module,
                                         const CodegenOptions &options,
                                         bool compile = true);

} // namespace mlir::kiln::codegen

#endif // KILN_CODEGEN_CUDA_MODULECODEGEN_H
