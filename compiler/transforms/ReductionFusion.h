//===- ReductionFusion.h - reductions with prologue and epilogue -*- C++
//-*-===//
//
// The "reduction" groups of --kiln-fuse: each primitive reduction
// (reduce_sum/mean/max/min) takes
// - its prologue: the element-wise ops that compute its input, when all
//   their other users come after the group (the value then becomes an extra
//   result, stored while the kernel walks the elements);
// - its epilogue: element-wise ops on its result (mean = sum / n, a norm's
//   sqrt, a scaling), the ops that broadcast the result back over the same
//   rows (softmax's exp(x - max) / sum, a norm's x * rsqrt(mean(x^2) + eps)
//   * g) and the later reductions over the same rows (the sum of a softmax);
// - whole-tensor reductions over other tensors that meet it in scalar ops,
//   and in the end every group of independent whole-tensor reductions that
//   can run together: one multi-tensor kernel (a global gradient norm).
// Groups are grown only as far as ReductionPlan accepts them. Element-wise
// ops that compute updated parameters and optimizer state are left to the
// optimizer kernel.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_TRANSFORMS_REDUCTIONFUSION_H
#define KILN_COMPILER_TRANSFORMS_REDUCTIONFUSION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <vector>

namespace mlir::kiln {

/// The reduction groups of `function` (ops in block order, each group one
/// kernel), among the ops `claimed` does not reject (ops of groups formed
/// earlier).
std::vector<llvm::SmallVector<Operation *>>
formReductionGroups(func::FuncOp function,
                    llvm::function_ref<bool(Operation *)> claimed);

} // namespace mlir::kiln

#endif // KILN_COMPILER_TRANSFORMS_REDUCTIONFUSION_H
