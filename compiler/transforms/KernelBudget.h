//===- KernelBudget.h - the tensors one kernel may take ---------*- C++ -*-===//
//
// Every tensor a kernel reads or writes is one of its parameters, and one
// launch passes at most kMaxKernelParams of them (launch_limits.h, which the
// artifact's validator checks). Each kernel family states here how many
// tensors a group of its kind may take, and --kiln-fuse asks before a group
// grows or two groups merge, so that no group it forms is refused by code
// generation for its size: a long chain of element-wise ops over many
// parameters becomes several kernels instead.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_TRANSFORMS_KERNELBUDGET_H
#define KILN_COMPILER_TRANSFORMS_KERNELBUDGET_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::kiln {

/// The tensors one kernel of a fusion of `kind` may take. The loop kernels
/// ("pointwise", "optimizer") take pointers only, and split a fusion of
/// independent results over several kernels; the other families keep half
/// of a launch's parameters for their tensor maps, scratch and scalars.
int64_t kernelTensorBudget(llvm::StringRef kind);

/// The tensors a kernel of `ops` (with `more`) reads and writes: the values
/// its ops read that none of them computes (splat constants aside, which
/// kernels evaluate in place) and the values they compute that other ops
/// read.
int64_t kernelTensors(const llvm::SetVector<Operation *> &ops,
                      llvm::ArrayRef<Operation *> more = {});

/// Whether `ops` (with `more`) fit one kernel of `kind`.
inline bool fitsKernelBudget(llvm::StringRef kind,
                             const llvm::SetVector<Operation *> &ops,
                             llvm::ArrayRef<Operation *> more = {}) {
  return kernelTensors(ops, more) <= kernelTensorBudget(kind);
}

} // namespace mlir::kiln

#endif // KILN_COMPILER_TRANSFORMS_KERNELBUDGET_H
