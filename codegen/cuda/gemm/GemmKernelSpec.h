//===- GemmKernelSpec.h - GEMM configurations to kernel specs ---*- C++ -*-===//
//
// The one place a GEMM kernel's spec is assembled, for the emitter and for
// the template instances the nvcc check compiles: the generated
// configuration struct (the problem's shapes and the chosen tile as static
// constexpr members, kernels/gemm_common.cuh says which), the parameter
// struct, the kernel's parameters and body, and its launch geometry.
// Callers add the problem's functors (`Operands`, `Epilogue`) after the
// configuration.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_CUDA_GEMM_GEMMKERNELSPEC_H
#define KILN_CODEGEN_CUDA_GEMM_GEMMKERNELSPEC_H

#include "codegen/cuda/KernelRenderer.h"
#include "codegen/cuda/gemm/GemmConfig.h"

#include "llvm/ADT/ArrayRef.h"

#include <string>

namespace mlir::kiln::codegen {

enum class GemmElement { Bf16, F16, F32 };

/// What a GEMM kernel's configuration struct holds.
struct GemmKernelConfig {
  GemmElement element = GemmElement::Bf16;
  /// f32 operands on tensor cores (tf32).
  bool tf32 = false;
  /// 32-bit index math (every buffer, the scratch and the tile overhang far
  /// below 2^31 elements).
  bool narrowIndex = true;
  int64_t m = 0, n = 0, k = 0, batch = 1;
  /// The GEMM's batch and rows (the batch is folded into the rows when the
  /// rhs is shared); rows of every output (r = batch * M + m).
  int64_t gemmBatch = 1, rows = 0, outRows = 0;
  /// Problems of one shape with outputs of their own (stacked), and
  /// problems whose products are summed over their concatenated K.
  int64_t groups = 1, ksums = 1;
  /// lhs stored [M][K], rhs stored [N][K]; 16-byte copies are legal.
  bool aKMajor = true, bKMajor = false, aVec = true, bVec = true;
  GemmChoice choice;
  /// wgmma tiles: both operands copied by the tensor memory accelerator
  /// (gemm_tma.cuh), through a map per problem and operand.
  bool tma = false;
  /// The TMA kernel's epilogue staged through shared memory (coalesced
  /// runs of 8 columns): one split, N a multiple of 8, and the staging fits.
  bool stagedEpilogue = false;
  /// The staged epilogue's first result stored by TMA (one problem, the
  /// operands' element type): its map follows the operands' maps.
  bool tmaStore = false;
  /// The TMA kernel's blocks in thread-block clusters of this many, one
  /// tile row each, that share the rhs tile (each copies its share into
  /// every block's stage by TMA multicast).
  int clusterM = 1;

  int64_t outElements() const { return groups * batch * m * n; }
  int elementBytes() const { return element == GemmElement::F32 ? 4 : 2; }
};

/// A pointer parameter of the kernel: its element's CUDA type, whether the
/// kernel only reads it, its name (a field of `Params` too) and its argument.
struct GemmBuffer {
  std::string type;
  bool input = true;
  std::string name;
  LaunchArg arg;
};

/// The most problems of one TMA launch (each takes two tensor maps of 128
/// bytes among the kernel's parameters).
inline constexpr int64_t kGemmTmaMaxProblems = 4;

/// Dynamic shared memory of the TMA kernel of `config`.
uint32_t gemmTmaSharedBytes(const GemmKernelConfig &config);

/// `typedef idx`, `struct Config` and `struct Params` (the buffers, the
/// split-K scratch, then with config.tma the tensor maps' addresses).
std::string gemmConfigFunctors(const GemmKernelConfig &config,
                               llvm::ArrayRef<GemmBuffer> buffers);

/// The GEMM kernel of `config` on `target`; `functors` are the configuration
/// functors followed by `Operands` and `Epilogue`. With config.tma, `maps`
/// are the lhs maps of every problem, then the rhs maps.
KernelSpec gemmKernelSpec(const GemmKernelConfig &config,
                          llvm::ArrayRef<GemmBuffer> buffers,
                          llvm::ArrayRef<GemmBuffer> maps, std::string functors,
                          std::string header, const GpuTarget &target);

/// The split-K reduce kernel (config.choice.split > 1) with the same
/// functors.
KernelSpec gemmSplitReduceSpec(const GemmKernelConfig &config,
                               llvm::ArrayRef<GemmBuffer> buffers,
                               std::string functors, std::string header,
                               const GpuTarget &target);

} // namespace mlir::kiln::codegen

#endif // KILN_CODEGEN_CUDA_GEMM_GEMMKERNELSPEC_H
