//===- SplitTrainStep.h - train_step with its gradients in memory -*- C++
//-*-===//
//
// Data parallelism averages the gradients between the backward and the
// update. The fused train_step may compute the two in one kernel (the
// optimizer's moment updates in the epilogue of the reduction that computes a
// bias gradient), leaving no point in between; so with --data-parallel,
// train_step runs forward_backward's launches followed by apply_update's
// (what train_step computes, by construction: compiler/training/TrainStep.h),
// the gradients complete in their resident buffers in between. The
// interface of train_step (its inputs and outputs) stays as it was.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_DISTRIBUTED_SPLITTRAINSTEP_H
#define KILN_CODEGEN_DISTRIBUTED_SPLITTRAINSTEP_H

#include "codegen/cuda/ModuleCodegen.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir::kiln::codegen {

/// Replaces the launches, arena and bindings of the entry train_step of
/// `compiled` by forward_backward's launches then apply_update's, whose arena
/// follows forward_backward's. Nothing to do without a train_step; an error
/// at train_step's function when an input or output of train_step is not
/// one of the halves', or when both halves read an input from their arenas
/// (the runtime writes it once).
LogicalResult splitTrainStep(CompiledModule &compiled, ModuleOp module);

} // namespace mlir::kiln::codegen

#endif // KILN_CODEGEN_DISTRIBUTED_SPLITTRAINSTEP_H
