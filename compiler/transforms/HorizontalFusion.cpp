//===- HorizontalFusion.cpp - independent groups in one launch ------------===//
//
// Small training steps are bound by launches, not by work: kernels that do
// not depend on one another can share one. Two kinds are merged:
//  - gemm groups whose matmuls have the same operand types and transposes
//    and share an operand (up to reshapes), e.g. the q, k and v projections
//    of one input, or the weight gradients that contract one activation with
//    several output gradients: one grouped launch over all their tiles;
//  - independent pointwise groups (and the optimizer group): one kernel
//    with a loop per result shape.
// A merged group stands at the last op of its members, so a member is only
// merged into a later group when everything outside that uses its values
// comes after that point (which also means the later group does not depend
// on it).
//
//===----------------------------------------------------------------------===//

#include "compiler/transforms/FusionSteps.h"
#include "compiler/transforms/KernelBudget.h"

#include "dialects/kiln/IR/KilnDialect.h"

#include "llvm/ADT/SmallPtrSet.h"

#include <algorithm>

namespace mlir::kiln {
namespace {

/// `value` seen through reshapes (views of one buffer).
Value throughViews(Value value) {
  while (auto reshape = value.getDefiningOp<ReshapeOp>())
    value = reshape.getInput();
  return value;
}

SmallVector<MatmulOp> matmulsOf(const Group &group) {
  SmallVector<MatmulOp> matmuls;
  for (Operation *op : group.ops)
    if (auto matmul = dyn_cast<MatmulOp>(op))
      matmuls.push_back(matmul);
  return matmuls;
}

/// Whether the matmuls of `a` and `b` can be one grouped launch (neither
/// sums its products over a concatenated K: `sums`).
bool sameGemmProblems(const Group &a, const Group &b,
                      const llvm::DenseSet<Operation *> &sums) {
  auto isSum = [&](Operation *op) { return sums.contains(op); };
  SmallVector<MatmulOp> left = matmulsOf(a), right = matmulsOf(b);
  if (left.empty() || right.empty() || llvm::any_of(a.ops, isSum) ||
      llvm::any_of(b.ops, isSum))
    return false;
  bool shared = false;
  for (MatmulOp x : left)
    for (MatmulOp y : right) {
      if (x.getLhs().getType() != y.getLhs().getType() ||
          x.getRhs().getType() != y.getRhs().getType() ||
          x.getTransposeLhs() != y.getTransposeLhs() ||
          x.getTransposeRhs() != y.getTransposeRhs())
        return false;
      shared |= throughViews(x.getLhs()) == throughViews(y.getLhs()) ||
                throughViews(x.getRhs()) == throughViews(y.getRhs());
    }
  return shared;
}

/// Whether an op of `later` uses a value of `earlier` (the only way it can
/// depend on it once every outside use of `earlier` comes after `later`).
bool usesValuesOf(const Group &later, const Group &earlier) {
  for (Operation *op : later.ops)
    for (Value operand : op->getOperands())
      if (earlier.ops.contains(operand.getDefiningOp()))
        return true;
  return false;
}

/// The function arguments whose buffers `group` overwrites: the updated
/// parameters and optimizer state (results marked kiln.updates) it
/// computes, written in place.
llvm::SmallPtrSet<Value, 4> overwrittenArguments(const Group &group,
                                                 func::FuncOp function) {
  llvm::SmallPtrSet<Value, 4> arguments;
  Operation *terminator = function.getBody().front().getTerminator();
  for (unsigned i = 0, e = terminator->getNumOperands(); i < e; ++i)
    if (auto updates = function.getResultAttrOfType<IntegerAttr>(
            i, KilnDialect::kUpdatesAttrName))
      if (group.ops.contains(terminator->getOperand(i).getDefiningOp()) &&
          updates.getInt() < function.getNumArguments())
        arguments.insert(function.getArgument(updates.getInt()));
  return arguments;
}

bool readsAnyOf(const Group &group, const llvm::SmallPtrSet<Value, 4> &values) {
  for (Operation *op : group.ops)
    for (Value operand : op->getOperands())
      if (values.contains(operand))
        return true;
  return false;
}

/// Whether one kernel may run both: neither reads a buffer the other
/// overwrites in place (threads of the other part would race with it).
bool noInPlaceConflict(const Group &a, const Group &b, func::FuncOp function) {
  return !readsAnyOf(b, overwrittenArguments(a, function)) &&
         !readsAnyOf(a, overwrittenArguments(b, function));
}

/// Among the groups `eligible` selects, merges in block order each group
/// into the first later one that `compatible` allows and it can join.
template <typename Eligible, typename Compatible>
void mergeInOrder(Grouping &grouping, Eligible eligible,
                  Compatible compatible) {
  std::vector<Group *> groups;
  for (Group *group : grouping.all())
    if (eligible(*group))
      groups.push_back(group);
  llvm::sort(groups, [](Group *a, Group *b) {
    return a->last()->isBeforeInBlock(b->last());
  });
  for (size_t i = 0; i < groups.size(); ++i) {
    Group *later = groups[i];
    for (size_t j = 0; j < i; ++j) {
      Group *earlier = groups[j];
      if (earlier->ops.empty() || !compatible(*earlier, *later) ||
          !canJoin(*earlier, *later))
        continue;
      // Work merged into the optimizer keeps it the optimizer.
      if (earlier->kind == "optimizer")
        later->kind = "optimizer";
      grouping.merge(later, earlier);
    }
  }
}

bool isPointwiseKind(const Group &group) {
  return group.kind == "pointwise" || group.kind == "optimizer";
}

} // namespace

void mergeHorizontalGroups(func::FuncOp function, Grouping &grouping) {
  // Independent groups only: an epilogue cannot combine the products of
  // two problems, and a pointwise kernel would compute a value that the
  // other reads at remapped positions once more at each position.
  llvm::DenseSet<Operation *> sums =
      sumsOfProducts(function.getBody().front());
  mergeInOrder(
      grouping, [](const Group &group) { return group.kind == "gemm"; },
      [&](const Group &earlier, const Group &later) {
        return sameGemmProblems(earlier, later, sums) &&
               !usesValuesOf(later, earlier) &&
               fitsKernelBudget("gemm", later.ops,
                                SmallVector<Operation *>(earlier.ops.begin(),
                                                         earlier.ops.end()));
      });
  mergeInOrder(grouping, isPointwiseKind,
               [&](const Group &earlier, const Group &later) {
                 return !usesValuesOf(later, earlier) &&
                        noInPlaceConflict(earlier, later, function);
               });
}

} // namespace mlir::kiln
