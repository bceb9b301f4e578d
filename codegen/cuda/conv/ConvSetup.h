//===- ConvSetup.h - what choosing and rendering a conv share ---*- C++ -*-===//
//
// A conv fusion's kernel is chosen (selectConv), checked (verifyConv) and
// rendered (emitConv) apart (ConvEmitter.h); the three start from the same
// plan, configured for the target.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_CUDA_CONV_CONVSETUP_H
#define KILN_CODEGEN_CUDA_CONV_CONVSETUP_H

#include "codegen/cuda/conv/ConvEmitter.h"

namespace mlir::kiln::codegen {

/// `fusion` taken apart and configured for options.arch (its choice the
/// cost model's, without TMA copies); the errors are the fusion's.
FailureOr<ConvPlan> prepareConv(FusionOp fusion, const CodegenOptions &options);

/// The static shared memory of `plan`'s epilogue beside its tile's stages
/// (the batch norm statistics it takes, if any).
uint32_t convStaticSharedBytes(const ConvPlan &plan, FusionOp fusion);

/// verifyConv (ConvEmitter.h) of a fusion already prepared.
LogicalResult verifyConv(ConvPlan plan, FusionOp fusion,
                         const CodegenOptions &options,
                         const ConvKernelChoice &kernel);

} // namespace mlir::kiln::codegen

#endif // KILN_CODEGEN_CUDA_CONV_CONVSETUP_H
