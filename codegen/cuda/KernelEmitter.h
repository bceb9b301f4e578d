//===- KernelEmitter.h - from one kiln.fusion to CUDA kernels ----*- C++
//-*-===//
//
// The contract between the code generator's driver and the per-kind kernel
// emitters. A fusion's operands and results live in dense row-major device
// buffers (the memory planner gives each one); an emitter turns the fusion
// into CUDA C++ kernels and the launches that compute its results from its
// operands. Shapes are static, so emitters bake them into the source.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_CUDA_KERNELEMITTER_H
#define KILN_CODEGEN_CUDA_KERNELEMITTER_H

#include "codegen/cuda/GpuTarget.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mlir::kiln::codegen {

/// How the consumer warpgroups of the TMA GEMM kernel share work: as the
/// cost model picks, one tile among them all, or whole tiles in turn.
enum class GemmSchedule { Auto, Cooperative, PingPong };

/// Whether the two consumer warpgroups of the Hopper attention forward
/// issue their products as they come, or take turns so that one's softmax
/// runs under the other's products (kernels/attention_wgmma_fwd.cuh,
/// C::pingpong); Auto takes turns where the attention is causal.
enum class AttentionSchedule { Auto, Cooperative, PingPong };

struct CodegenOptions {
  /// Target architecture, e.g. "sm_90".
  std::string arch = "sm_90";
  /// f32 matmuls on tensor cores in TF32 (faster, 10-bit mantissa inputs)
  /// instead of exact f32 FMA.
  bool allowTf32 = false;
  /// Where compiled kernels are kept between runs (see KernelCache); empty:
  /// every kernel is compiled.
  std::string kernelCacheDirectory;
  /// Runs launches of an entry that may run at once as one kernel
  /// (LaunchMerging.h).
  bool mergeLaunches = true;
  /// The kernels that can use it have the tensor memory accelerator copy
  /// their operands (sm_90: kernels/tma.cuh).
  bool allowTma = true;
  /// The TMA GEMM kernel's schedule (kernels/gemm_tma.cuh).
  GemmSchedule gemmSchedule = GemmSchedule::Auto;
  /// Blocks per thread-block cluster of the TMA GEMM kernel: 0 picks (two
  /// where the product has two tile rows to pair), 1 none, 2 two.
  int gemmCluster = 1;
  /// The Hopper attention kernels run persistent, one block per SM taking
  /// the work items in turn, instead of one block per work item or causal
  /// pair of items (3-7% faster on the H200 at B8 H16 T2048).
  bool persistentAttention = true;
  /// The Hopper attention backward runs in one pass over the key tiles,
  /// adding dQ in f32 by bulk reductions (not deterministic), where the
  /// forward's row log-sum-exp is given and the head dims are at most 128
  /// (kernels/attention_wgmma_bwd_fused.cuh).
  bool fusedAttentionBackward = false;
  /// The Hopper attention forward's schedule. Turns make the causal
  /// forwards of B8 H16 T2048 2-5% faster on the H200 and the non-causal
  /// ones 2-5% slower, hence Auto's choice.
  AttentionSchedule attentionSchedule = AttentionSchedule::Auto;
  /// The TMA GEMM kernel stores its first result by TMA from the staged
  /// epilogue's shared memory (one problem whose result has the operands'
  /// element type) instead of 16-byte runs from every lane.
  bool gemmTmaStore = false;
  /// Where the CUDA files of kiln.custom ops are looked for after the
  /// directory of the IR file the op comes from (kilnc -I), in order.
  std::vector<std::string> customKernelDirs;

  /// The resources of `arch` that planners size kernels for; the oldest
  /// known target for an older or malformed architecture (which kilnc
  /// rejects before code generation).
  const GpuTarget &target() const {
    const GpuTarget *known = GpuTarget::forArch(arch);
    return known ? *known : GpuTarget::oldest();
  }
};

/// A TMA tensor map over a fusion buffer, as the driver's tensor-map
/// encoding takes it (the element type is the buffer's): the runtime encodes
/// it once the buffer's address is known, and the kernel takes the 128 bytes
/// as a `const __grid_constant__ kiln::tensor_map` (kernels/tma.cuh).
/// Dimensions are innermost first.
struct TensorMapLayout {
  bool im2col = false;
  std::vector<uint64_t> dims;
  /// Bytes per index of dims[1], dims[2], ...
  std::vector<uint64_t> strides;
  /// Tiled: the elements of one copy per dimension.
  std::vector<uint32_t> box;
  std::vector<uint32_t> elementStrides;
  /// Im2col: the corners of the box of window origins in the spatial
  /// dimensions, and the channels and pixels of one copy.
  std::vector<int32_t> lowerCorner, upperCorner;
  uint32_t channelsPerPixel = 0, pixelsPerColumn = 0;
  /// 0, 32, 64 or 128.
  uint32_t swizzleBytes = 0;
};

/// The CUDA type of a tensor-map parameter; the renderer passes it to the
/// kernel as a __grid_constant__ and to its body by reference.
inline constexpr llvm::StringLiteral kTensorMapParamType = "kiln::tensor_map";

/// What a launch argument refers to.
struct LaunchArg {
  enum class Kind { Operand, Result, Scratch, I32, I64, F32, TensorMap };
  Kind kind = Kind::Operand;
  /// Operand/result index of the fusion (for TensorMap, of the buffer it
  /// maps), or byte offset into the fusion's scratch space.
  int64_t index = 0;
  /// The value of a scalar argument (an f32 as its bit pattern).
  uint64_t scalarBits = 0;
  /// TensorMap: the map, and whether it is over result `index` rather than
  /// operand `index`.
  std::shared_ptr<const TensorMapLayout> tensorMap;
  bool mapsResult = false;

  static LaunchArg operand(int64_t i) { return {Kind::Operand, i, 0}; }
  static LaunchArg result(int64_t i) { return {Kind::Result, i, 0}; }
  static LaunchArg scratch(int64_t offset) {
    return {Kind::Scratch, offset, 0};
  }
  static LaunchArg i32(int32_t v) {
    return {Kind::I32, 0, static_cast<uint32_t>(v)};
  }
  static LaunchArg i64(int64_t v) {
    return {Kind::I64, 0, static_cast<uint64_t>(v)};
  }
  static LaunchArg f32(float v);
  /// A tensor map over `buffer` (an operand or a result).
  static LaunchArg tensorMapOf(const LaunchArg &buffer, TensorMapLayout map);
};

/// A kernel's body as a device function of a launch context
/// (kiln::launch_ctx, kernels/prelude.cuh), so that it can run alone or as
/// one part of a merged kernel (kernels/merged.cuh).
struct KernelPart {
  /// The templates it includes besides the prelude ("kiln/gemm_mma.cuh").
  std::vector<std::string> templates;
  /// Device code defining `run(const kiln::launch_ctx &ctx, <params>)` and
  /// what it uses; placed in a namespace of its own.
  std::string code;
  /// The kernel's parameter types, in order (their names are the part's
  /// own).
  std::vector<std::string> paramTypes;
  /// Whether it may run as part of a merged kernel. Large tensor-core
  /// kernels are not launch-bound, and a merged kernel takes the largest
  /// register count of its parts, which would lower their occupancy.
  bool mergeable = true;
};

/// One CUDA C++ kernel: `source` defines `extern "C" __global__ void
/// <name>(...)` whose parameters match the launches' argument lists (device
/// pointers for Operand/Result/Scratch, then int/long long/float scalars).
/// Sources include "kiln/prelude.cuh" (codegen/cuda/kernels/) for shared
/// device helpers.
struct GeneratedKernel {
  std::string name;
  std::string source;
  /// Uses instructions of the target's arch-specific variant (sm_90a's
  /// wgmma): compiled for archSpecificTarget(arch), so its code runs only on
  /// that exact architecture.
  bool archSpecific = false;
  /// The kernel template it instantiates and that template's configuration
  /// (tiles, stages, warps...), for --stats.
  std::string templateName, configuration;
  /// The kernel as one part of a merged kernel (KernelRenderer.h); empty
  /// code for a kernel that cannot be one.
  KernelPart part;
};

struct GeneratedLaunch {
  /// Index into GeneratedFusion::kernels.
  size_t kernel = 0;
  std::array<uint32_t, 3> grid = {1, 1, 1};
  std::array<uint32_t, 3> block = {1, 1, 1};
  uint32_t dynamicSharedBytes = 0;
  /// Blocks per thread-block cluster ({1, 1, 1}: no cluster); each grid
  /// dimension is a multiple of the cluster's. Launched with the cluster
  /// dimension attribute (sm_90+), past 8 blocks as a non-portable size.
  std::array<uint32_t, 3> cluster = {1, 1, 1};
  /// Every block must be resident at once (the kernel synchronises the whole
  /// grid): launched cooperatively, which fails cleanly when the grid does
  /// not fit the device.
  bool cooperative = false;
  /// Nonzero: the kernel is persistent, `persistentBlocksPerSm` blocks per
  /// SM of the target taking the work items in turn by a stride of the
  /// grid, so that any one-dimensional grid of whole clusters does all the
  /// work. A device with fewer SMs than the target runs a smaller grid
  /// (the runtime shrinks it), not a second wave; never merged.
  unsigned persistentBlocksPerSm = 0;
  std::vector<LaunchArg> args;
};

struct GeneratedFusion {
  std::vector<GeneratedKernel> kernels;
  /// Run in order on one stream.
  std::vector<GeneratedLaunch> launches;
  /// Temporary device memory the launches share (e.g. partial sums).
  uint64_t scratchBytes = 0;
};

/// Emits the kernels of one fusion of the kind an emitter handles.
class KernelEmitter {
public:
  virtual ~KernelEmitter() = default;
  /// Whether this emitter handles `fusion` (by kind and contents).
  virtual bool matches(FusionOp fusion) const = 0;
  /// Generates the kernels; diagnostics go to `fusion`.
  virtual FailureOr<GeneratedFusion>
  emit(FusionOp fusion, const CodegenOptions &options) const = 0;
  /// The kernel the emitter's planner chooses for `fusion`, as the
  /// kiln_cuda attribute that emit() then renders (--kiln-select-kernels).
  virtual FailureOr<Attribute>
  selectKernel(FusionOp fusion, const CodegenOptions &options) const = 0;
  /// Checks a recorded kernel `kernel` against `fusion` and the target;
  /// diagnostics go to `fusion`.
  virtual LogicalResult verifyKernel(FusionOp fusion, Attribute kernel,
                                     const CodegenOptions &options) const = 0;
};

/// The emitters of every kind, tried in order.
const std::vector<std::unique_ptr<KernelEmitter>> &kernelEmitters();

/// Generates `fusion` with the first emitter that matches; a diagnostic
/// naming the fusion's ops when none does.
FailureOr<GeneratedFusion> emitFusion(FusionOp fusion,
                                      const CodegenOptions &options);

/// Sets `fusion`'s kiln_cuda.kernel to the choice of the emitter that
/// matches it, or verifies the one it has.
LogicalResult selectFusionKernel(FusionOp fusion,
                                 const CodegenOptions &options);

/// An error about `fusion`'s kernels at the op of the user's it computes (its
/// first op that is not a constant), named as the user wrote it ("'kiln.matmul'
/// op: ..."; a gradient op as the gradient of its forward op).
InFlightDiagnostic emitFusionError(FusionOp fusion);

/// Reports that no emitter handles `fusion`: an error at the op that needs
/// the missing kernel (the user's own op, or the op whose gradient it is),
/// naming the kind of kernel, with a note at each op fused with it.
LogicalResult reportUnsupportedFusion(FusionOp fusion);

// Factories of the emitters (one file each).
std::unique_ptr<KernelEmitter> createPointwiseEmitter();
std::unique_ptr<KernelEmitter> createReductionEmitter();
std::unique_ptr<KernelEmitter> createGemmEmitter();
std::unique_ptr<KernelEmitter> createAttentionEmitter();
std::unique_ptr<KernelEmitter> createEmbeddingEmitter();
std::unique_ptr<KernelEmitter> createPoolEmitter();
std::unique_ptr<KernelEmitter> createResizeEmitter();
std::unique_ptr<KernelEmitter> createBatchNormEmitter();
std::unique_ptr<KernelEmitter> createRnnEmitter();
std::unique_ptr<KernelEmitter> createConvEmitter();
std::unique_ptr<KernelEmitter> createCustomEmitter();

/// The first statement of every generated kernel (defined in
/// kiln/prelude.cuh): compiled for sm_90 or newer it waits for the previous
/// kernel on the stream before any memory access, so the runtime may launch
/// the kernel with programmatic stream serialization.
inline constexpr llvm::StringLiteral kWaitForPredecessor =
    "kiln_wait_for_predecessor();";

/// True when a kernel with `source`, compiled for `arch`, waits for its
/// predecessor itself: `arch` is sm_90 or newer and the source calls
/// kWaitForPredecessor.
bool waitsForPredecessor(llvm::StringRef source, llvm::StringRef arch);

} // namespace mlir::kiln::codegen

#endif // KILN_CODEGEN_CUDA_KERNELEMITTER_H
