//===- GroupOrder.h - where a group of ops can become one kernel -*- C++
//-*-===//
//
// A group of ops of one block becomes a kiln.fusion placed at its last op.
// That is only valid when nothing outside the group reads a member's result
// before that point.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_TRANSFORMS_GROUPORDER_H
#define KILN_COMPILER_TRANSFORMS_GROUPORDER_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::kiln {

/// Whether every user of `op`'s results outside `members` comes after
/// `point` in the block.
inline bool usersOutsideComeAfter(Operation *op,
                                  const llvm::SetVector<Operation *> &members,
                                  Operation *point) {
  for (Value result : op->getResults())
    for (Operation *user : result.getUsers())
      if (!members.contains(user) && !point->isBeforeInBlock(user))
        return false;
  return true;
}

} // namespace mlir::kiln

#endif // KILN_COMPILER_TRANSFORMS_GROUPORDER_H
