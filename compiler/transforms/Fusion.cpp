//===- Fusion.cpp - grouping ops into kernels -----------------------------===//
//
// Groups are formed in three steps over each function's single block:
//  1. every matmul takes the chain of same-shaped element-wise ops that
//     consume its result as an epilogue;
//  2. primitive reductions take their prologue and epilogue element-wise
//     ops, and independent whole-tensor reductions share one kernel
//     (ReductionFusion.cpp);
//  3. walking backwards, every remaining compute op roots a group; a
//     pointwise root absorbs its element-wise producers when everything that
//     uses them is in the group or comes after the root (then the value
//     becomes an extra result of the fusion);
//  4. in the training entries, the pointwise groups that produce the updated
//     parameters and optimizer state, and the scalar groups that only feed
//     them, merge into one multi-tensor optimizer kernel.
// Each group then becomes a kiln.fusion placed at its last op.
//
//===----------------------------------------------------------------------===//

#include "compiler/transforms/Fusion.h"

#include "compiler/transforms/GroupOrder.h"
#include "compiler/transforms/OpClasses.h"
#include "compiler/transforms/ReductionFusion.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

#include <memory>

namespace mlir::kiln {

#define GEN_PASS_DEF_KILNFUSE
#include "compiler/transforms/Passes.h.inc"

namespace {

struct Group {
  std::string kind;
  llvm::SetVector<Operation *> ops;
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

} // namespace

/// Whether every user of `op`'s results outside `group` comes after `point`.
static bool usersOutsideComeAfter(Operation *op, const Group &group,
                                  Operation *point) {
  return usersOutsideComeAfter(op, group.ops, point);
}

static RankedTensorType tensorType(Value v) {
  return dyn_cast<RankedTensorType>(v.getType());
}

/// Step 1: matmul epilogues.
static void formGemmGroups(Block &body, Grouping &grouping) {
  for (Operation &op : body) {
    auto matmul = dyn_cast<MatmulOp>(op);
    if (!matmul || grouping.of(matmul))
      continue;
    Group *group = grouping.create("gemm", matmul);
    Operation *tail = matmul;
    RankedTensorType shape = matmul.getType();
    while (true) {
      Operation *next = nullptr;
      for (Operation *user : tail->getResult(0).getUsers())
        if (classify(user) == OpClass::Pointwise && !grouping.of(user) &&
            user->getNumResults() == 1 &&
            tensorType(user->getResult(0)).getShape() == shape.getShape() &&
            (!next || user->isBeforeInBlock(next)))
          next = user;
      if (!next || isa<ConstantOp, IotaOp, RandomUniformOp, RandomNormalOp>(next))
        break;
      // Epilogue operands are read from buffers; an op that needs a constant
      // (e.g. an optimizer's scaling) is left to the pointwise kernels.
      if (llvm::any_of(next->getOperands(), [](Value v) {
            return v.getDefiningOp<ConstantOp>() != nullptr;
          }))
        break;
      // Every value computed so far that is used outside must be used after
      // the new tail, where the fusion will stand.
      group->ops.insert(next);
      bool ok = llvm::all_of(group->ops, [&](Operation *member) {
        return usersOutsideComeAfter(member, *group, next);
      });
      group->ops.remove(next);
      if (!ok)
        break;
      grouping.add(group, next);
      tail = next;
    }
  }
}

/// Step 3: pointwise trees and single-op groups, walking backwards.
static void formRemainingGroups(Block &body, Grouping &grouping) {
  for (Operation &op : llvm::reverse(body)) {
    OpClass opClass = classify(&op);
    if (grouping.of(&op) || opClass == OpClass::View ||
        opClass == OpClass::Other || op.use_empty())
      continue;
    // Constants are copied into the regions that use them.
    if (isa<ConstantOp>(op))
      continue;
    Group *group = grouping.create(fusionKindOf(&op), &op);
    if (opClass != OpClass::Pointwise && opClass != OpClass::Gather)
      continue;
    SmallVector<Operation *> worklist = {&op};
    while (!worklist.empty()) {
      Operation *member = worklist.pop_back_val();
      // Index-remapping ops read their operands from memory.
      if (classify(member) == OpClass::Gather)
        continue;
      for (Value operand : member->getOperands()) {
        Operation *producer = operand.getDefiningOp();
        if (!producer || grouping.of(producer) || isa<ConstantOp>(producer))
          continue;
        OpClass producerClass = classify(producer);
        if (producerClass != OpClass::Pointwise && producerClass != OpClass::Gather)
          continue;
        if (!usersOutsideComeAfter(producer, *group, &op))
          continue;
        grouping.add(group, producer);
        worklist.push_back(producer);
      }
    }
  }
}

/// Step 4: one optimizer kernel for the parameter and state updates.
static void formOptimizerGroup(func::FuncOp function, Grouping &grouping) {
  Block &body = function.getBody().front();
  Operation *terminator = body.getTerminator();
  llvm::SetVector<Group *> update;
  for (unsigned i = 0, e = terminator->getNumOperands(); i < e; ++i) {
    if (!function.getResultAttr(i, KilnDialect::kUpdatesAttrName))
      continue;
    Operation *producer = terminator->getOperand(i).getDefiningOp();
    Group *group = producer ? grouping.of(producer) : nullptr;
    if (group && group->kind == "pointwise")
      update.insert(group);
  }
  if (update.size() < 2)
    return;
  // Pointwise groups whose results feed only update groups (shared scalars
  // such as bias corrections) join them.
  bool changed = true;
  while (changed) {
    changed = false;
    for (Group *group : grouping.all()) {
      if (update.contains(group) || group->kind != "pointwise")
        continue;
      bool feedsOnlyUpdate = true, feedsAny = false;
      for (Operation *op : group->ops)
        for (Operation *user : op->getUsers()) {
          if (group->ops.contains(user))
            continue;
          Group *userGroup = grouping.of(user);
          feedsAny = true;
          feedsOnlyUpdate &= userGroup && update.contains(userGroup);
        }
      if (feedsAny && feedsOnlyUpdate) {
        update.insert(group);
        changed = true;
      }
    }
  }
  Group *merged = update.front();
  for (Group *group : update)
    if (group != merged)
      grouping.merge(merged, group);
  merged->kind = "optimizer";
}

/// Replaces the ops of `group` by one kiln.fusion at its last op.
static void materialize(const Group &group) {
  SmallVector<Operation *> ops(group.ops.begin(), group.ops.end());
  llvm::sort(ops, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  Operation *last = ops.back();
  llvm::SetVector<Value> inputs, outputs;
  llvm::SetVector<Operation *> constants;
  for (Operation *op : ops) {
    for (Value operand : op->getOperands()) {
      Operation *producer = operand.getDefiningOp();
      if (producer && group.ops.contains(producer))
        continue;
      if (producer && isa<ConstantOp>(producer))
        constants.insert(producer);
      else
        inputs.insert(operand);
    }
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUsers(), [&](Operation *user) {
            return !group.ops.contains(user);
          }))
        outputs.insert(result);
  }

  OpBuilder builder(last);
  SmallVector<Type> resultTypes;
  for (Value v : outputs)
    resultTypes.push_back(v.getType());
  auto fusion = builder.create<FusionOp>(last->getLoc(), resultTypes,
                                         builder.getStringAttr(group.kind),
                                         inputs.getArrayRef());
  Block *block = new Block();
  fusion.getBody().push_back(block);
  IRMapping mapping;
  for (Value input : inputs)
    mapping.map(input, block->addArgument(input.getType(), input.getLoc()));
  OpBuilder inner = OpBuilder::atBlockEnd(block);
  for (Operation *constant : constants)
    inner.clone(*constant, mapping);
  for (Operation *op : ops)
    inner.clone(*op, mapping);
  SmallVector<Value> yielded;
  for (Value v : outputs)
    yielded.push_back(mapping.lookup(v));
  inner.create<YieldOp>(last->getLoc(), yielded);

  for (auto [index, original] : llvm::enumerate(outputs))
    Value(original).replaceUsesWithIf(fusion.getResult(index), [&](OpOperand &use) {
      return !group.ops.contains(use.getOwner());
    });
  for (Operation *op : llvm::reverse(ops))
    op->erase();
}

LogicalResult fuseFunction(func::FuncOp function) {
  if (function.isExternal())
    return success();
  Block &body = function.getBody().front();
  Grouping grouping;
  formGemmGroups(body, grouping);
  for (llvm::ArrayRef<Operation *> ops : formReductionGroups(
           function, [&](Operation *op) { return grouping.of(op) != nullptr; })) {
    Group *group = grouping.create("reduction", ops.front());
    for (Operation *op : ops.drop_front())
      grouping.add(group, op);
  }
  formRemainingGroups(body, grouping);
  formOptimizerGroup(function, grouping);
  for (Group *group : grouping.all())
    materialize(*group);
  // Constants now copied into every region that used them.
  for (Operation &op : llvm::make_early_inc_range(body))
    if (isa<ConstantOp>(op) && op.use_empty())
      op.erase();
  return success();
}

namespace {
struct FusePass : public impl::KilnFuseBase<FusePass> {
  void runOnOperation() override {
    for (auto function : getOperation().getOps<func::FuncOp>())
      if (failed(fuseFunction(function)))
        return signalPassFailure();
  }
};
} // namespace

} // namespace mlir::kiln
