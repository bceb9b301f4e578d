//===- AttentionRowLse.cpp - the backward reads the forward's statistics --===//
//
// kiln.attention_backward needs each query row's log-sum-exp to recompute
// the attention weights. Without it, its kernels sweep the keys once more
// than the gradients need, only to find it; the forward kernel has it at
// the end of its own sweep for the price of one float per row. So a
// backward op whose `out` is the result of a forward op of the same
// operands, mask and scale reads that op's row log-sum-exp, which the
// forward op is rebuilt to yield (`with_row_lse`).
//
//===----------------------------------------------------------------------===//

#include "compiler/transforms/FusionSteps.h"

#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/IR/Builders.h"

namespace mlir::kiln {
namespace {

/// Whether `forward` computes the attention that `backward` differentiates.
bool sameAttention(AttentionOp forward, AttentionBackwardOp backward) {
  return forward.getQuery() == backward.getQuery() &&
         forward.getKey() == backward.getKey() &&
         forward.getValue() == backward.getValue() &&
         forward.getCausal() == backward.getCausal() &&
         forward.getScaleAttr() == backward.getScaleAttr();
}

/// `forward` itself when it yields its row log-sum-exp, else its rebuilt
/// copy that does (which replaces it).
AttentionOp withRowLse(AttentionOp forward) {
  if (forward.getRowLse())
    return forward;
  OpBuilder builder(forward);
  auto rebuilt = builder.create<AttentionOp>(
      forward.getLoc(), forward.getQuery(), forward.getKey(),
      forward.getValue(), forward.getCausalAttr(), forward.getScaleAttr(),
      builder.getUnitAttr());
  rebuilt->setDiscardableAttrs(forward->getDiscardableAttrDictionary());
  forward.getResult().replaceAllUsesWith(rebuilt.getResult());
  forward.erase();
  return rebuilt;
}

} // namespace

void pairAttentionRowLse(Block &body) {
  SmallVector<AttentionBackwardOp> backwards;
  for (Operation &op : body)
    if (auto backward = dyn_cast<AttentionBackwardOp>(op))
      if (!backward.getRowLse())
        backwards.push_back(backward);
  for (AttentionBackwardOp backward : backwards) {
    auto forward = backward.getOut().getDefiningOp<AttentionOp>();
    if (!forward || forward->getBlock() != &body ||
        !sameAttention(forward, backward))
      continue;
    backward.getRowLseMutable().assign(withRowLse(forward).getRowLse());
  }
}

} // namespace mlir::kiln
