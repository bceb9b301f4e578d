//===- FusionGroups.h - groups of ops that become one kernel ----*- C++ -*-===//
//
// The bookkeeping the grouping steps of --kiln-fuse share (Fusion.cpp and the
// steps in files of their own): which ops form each group, which group owns
// an op, and the placement rule of a group (its kiln.fusion stands at its
// last op, so every value it computes that is used outside must be used
// after that point).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_TRANSFORMS_FUSIONGROUPS_H
#define KILN_COMPILER_TRANSFORMS_FUSIONGROUPS_H

#include "compiler/transforms/GroupOrder.h"

#include "mlir/IR/Block.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringRef.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir::kiln {

struct Group {
  std::string kind;
  llvm::SetVector<Operation *> ops;

  /// The member that comes last in the block (where the fusion will stand).
  Operation *last() const {
    Operation *result = nullptr;
    for (Operation *op : ops)
      if (!result || result->isBeforeInBlock(op))
        result = op;
    return result;
  }
};

/// Group membership of the ops of one block.
class Grouping {
public:
  Group *create(llvm::StringRef kind, Operation *first) {
    groups.push_back(std::make_unique<Group>());
    Group *group = groups.back().get();
    group->kind = kind.str();
    add(group, first);
    return group;
  }
  void add(Group *group, Operation *op) {
    group->ops.insert(op);
    owner[op] = group;
  }
  Group *of(Operation *op) const { return owner.lookup(op); }
  /// Moves every op of `from` into `into`.
  void merge(Group *into, Group *from) {
    for (Operation *op : from->ops)
      add(into, op);
    from->ops.clear();
  }
  std::vector<Group *> all() const {
    std::vector<Group *> result;
    for (const auto &g : groups)
      if (!g->ops.empty())
        result.push_back(g.get());
    return result;
  }

private:
  std::vector<std::unique_ptr<Group>> groups;
  llvm::DenseMap<Operation *, Group *> owner;
};

/// Whether every user of `op`'s results outside `group` comes after `point`.
inline bool usersOutsideComeAfter(Operation *op, const Group &group,
                                  Operation *point) {
  return usersOutsideComeAfter(op, group.ops, point);
}

/// Whether `earlier` may move to the last op of `later` and join it: nothing
/// outside the two reads a value of `earlier` before that point.
inline bool canJoin(const Group &earlier, const Group &later) {
  Operation *point = later.last();
  if (point->isBeforeInBlock(earlier.last()))
    return false;
  Group merged;
  merged.ops = earlier.ops;
  merged.ops.insert(later.ops.begin(), later.ops.end());
  return llvm::all_of(earlier.ops, [&](Operation *op) {
    return usersOutsideComeAfter(op, merged, point);
  });
}

} // namespace mlir::kiln

#endif // KILN_COMPILER_TRANSFORMS_FUSIONGROUPS_H
