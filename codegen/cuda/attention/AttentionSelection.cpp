//===- AttentionSelection.cpp - attention kernels, chosen and checked -----===//
//
// selectAttention runs the planner (AttentionPlanner.h: the Hopper kernels
// where they can run, else the largest SIMT tile that fits); verifyAttention
// checks kernels chosen elsewhere (an edited #kiln_cuda.attention) by the
// rules the kernels' templates set.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/attention/AttentionEmitter.h"
#include "codegen/dialect/KilnCudaDialect.h"

#include "llvm/Support/FormatVariadic.h"

namespace mlir::kiln::codegen {

/// The tensor-core kernels may run: sm_90a with TMA.
static bool wgmmaAllowed(const CodegenOptions &options) {
  return options.allowTma && archNumber(options.arch) == 90;
}

FailureOr<AttentionKernelChoice>
selectAttention(FusionOp fusion, const AttentionProblem &p,
                const CodegenOptions &options) {
  FailureOr<int64_t> tile = chooseAttentionTile(p, options.target());
  if (failed(tile))
    return (emitFusionError(fusion) << "attention head dims ")
           << p.d << "/" << p.dv << " do not fit in shared memory on "
           << options.arch;
  AttentionKernelChoice kernel;
  kernel.wgmma = chooseAttentionWgmma(
      p, options.target(), wgmmaAllowed(options), options.persistentAttention,
      options.fusedAttentionBackward, options.attentionSchedule);
  if (!kernel.wgmma)
    kernel.tile = *tile;
  return kernel;
}

namespace {

/// Why a kernel needing `bytes` of shared memory cannot run on `target`;
/// empty if it can.
std::string sharedMismatch(llvm::StringRef kernel, int64_t bytes,
                           const GpuTarget &target) {
  if (bytes <= int64_t(target.sharedBytesPerBlock))
    return "";
  return llvm::formatv("the {0}'s {1} bytes of shared memory exceed the {2} "
                       "of {3}",
                       kernel, bytes, target.sharedBytesPerBlock, target.arch)
      .str();
}

/// Why `k` is not a kernel of the Hopper templates; empty if it is.
std::string wgmmaKernelMismatch(llvm::StringRef name,
                                const AttentionWgmmaKernel &k) {
  bool rows = (k.fixedRows == 64 || k.fixedRows == 128) &&
              (k.streamedRows == 64 || k.streamedRows == 128);
  if (rows && k.stages >= 2 && k.stages <= 4)
    return "";
  return (name + " = " + llvm::Twine(k.fixedRows) + "x" +
          llvm::Twine(k.streamedRows) + "x" + llvm::Twine(k.stages) +
          ": a wgmma kernel keeps 64 or 128 rows, streams 64 or 128 and "
          "takes 2 to 4 stages")
      .str();
}

std::string simtMismatch(const AttentionProblem &p, int64_t tile,
                         const GpuTarget &target) {
  if (!llvm::is_contained(kAttentionTiles, tile))
    return "the simt kernels' tiles are 64, 32 or 16 rows, got " +
           std::to_string(tile);
  return sharedMismatch("tile", attentionSharedBytes(p, tile), target);
}

std::string forwardMismatch(const AttentionProblem &p,
                            const AttentionWgmmaPlan &plan,
                            const GpuTarget &target) {
  if (plan.forward.fixedRows == 0)
    return "a forward attention's wgmma kernel is forward = BMxBNxS";
  if (std::string why = wgmmaKernelMismatch("forward", plan.forward);
      !why.empty())
    return why;
  if (plan.pingpong && plan.forward.fixedRows != 128)
    return "pingpong needs two consumer warpgroups: forward keeps 128 rows";
  return sharedMismatch("forward kernel",
                        attentionWgmmaForwardBytes(p, plan.forward), target);
}

std::string backwardMismatch(const AttentionProblem &p,
                             const AttentionWgmmaPlan &plan,
                             const GpuTarget &target) {
  if (plan.dkdv.fixedRows == 0)
    return "an attention backward's wgmma kernels are dq and dkdv, or fused "
           "and dkdv";
  if (std::string why = wgmmaKernelMismatch("dkdv", plan.dkdv); !why.empty())
    return why;
  if (plan.fused) {
    if (!attentionFusedBackwardFits(p))
      return "the fused backward takes every gradient, the forward's row "
             "log-sum-exp and head dims of at most 128";
    if (plan.dkdv.fixedRows != 128 || plan.dkdv.streamedRows != 64)
      return "the fused backward keeps 128 rows and streams 64";
    return sharedMismatch("fused backward",
                          attentionWgmmaFusedBackwardBytes(p, plan.dkdv),
                          target);
  }
  if (std::string why = wgmmaKernelMismatch("dq", plan.dq); !why.empty())
    return why;
  bool both = p.results[1] && p.results[2];
  if (both && attentionNeedsSeparateDkDv(p) && !plan.separateDkDv)
    return llvm::formatv("head dims {0}/{1} need separate_dkdv: both "
                         "gradients' accumulators do not fit in registers",
                         p.d, p.dv)
        .str();
  if (std::string why = sharedMismatch(
          "dq kernel", attentionWgmmaBackwardBytes(p, plan.dq, false), target);
      !why.empty())
    return why;
  return sharedMismatch(
      "dkdv kernel", attentionWgmmaBackwardBytes(p, plan.dkdv, true), target);
}

} // namespace

LogicalResult verifyAttention(FusionOp fusion, const AttentionProblem &p,
                              const CodegenOptions &options,
                              const AttentionKernelChoice &kernel) {
  const GpuTarget &target = options.target();
  std::string why;
  if (!kernel.wgmma)
    why = simtMismatch(p, kernel.tile, target);
  else if (why = attentionWgmmaMismatch(p, wgmmaAllowed(options)); why.empty())
    why = p.backward ? backwardMismatch(p, *kernel.wgmma, target)
                     : forwardMismatch(p, *kernel.wgmma, target);
  if (why.empty())
    return success();
  return fusion.emitOpError() << cuda::kKernelAttrName << ": " << why;
}

} // namespace mlir::kiln::codegen
