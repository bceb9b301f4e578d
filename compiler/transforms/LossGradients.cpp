//===- LossGradients.cpp - a loss and its gradient in one kernel ----------===//
//
// A training step computes cross entropy's loss in the forward pass and its
// gradient in the backward pass, and each reads the [N, C] logits, the
// largest tensor of a language model's step. When the gradient's incoming
// value does not depend on the loss (the seed of a loss that is returned as
// is or scaled), both come from one kernel that reads each row once.
//
//===----------------------------------------------------------------------===//

#include "compiler/transforms/FusionSteps.h"

#include "dialects/kiln/IR/KilnDialect.h"

#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::kiln {

/// Whether `value` is computed (within the block) from a result of `op`.
static bool dependsOn(Value value, Operation *op) {
  SmallVector<Value> stack = {value};
  llvm::SmallPtrSet<Operation *, 16> seen;
  while (!stack.empty()) {
    Operation *def = stack.pop_back_val().getDefiningOp();
    if (!def || !seen.insert(def).second)
      continue;
    if (def == op)
      return true;
    // Ops before `op` cannot use its results.
    if (def->getBlock() == op->getBlock() && def->isBeforeInBlock(op))
      continue;
    llvm::append_range(stack, def->getOperands());
  }
  return false;
}

/// Moves the ops between `forward` and `backward` that use the loss (and
/// what uses them) below `backward`, in order. Fails, moving nothing, when
/// one of them is in a group already. The caller has checked that
/// `backward` needs none of them.
static LogicalResult moveLossUsersBelow(Operation *forward,
                                        Operation *backward,
                                        const Grouping &grouping) {
  llvm::SmallPtrSet<Operation *, 8> dependent = {forward};
  SmallVector<Operation *> moved;
  for (Operation *op = forward->getNextNode(); op != backward;
       op = op->getNextNode()) {
    bool usesLoss = llvm::any_of(op->getOperands(), [&](Value v) {
      return v.getDefiningOp() && dependent.contains(v.getDefiningOp());
    });
    if (!usesLoss)
      continue;
    if (grouping.of(op))
      return failure();
    dependent.insert(op);
    moved.push_back(op);
  }
  Operation *point = backward;
  for (Operation *op : moved) {
    op->moveAfter(point);
    point = op;
  }
  return success();
}

void formLossGradientGroups(Block &body, Grouping &grouping) {
  for (auto backward : body.getOps<CrossEntropyBackwardOp>()) {
    if (grouping.of(backward))
      continue;
    for (Operation *user : backward.getLogits().getUsers()) {
      auto forward = dyn_cast<CrossEntropyOp>(user);
      if (!forward || grouping.of(forward) ||
          forward.getLabels() != backward.getLabels() ||
          forward.getLabelSmoothing() != backward.getLabelSmoothing() ||
          forward.getReduction() != backward.getReduction() ||
          forward.getIgnoreIndex() != backward.getIgnoreIndex() ||
          !forward->isBeforeInBlock(backward))
        continue;
      // The kernel stands at the backward op, and the incoming gradient must
      // not need the loss. What uses the loss before the backward (a cast of
      // it in mixed precision) moves below it.
      if (dependsOn(backward.getGrad(), forward) ||
          failed(moveLossUsersBelow(forward, backward, grouping)))
        continue;
      Group *group = grouping.create("reduction", forward);
      grouping.add(group, backward);
      break;
    }
  }
}

} // namespace mlir::kiln
