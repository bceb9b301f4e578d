//===- RecordedKernel.h - a fusion's kernel attribute, read back -*- C++ -*-===//
//
// The emitters render a fusion from the kiln_cuda attribute that
// --kiln-select-kernels records on it (or that a user edited): each family
// reads its own attribute here, converts it back to its planner's plan and
// checks it against the fusion, with errors at the fusion that name the op
// of the user's it computes.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_CUDA_RECORDEDKERNEL_H
#define KILN_CODEGEN_CUDA_RECORDEDKERNEL_H

#include "codegen/cuda/KernelEmitter.h"
#include "codegen/dialect/KilnCudaDialect.h"

namespace mlir::kiln::codegen {

/// An error about the kernel `fusion` records, at the fusion: "'kiln.fusion'
/// op kiln_cuda.kernel of 'kiln.max_pool2d': ...".
InFlightDiagnostic emitRecordedKernelError(FusionOp fusion);

/// The kernel `fusion` records, as an `AttrT`: null where it records none,
/// an error where it records another family's.
template <class AttrT>
FailureOr<AttrT> recordedKernel(FusionOp fusion) {
  Attribute recorded = fusion->getAttr(cuda::kKernelAttrName);
  if (!recorded)
    return AttrT();
  if (auto attr = dyn_cast<AttrT>(recorded))
    return attr;
  return emitRecordedKernelError(fusion)
         << "a " << fusion.getKind() << " fusion's kernel is a #kiln_cuda."
         << AttrT::getMnemonic() << ", got " << recorded;
}

} // namespace mlir::kiln::codegen

#endif // KILN_CODEGEN_CUDA_RECORDEDKERNEL_H
