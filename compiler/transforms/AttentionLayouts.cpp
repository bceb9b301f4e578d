//===- AttentionLayouts.cpp - attention groups with their transposes -----===//
//
// A transformer keeps q, k and v as [B, T, H, D] (rows of a projection) and
// transposes them to the [B, H, T, D] that kiln.attention takes, and its
// result back. The attention kernels address every operand and result
// through per-dim strides, so such a transpose needs no kernel: it joins the
// attention group, and the kernel reads (or writes) the untransposed buffer.
//
//===----------------------------------------------------------------------===//

#include "compiler/transforms/FusionSteps.h"

#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/IR/Builders.h"

namespace mlir::kiln {
namespace {

bool isAttention(Operation *op) {
  return isa<AttentionOp, AttentionBackwardOp>(op);
}

/// A transpose the attention kernels can address through strides: of a
/// rank-4 tensor, with the head dim (the rows' contiguous elements) last.
bool isStridedLayout(Operation *op) {
  auto transpose = dyn_cast_or_null<TransposeOp>(op);
  if (!transpose)
    return false;
  ArrayRef<int64_t> perm = transpose.getPerm();
  return perm.size() == 4 && perm[3] == 3;
}

SmallVector<int64_t> inversePermutation(ArrayRef<int64_t> perm) {
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = i;
  return inverse;
}

/// When every user of `result` is either a layout transpose or an attention
/// op, stores it through the first such transpose (moved after `after`, the
/// op or the transpose of its previous result) and lets the other attention
/// ops read it back through the inverse transpose. Returns the transpose
/// that stores it, or null.
Operation *storeThroughTranspose(Operation *after, Value result) {
  Operation *stored = nullptr;
  for (Operation *user : result.getUsers())
    if (isStridedLayout(user) && (!stored || user->isBeforeInBlock(stored)))
      stored = user;
  if (!stored)
    return nullptr;
  for (OpOperand &use : result.getUses())
    if (use.getOwner() != stored && !isAttention(use.getOwner()))
      return nullptr;
  stored->moveAfter(after);
  auto perm = cast<TransposeOp>(stored).getPerm();
  SmallVector<int64_t> inverse = inversePermutation(perm);
  for (OpOperand &use : llvm::make_early_inc_range(result.getUses())) {
    if (use.getOwner() == stored)
      continue;
    OpBuilder builder(use.getOwner());
    Value back = builder.create<TransposeOp>(use.getOwner()->getLoc(),
                                             stored->getResult(0), inverse);
    use.set(back);
  }
  return stored;
}

/// The layout transpose behind operand `index` of `op`, made private to it
/// (a copy when other ops use it too), or null (also when another group
/// already holds it).
Operation *privateOperandTranspose(Operation *op, unsigned index,
                                   const Grouping &grouping) {
  Operation *transpose = op->getOperand(index).getDefiningOp();
  if (!isStridedLayout(transpose) || grouping.of(transpose))
    return nullptr;
  if (transpose->getResult(0).hasOneUse())
    return transpose;
  OpBuilder builder(op);
  Operation *copy = builder.clone(*transpose);
  op->setOperand(index, copy->getResult(0));
  return copy;
}

} // namespace

void formAttentionGroups(Block &body, Grouping &grouping) {
  SmallVector<Operation *> attentions;
  for (Operation &op : body)
    if (isAttention(&op) && !grouping.of(&op))
      attentions.push_back(&op);
  // Results first: storing one transposed adds the inverse transposes that
  // the later attention ops then read through.
  DenseMap<Operation *, SmallVector<Operation *>> stores;
  for (Operation *op : attentions) {
    Operation *after = op;
    for (Value result : op->getResults())
      if (Operation *stored = storeThroughTranspose(after, result)) {
        stores[op].push_back(stored);
        after = stored;
      }
  }
  for (Operation *op : attentions) {
    Group *group = grouping.create("attention", op);
    for (unsigned i = 0, e = op->getNumOperands(); i < e; ++i) {
      Operation *original = op->getOperand(i).getDefiningOp();
      if (Operation *transpose = privateOperandTranspose(op, i, grouping)) {
        grouping.add(group, transpose);
        if (original != transpose && original->use_empty())
          original->erase();
      }
    }
    for (Operation *stored : stores.lookup(op))
      grouping.add(group, stored);
  }
}

} // namespace mlir::kiln
