//===- RnnEmitter.h - kernels of "rnn" fusions ------------------*- C++ -*-===//
//
// An rnn fusion's kernel configuration is chosen (selectRnn: RnnPlan.h's
// search), recorded in the IR as #kiln_cuda.rnn, checked against the
// fusion and the target (rnnPlanOf) and rendered apart.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_CUDA_RNN_RNNEMITTER_H
#define KILN_CODEGEN_CUDA_RNN_RNNEMITTER_H

#include "codegen/cuda/KernelEmitter.h"
#include "codegen/cuda/rnn/RnnPlan.h"
#include "codegen/dialect/KilnCudaDialect.h"

namespace mlir::kiln::codegen {

/// The plan the search chooses for `p`, the problem of rnn op `op`; the
/// errors are the op's.
FailureOr<RnnPlan> selectRnn(Operation *op, const RnnProblem &p,
                             const CodegenOptions &options);

/// `plan` as the attribute that records it.
cuda::RnnAttr rnnKernelAttr(MLIRContext *context, const RnnPlan &plan);

/// The plan of rnn fusion `fusion` (op `op`, problem `p`): the one its
/// kiln_cuda.kernel records, checked, where it has one (errors at the
/// fusion), else selectRnn's.
FailureOr<RnnPlan> rnnPlanOf(FusionOp fusion, Operation *op,
                             const RnnProblem &p,
                             const CodegenOptions &options);

std::unique_ptr<KernelEmitter> createRnnEmitter();

} // namespace mlir::kiln::codegen

#endif // KILN_CODEGEN_CUDA_RNN_RNNEMITTER_H
