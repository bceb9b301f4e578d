//===- ConvPlan.h - a conv fusion taken apart and configured -----*- C++
//-*-===//
//
// A "conv" fusion is one kiln.conv2d, kiln.conv2d_backward_input or
// kiln.conv2d_backward_filter whose operands are block arguments, followed
// by an optional epilogue: element-wise ops applied to its result element
// by element, whose other operands broadcast to the result's shape (a
// residual, a scale), constants, or element-wise values computed from
// those; and, after a forward convolution, an optional training-mode
// kiln.batch_norm over the output channels of a yielded epilogue value
// (the fusion step in compiler/transforms/GemmEpilogues.cpp), whose
// statistics the epilogue may take per output tile. Every yielded value
// other than the batch norm's results has the result's shape.
//
// The planner reads the convolution's geometry, maps the pass onto the
// implicit GEMM of kernels/conv_layout.cuh, and picks the kernel and its
// configuration for the GpuTarget:
//  - depthwise convolutions (groups = channels = outputs) run the direct
//    kernels of conv_depthwise.cuh;
//  - bf16/f16 convolutions whose operands both come in 16-byte runs may run
//    conv_wgmma.cuh on sm_90 (wgmma, arch-specific sm_90a code);
//  - every convolution may run conv_igemm.cuh (mma.sync);
//  the GEMM cost model (GemmConfig.h) chooses among the tables' tiles, with
//  the reduction split across blocks where the output has too few tiles to
//  fill the GPU (the filter gradient sums over every pixel of the batch).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_CUDA_CONV_CONVPLAN_H
#define KILN_CODEGEN_CUDA_CONV_CONVPLAN_H

#include "codegen/cuda/GpuTarget.h"
#include "codegen/cuda/gemm/GemmConfig.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include "llvm/ADT/SmallVector.h"

#include <string>

namespace mlir::kiln::codegen {

/// A convolution's geometry with the member names the layout functions of
/// kernels/conv_layout.cuh read (the kernels' configuration structs carry
/// the same members as compile-time constants).
struct ConvGeometry {
  typedef int64_t index;
  int64_t N = 0, C = 0, H = 0, W = 0, O = 0, OH = 0, OW = 0;
  int64_t KH = 0, KW = 0, SH = 1, SW = 1, PT = 0, PL = 0, DH = 1, DW = 1;
  int64_t GROUPS = 1;
  bool NHWC = false;
  int PASS = 0;
};

/// The element type the tensor cores multiply.
enum class ConvKind { Bf16 = 0, F16 = 1, Tf32 = 2, Tf32x3 = 3 };

struct ConvPlan {
  Operation *conv = nullptr;
  ConvGeometry geometry;
  Type elementType;
  /// Fusion arguments: what the GEMM's A and B gather from, and the bias
  /// (kiln.conv2d's optional operand; -1 without).
  unsigned aArg = 0, bArg = 0;
  int biasArg = -1;
  /// The shape of the convolution's result (and of every yielded value of
  /// the epilogue).
  SmallVector<int64_t> outShape;
  /// The fusion results the epilogue stores, in its order.
  SmallVector<unsigned> epilogueResults;
  /// The trailing batch norm (null without) and the fusion result that is
  /// its input.
  BatchNormOp norm;
  unsigned normInputResult = 0;

  /// The implicit GEMM of one group.
  int64_t rows = 0, cols = 0, k = 0;
  bool depthwise = false;

  /// A channels-first convolution that runs as the channels-last one
  /// (geometry.NHWC is then true, the kernel's): its operands A and B are
  /// first copied channels last (kernels/conv_layout_change.cuh), and the
  /// epilogue stores the result channels first. Chosen where channels-last
  /// copies make both operands 16-byte runs and channels-first ones would be
  /// gathered element by element.
  bool viaChannelsLast = false;
  /// The copies: BATCH matrices [ROWS][COLS] transposed, of A and of B.
  struct Copy {
    int64_t batch = 0, rows = 0, cols = 0;
    int64_t elements() const { return batch * rows * cols; }
  };
  Copy aCopy, bCopy;

  // Configuration (implicit GEMM).
  ConvKind kind = ConvKind::Bf16;
  /// The wgmma kernel may run it (sm_90, bf16/f16, both operands 16-byte
  /// runs).
  bool wgmmaAllowed = false;
  bool aKMajor = true, bKMajor = true, aVec = false, bVec = false;
  GemmChoice choice;
  /// The wgmma tile runs on operands the tensor memory accelerator copies
  /// (kernels/conv_tma.cuh), with this many stages.
  bool tma = false;
  int tmaStages = 0;
  /// 32-bit offsets.
  bool narrowIndex = true;

  int64_t outElements() const { return geometry.GROUPS * rows * cols; }
  int elementBytes() const { return elementType.isF32() ? 4 : 2; }
};

/// Takes `fusion` apart; on failure says why in `why`.
FailureOr<ConvPlan> analyzeConv(FusionOp fusion, std::string &why);

/// Chooses the kernel configuration of `plan` for `target` (`allowTf32`:
/// f32 on tf32 tensor cores once instead of in three products;
/// `allowWgmma`: the kernels may use the arch-specific wgmma of sm_90a, the
/// architecture compiled for being exactly sm_90). Fails with `why` when no
/// tile fits the target.
LogicalResult configureConv(ConvPlan &plan, const GpuTarget &target,
                            bool allowTf32, bool allowWgmma, std::string &why);

/// Sets `plan`'s tile and split of the reduction (and the index width they
/// need; of a depthwise plan, which takes neither, only that).
void setConvChoice(ConvPlan &plan, const GemmTileConfig &tile, int split);

/// conv_tma.cuh can run `plan`'s tile (configured): a wgmma tile of the
/// channels-last forward pass of bf16/f16 with channels per group a
/// multiple of 64, and a geometry the TMA's im2col copies can walk.
bool convTmaFits(const ConvPlan &plan);

/// Chooses whether `plan`'s wgmma tile (configured) runs conv_tma.cuh: the
/// channels-last forward pass of bf16/f16 with channels per group a multiple
/// of 64 and a geometry the TMA's im2col copies can walk; one block per SM
/// where the work items are no more than the SMs, and the most
/// stages that fit the blocks per SM beside `staticBytes` of
/// static shared memory (the epilogue's). Never where `allowed` is false
/// (kilnc --no-tma).
void chooseConvTma(ConvPlan &plan, const GpuTarget &target, bool allowed,
                   uint32_t staticBytes);

/// The tile tables of the implicit-GEMM kernels: wgmma and mma.sync for
/// bf16/f16, tf32 once, and f32 in three tf32 products.
llvm::ArrayRef<GemmTileConfig> convWgmmaConfigs();
llvm::ArrayRef<GemmTileConfig> convMmaConfigs();
llvm::ArrayRef<GemmTileConfig> convTf32Configs();
llvm::ArrayRef<GemmTileConfig> convTf32x3Configs();

/// `tile` as `plan`'s kernel runs it: tiles whose gathers need more
/// registers than the table's blocks per SM leave run fewer blocks.
GemmTileConfig convTileFor(const ConvPlan &plan, GemmTileConfig tile);

} // namespace mlir::kiln::codegen

#endif // KILN_CODEGEN_CUDA_CONV_CONVPLAN_H
