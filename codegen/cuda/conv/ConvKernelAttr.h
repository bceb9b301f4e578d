//===- ConvKernelAttr.h - a conv kernel as #kiln_cuda.conv ------*- C++ -*-===//
//
// The convolution kernel choice (ConvEmitter.h) to and from the attribute
// that records it in the IR (codegen/dialect/KilnCudaDialect.td).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_CUDA_CONV_CONVKERNELATTR_H
#define KILN_CODEGEN_CUDA_CONV_CONVKERNELATTR_H

#include "codegen/cuda/conv/ConvEmitter.h"
#include "codegen/dialect/KilnCudaDialect.h"

namespace mlir::kiln::codegen {

cuda::ConvAttr convKernelAttr(MLIRContext *context,
                              const ConvKernelChoice &kernel);

/// The choice `attr` records (its ktPerSplit unset).
ConvKernelChoice convKernelFromAttr(cuda::ConvAttr attr);

/// The kernel of conv fusion `fusion`: its kiln_cuda.kernel attribute where
/// it has one, else the planner's (selectConv; std::nullopt for a depthwise
/// convolution). The errors are the fusion's.
FailureOr<std::optional<ConvKernelChoice>>
convKernelOf(FusionOp fusion, const CodegenOptions &options);

} // namespace mlir::kiln::codegen

#endif // KILN_CODEGEN_CUDA_CONV_CONVKERNELATTR_H
