//===- ReductionFusion.cpp - reductions with prologue and epilogue --------===//
//
// Reductions seed groups from the last to the first, so that a reduction
// takes its prologue before an earlier reduction could take the same ops as
// its epilogue (the square of a gradient belongs to the norm that reads it,
// not to the reduction that produced the gradient). A group grows by
// producers (element-wise ops, and reductions a plan can join) and by
// users that read a reduction-dependent value or reduce again, kept only
// when the group still has a plan and can stand at its last op. Candidates
// are tried together and with all their producers first, so that a group
// of n ops takes a few plans rather than n (each plan costs O(n)). Groups
// of independent whole-tensor reductions are then merged.
//
//===----------------------------------------------------------------------===//

#include "compiler/transforms/ReductionFusion.h"

#include "compiler/transforms/GroupOrder.h"
#include "compiler/transforms/OpClasses.h"
#include "compiler/transforms/ReductionPlan.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <deque>

namespace mlir::kiln {
namespace {

using Members = llvm::SetVector<Operation *>;

class ReductionGrouper {
public:
  ReductionGrouper(func::FuncOp function,
                   llvm::function_ref<bool(Operation *)> claimed)
      : function(function), claimed(claimed) {
    markOptimizerOps();
  }

  std::vector<llvm::SmallVector<Operation *>> run() {
    Block &body = function.getBody().front();
    llvm::SmallVector<Operation *> seeds;
    for (Operation &op : body)
      if (isPrimitiveReduction(&op))
        seeds.push_back(&op);
    std::vector<Members> groups;
    for (Operation *seed : llvm::reverse(seeds)) {
      if (!available(seed))
        continue;
      Members group;
      group.insert(seed);
      if (!valid(group))
        continue; // left to the single-op reduction kernels
      grow(group);
      for (Operation *op : group)
        taken.insert(op);
      groups.push_back(std::move(group));
    }
    mergeWholeTensorGroups(groups);

    std::vector<llvm::SmallVector<Operation *>> result;
    for (Members &group : groups) {
      if (group.empty())
        continue;
      llvm::SmallVector<Operation *> ops(group.begin(), group.end());
      llvm::sort(ops, [](Operation *a, Operation *b) {
        return a->isBeforeInBlock(b);
      });
      result.push_back(std::move(ops));
    }
    // Block order of the groups' first ops, so the output is deterministic
    // and reads like the program.
    llvm::sort(result, [](const auto &a, const auto &b) {
      return a.front()->isBeforeInBlock(b.front());
    });
    return result;
  }

private:
  static Operation *firstOf(const Members &group) {
    return *llvm::min_element(group, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });
  }
  static Operation *lastOf(const Members &group) {
    return *llvm::max_element(group, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });
  }

  /// The element-wise ops that compute updated parameters and optimizer
  /// state (the backward slice of the results marked kiln.updates through
  /// element-wise ops): the optimizer kernel (step 4 of Fusion.cpp) takes
  /// them.
  void markOptimizerOps() { optimizerOps = optimizerUpdateOps(function); }

  bool available(Operation *op) const {
    return !taken.contains(op) && !claimed(op);
  }

  /// Whether `op` may join a reduction group: a reduction or an element-wise
  /// op (not a constant: constants are copied in). The optimizer's ops may
  /// as a prologue (`producer`: the f32 copy of a bf16 gradient, then
  /// stored for the optimizer as well); after the reductions only scalars
  /// computed from other ops (no arguments: the factor of a clip by global
  /// norm from the reductions and constants) may, and their producers come
  /// with them (tryAdd). The rest stays with the optimizer.
  bool joinable(Operation *op, bool producer = false) const {
    if (!available(op))
      return false;
    if (isPrimitiveReduction(op))
      return true;
    if (classify(op) != OpClass::Pointwise || isa<ConstantOp>(op))
      return false;
    if (producer || !optimizerOps.contains(op))
      return true;
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    return type.getNumElements() == 1 &&
           llvm::all_of(op->getOperands(),
                        [](Value v) { return v.getDefiningOp() != nullptr; });
  }

  /// The plan of `group` (its ops in block order, its values used outside
  /// as outputs); with `placed`, only when the group can also stand at its
  /// last op.
  static FailureOr<ReductionPlan> planOf(const Members &group, bool placed) {
    llvm::SmallVector<Operation *> ops(group.begin(), group.end());
    llvm::sort(
        ops, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
    llvm::SetVector<Value> outputs;
    for (Operation *op : ops) {
      if (placed && !usersOutsideComeAfter(op, group, ops.back()))
        return failure();
      for (Value result : op->getResults())
        if (llvm::any_of(result.getUsers(), [&](Operation *user) {
              return !group.contains(user);
            }))
          outputs.insert(result);
    }
    return planReduction(ops, outputs.getArrayRef());
  }

  /// Whether `group` can become one kernel standing at its last op.
  static bool valid(const Members &group) {
    return succeeded(planOf(group, /*placed=*/true));
  }

  /// Adds `op` with what must come along: the producers of an optimizer
  /// scalar (so that it only reads the group and constants), and the ops
  /// that read the group's values before its last op (they must join for
  /// the group to stand there: a reduction and the scalar op combining its
  /// result come in together).
  bool tryAdd(Members &group, Operation *op, bool producer) {
    return tryAdd(group, {{op, producer}});
  }
  /// The same for several ops at once, each with whether it comes as a
  /// producer.
  bool tryAdd(Members &group,
              llvm::ArrayRef<std::pair<Operation *, bool>> ops) {
    Members trial = group;
    llvm::SmallVector<std::pair<Operation *, bool>> pending(ops.begin(),
                                                            ops.end());
    while (!pending.empty()) {
      auto [next, asProducer] = pending.pop_back_val();
      if (trial.contains(next))
        continue;
      if (!joinable(next, asProducer))
        return false;
      trial.insert(next);
      if (optimizerOps.contains(next) && !asProducer)
        for (Value operand : next->getOperands()) {
          Operation *source = operand.getDefiningOp();
          if (!trial.contains(source) && !isa<ConstantOp>(source))
            pending.push_back({source, false});
        }
    }
    Operation *last = lastOf(trial);
    for (size_t i = 0; i < trial.size(); ++i)
      for (Operation *user : trial[i]->getUsers()) {
        if (trial.contains(user) || last->isBeforeInBlock(user))
          continue;
        if (!joinable(user))
          return false;
        trial.insert(user);
      }
    if (!valid(trial))
      return false;
    group = std::move(trial);
    return true;
  }

  /// `op` with the ops that may join before it: its producers, theirs, ...
  /// (a whole prologue tree, or a chain of scalar ops with the reductions
  /// it combines), stopping at ops that cannot join.
  llvm::SmallVector<std::pair<Operation *, bool>>
  withProducers(const Members &group, Operation *op, bool producer) const {
    llvm::SmallVector<std::pair<Operation *, bool>> slice = {{op, producer}};
    llvm::DenseSet<Operation *> seen = {op};
    for (size_t i = 0; i < slice.size(); ++i)
      for (Value operand : slice[i].first->getOperands()) {
        Operation *source = operand.getDefiningOp();
        if (!source || group.contains(source) || !joinable(source, true) ||
            (isPrimitiveReduction(source) && !mayShareAPlan(group, source)) ||
            !seen.insert(source).second)
          continue;
        slice.push_back({source, true});
      }
    return slice;
  }

  /// Values of `group` that use a reduction's result.
  static llvm::DenseSet<Value> reductionDependent(const Members &group) {
    llvm::SmallVector<Operation *> ops(group.begin(), group.end());
    llvm::sort(
        ops, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
    llvm::DenseSet<Value> dependent;
    for (Operation *op : ops)
      if (isPrimitiveReduction(op) ||
          llvm::any_of(op->getOperands(),
                       [&](Value v) { return dependent.contains(v); }))
        dependent.insert(op->getResult(0));
    return dependent;
  }

  /// Whether reduction `r` could share a plan with the group's reductions
  /// (checked before planning, which costs more).
  static bool mayShareAPlan(const Members &group, Operation *r) {
    return llvm::all_of(group, [&](Operation *member) {
      return !isPrimitiveReduction(member) ||
             reductionsMayShareAPlan(member, r);
    });
  }

  /// Grows `group` from the producers and users of its members, each op
  /// that joins bringing its own; once none is left, every member is looked
  /// at again (an op that joined may have made an earlier candidate valid),
  /// until nothing more joins.
  void grow(Members &group) {
    while (true) {
      size_t before = group.size();
      llvm::DenseSet<Value> dependent = reductionDependent(group);
      std::deque<std::pair<Operation *, bool>> queue; // op, as a producer
      llvm::DenseSet<Operation *> queued;
      auto consider = [&](Operation *op, bool producer) {
        if (group.contains(op) || !joinable(op, producer) ||
            (isPrimitiveReduction(op) && !mayShareAPlan(group, op)) ||
            !queued.insert(op).second)
          return;
        queue.push_back({op, producer});
      };
      auto discover = [&](Operation *member) {
        for (Value operand : member->getOperands())
          if (Operation *producer = operand.getDefiningOp())
            consider(producer, /*producer=*/true);
        bool prologue = !dependent.contains(member->getResult(0)) &&
                        !isPrimitiveReduction(member);
        for (Operation *user : member->getUsers())
          // Users of prologue values: only further reductions (siblings
          // reading the same elements), not unrelated element-wise work.
          if (!prologue || isPrimitiveReduction(user))
            consider(user, /*producer=*/false);
      };
      for (size_t i = 0, e = group.size(); i < e; ++i)
        discover(group[i]);
      auto joined = [&](size_t size) {
        for (size_t i = size; i < group.size(); ++i) {
          Operation *added = group[i];
          if (isPrimitiveReduction(added) ||
              llvm::any_of(added->getOperands(),
                           [&](Value v) { return dependent.contains(v); }))
            dependent.insert(added->getResult(0));
          discover(added);
        }
      };
      while (!queue.empty()) {
        // Every candidate found so far together first (siblings such as the
        // max |g| of every gradient come in at once), then one by one, each
        // with everything before it, else alone.
        std::vector<std::pair<Operation *, bool>> generation(queue.begin(),
                                                             queue.end());
        queue.clear();
        llvm::SmallVector<std::pair<Operation *, bool>> all;
        for (auto [op, producer] : generation)
          llvm::append_range(all, withProducers(group, op, producer));
        size_t size = group.size();
        if (generation.size() > 1 && tryAdd(group, all)) {
          joined(size);
          continue;
        }
        for (auto [op, producer] : generation) {
          size = group.size();
          if (group.contains(op) ||
              (!tryAdd(group, withProducers(group, op, producer)) &&
               !tryAdd(group, op, producer)))
            continue;
          joined(size);
        }
      }
      if (group.size() == before)
        return;
    }
  }

  /// Whether `group` only holds independent whole-tensor reductions (and the
  /// ops around them), so that it can share a multi-tensor kernel.
  static bool wholeTensor(const Members &group) {
    FailureOr<ReductionPlan> plan = planOf(group, /*placed=*/false);
    if (failed(plan) || plan->numStages != 1 || plan->needsRowKernel)
      return false;
    return llvm::all_of(plan->spaces,
                        [](const ReductionSpace &s) { return s.rows() == 1; });
  }

  /// Merges groups of whole-tensor reductions, in block order, into as few
  /// groups as the plan and the block order allow.
  void mergeWholeTensorGroups(std::vector<Members> &groups) {
    llvm::SmallVector<Members *> whole;
    for (Members &group : groups)
      if (wholeTensor(group))
        whole.push_back(&group);
    llvm::sort(whole, [](Members *a, Members *b) {
      return firstOf(*a)->isBeforeInBlock(firstOf(*b));
    });
    llvm::SmallVector<Members *> merged;
    for (Members *group : whole) {
      bool done = false;
      for (Members *into : merged) {
        Members both = *into;
        both.insert(group->begin(), group->end());
        if (!valid(both))
          continue;
        *into = std::move(both);
        group->clear();
        done = true;
        break;
      }
      if (!done)
        merged.push_back(group);
    }
  }

  func::FuncOp function;
  llvm::function_ref<bool(Operation *)> claimed;
  llvm::DenseSet<Operation *> optimizerOps;
  llvm::DenseSet<Operation *> taken;
};

} // namespace

std::vector<llvm::SmallVector<Operation *>>
formReductionGroups(func::FuncOp function,
                    llvm::function_ref<bool(Operation *)> claimed) {
  if (function.isExternal())
    return {};
  return ReductionGrouper(function, claimed).run();
}

} // namespace mlir::kiln
