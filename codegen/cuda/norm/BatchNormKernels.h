//===- BatchNormKernels.h - kernels of one batch norm op ------*- C++ -*-===//
//
// The kernels of a kiln.batch_norm or kiln.batch_norm_backward
// (kernels/batch_norm.cuh), for the batch_norm fusion that holds one alone
// (BatchNormEmitter.cpp) and for a conv fusion that ends in a batch norm
// (ConvEmitter.cpp), whose epilogue may already have taken the statistics'
// partials.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_CUDA_NORM_BATCHNORMKERNELS_H
#define KILN_CODEGEN_CUDA_NORM_BATCHNORMKERNELS_H

#include "codegen/cuda/EmitterUtils.h"
#include "codegen/cuda/GpuTarget.h"

#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace mlir::kiln::codegen {

/// Where the op's kernels read each operand and write each result (none
/// for a result the fusion does not yield).
struct BatchNormBindings {
  SmallVector<LaunchArg> operands;
  SmallVector<std::optional<LaunchArg>> results;

  /// The bindings of a fusion of the op alone.
  static BatchNormBindings of(const SingleOpFusion &single);
};

/// The batch statistics' partials, computed by another kernel of the
/// fusion: kiln::bn::welford [splits][C] of the values as they are (not
/// shifted), at `offset` in the fusion's scratch, split j over rows
/// [j * rowsPerSplit, (j + 1) * rowsPerSplit) of a channels-last input.
struct BatchNormPartials {
  uint64_t offset = 0;
  int64_t rowsPerSplit = 1;
};

/// The blocks the kernels size their split and grids for on `target`
/// (#kiln_cuda.batch_norm): enough to fill it twice over.
inline int64_t batchNormBlocks(const GpuTarget &target) {
  return target.blocksForWaves(2);
}

/// Adds the kernels of `op` (a kiln.batch_norm or kiln.batch_norm_backward
/// in `fusion`) to `builder`, sized for `blocks` (batchNormBlocks);
/// `partials` (forward only) replaces the statistics' first kernel.
void emitBatchNormKernels(FusionBuilder &builder, Operation *op,
                          FusionOp fusion, const BatchNormBindings &bindings,
                          int64_t blocks,
                          std::optional<BatchNormPartials> partials = {});

} // namespace mlir::kiln::codegen

#endif // KILN_CODEGEN_CUDA_NORM_BATCHNORMKERNELS_H
