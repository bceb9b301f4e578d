//===- GemmKernelAttr.h - a gemm kernel as #kiln_cuda.gemm ------*- C++ -*-===//
//
// The GEMM kernel choice (GemmEmitter.h) to and from the attribute that
// records it in the IR (codegen/dialect/KilnCudaDialect.td): the attribute
// names a tile of GemmConfig.h's tables by kernel, MxNxK and schedule.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_CUDA_GEMM_GEMMKERNELATTR_H
#define KILN_CODEGEN_CUDA_GEMM_GEMMKERNELATTR_H

#include "codegen/cuda/gemm/GemmEmitter.h"
#include "codegen/dialect/KilnCudaDialect.h"

#include <string>

namespace mlir::kiln::codegen {

cuda::GemmAttr gemmKernelAttr(MLIRContext *context,
                              const GemmKernelChoice &kernel);

/// The choice `attr` records (its ktPerSplit unset); fails with `why` where
/// it names no tile of the tables.
FailureOr<GemmKernelChoice> gemmKernelFromAttr(cuda::GemmAttr attr,
                                               std::string &why);

/// The kernel of gemm fusion `fusion`: its kiln_cuda.kernel attribute
/// where it has one, else the cost model's (selectGemm). The errors are the
/// fusion's.
FailureOr<GemmKernelChoice> gemmKernelOf(FusionOp fusion,
                                         const CodegenOptions &options);

} // namespace mlir::kiln::codegen

#endif // KILN_CODEGEN_CUDA_GEMM_GEMMKERNELATTR_H
