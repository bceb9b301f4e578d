//===- AttentionKernelAttr.h - attention kernels as an attribute -*- C++
//-*-===//
//
// The attention kernel choice (AttentionEmitter.h) to and from the
// attribute that records it in the IR (#kiln_cuda.attention,
// codegen/dialect/KilnCudaDialect.td).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_CUDA_ATTENTION_ATTENTIONKERNELATTR_H
#define KILN_CODEGEN_CUDA_ATTENTION_ATTENTIONKERNELATTR_H

#include "codegen/cuda/attention/AttentionEmitter.h"
#include "codegen/dialect/KilnCudaDialect.h"

namespace mlir::kiln::codegen {

/// `kernel` of a forward or (`backward`) backward attention.
cuda::AttentionAttr attentionKernelAttr(MLIRContext *context,
                                        const AttentionKernelChoice &kernel,
                                        bool backward);

/// The choice `attr` records.
AttentionKernelChoice attentionKernelFromAttr(cuda::AttentionAttr attr);

/// The kernels of attention fusion `fusion` (whose problem is `p`): its
/// kiln_cuda.kernel attribute where it has one (checked), else the
/// planner's. The errors are the fusion's.
FailureOr<AttentionKernelChoice>
attentionKernelOf(FusionOp fusion, const AttentionProblem &p,
                  const CodegenOptions &options);

} // namespace mlir::kiln::codegen

#endif // KILN_CODEGEN_CUDA_ATTENTION_ATTENTIONKERNELATTR_H
