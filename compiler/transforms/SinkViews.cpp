//===- SinkViews.cpp - reshapes next to their first reader ----------------===//
//
// A reshape is a view: no kernel, the same bytes under another shape. Where
// it stands in the block says nothing, but the grouping steps read position
// as order: a group becomes one kernel at its last op, so every reader of a
// member's result outside the group must come after that op. A reshape of
// the q projection right after it would keep the projection from joining
// the k and v projections two ops later, although nothing reads the view
// before the rope that follows them all. Moving every reshape down to just
// before its first reader removes that false order.
//
//===----------------------------------------------------------------------===//

#include "compiler/transforms/FusionSteps.h"

#include "dialects/kiln/IR/KilnDialect.h"

#include "llvm/ADT/STLExtras.h"

namespace mlir::kiln {

void sinkViews(Block &body) {
  // Last to first, so that a reshape of a reshape follows the one it reads.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body))) {
    if (!isa<ReshapeOp>(op))
      continue;
    Operation *first = nullptr;
    for (Operation *user : op.getUsers()) {
      Operation *reader = body.findAncestorOpInBlock(*user);
      if (reader && (!first || reader->isBeforeInBlock(first)))
        first = reader;
    }
    if (first && first != op.getNextNode())
      op.moveBefore(first);
  }
}

} // namespace mlir::kiln
