//===- Fusion.cpp - grouping ops into kernels -----------------------------===//
//
// Groups are formed in steps over each function's single block:
//  0. every attention op takes the transposes between it and memory that
//     keep the head dim innermost (AttentionLayouts.cpp);
//  1. every matmul, and every convolution, takes the chain of same-shaped
//     element-wise ops that consume its result as an epilogue, with the
//     element-wise side computations only they need (GemmEpilogues.cpp);
//  1b. a cross entropy and its gradient of the same logits share one
//     kernel (LossGradients.cpp); primitive reductions take their prologue and epilogue element-wise
//     ops, and independent whole-tensor reductions share one kernel
//     (ReductionFusion.cpp);
//  2. walking backwards, every remaining compute op roots a group; a
//     pointwise root absorbs its element-wise producers when everything that
//     uses them is in the group or comes after the root (then the value
//     becomes an extra result of the fusion), and the producers of what
//     index-remapping ops read when nothing else uses them
//     (RemapChains.cpp), while the group's tensors fit one kernel
//     (KernelBudget.h); a constant that some kernel must read from memory,
//     and a view returned as a gradient or update (results with buffers of
//     their own), root groups too;
//  3. in the training entries, the pointwise groups that produce the updated
//     parameters and optimizer state, and the scalar groups that only feed
//     them, merge into one multi-tensor optimizer kernel (each that nothing
//     outside reads before the kernel's place);
//  4. independent groups that one kernel can run merge horizontally: gemms
//     of one shape sharing an operand, and pointwise groups
//     (HorizontalFusion.cpp).
// Each group then becomes a kiln.fusion placed at its last op.
//
//===----------------------------------------------------------------------===//

#include "compiler/transforms/Fusion.h"

#include "compiler/transforms/FusionSteps.h"
#include "compiler/transforms/KernelBudget.h"
#include "compiler/transforms/OpClasses.h"
#include "compiler/transforms/ReductionFusion.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

#include <algorithm>
#include <memory>

namespace mlir::kiln {

#define GEN_PASS_DEF_KILNFUSE
#include "compiler/transforms/Passes.h.inc"

/// Whether a kernel of `group` evaluates a constant operand of `user` in
/// place (element-wise code and composed reductions do), so that the fusion
/// takes a copy of the constant instead of reading it from a buffer.
static bool inlinesConstant(Operation *user, const Group *group,
                            Operation *constant) {
  if (!group)
    return false;
  // The recurrent kernels take a splat initial state and a zero gradient of
  // a result the loss does not use as values, not as memory.
  if (isa<RnnOp, RnnBackwardOp>(user)) {
    auto value =
        dyn_cast<DenseElementsAttr>(cast<ConstantOp>(constant).getValue());
    if (!value || !value.isSplat() || !isa<FloatType>(value.getElementType()))
      return false;
    bool zero = value.getSplatValue<APFloat>().isZero();
    return llvm::all_of(user->getOpOperands(), [&](OpOperand &use) {
      if (use.get().getDefiningOp() != constant)
        return true;
      unsigned i = use.getOperandNumber();
      return i == 3 || (isa<RnnBackwardOp>(user) && (i == 5 || i == 6) && zero);
    });
  }
  OpClass userClass = classify(user);
  return userClass == OpClass::Pointwise || userClass == OpClass::Gather ||
         (userClass == OpClass::Reduction && group->ops.size() > 1);
}

/// Whether result `i` of `function` lives in a buffer of its own: a
/// gradient or an update of a parameter or of state.
static bool hasOwnBuffer(func::FuncOp function, unsigned i) {
  auto role =
      function.getResultAttrOfType<StringAttr>(i, KilnDialect::kRoleAttrName);
  return (role && role.getValue() == "gradient") ||
         function.getResultAttr(i, KilnDialect::kUpdatesAttrName);
}

/// Whether the function returns `op`'s result as one that lives in a buffer
/// of its own.
static bool isReturnedToOwnBuffer(Operation &op) {
  auto function = op.getParentOfType<func::FuncOp>();
  for (OpOperand &use : op.getUses())
    if (isa<func::ReturnOp>(use.getOwner()) &&
        hasOwnBuffer(function, use.getOperandNumber()))
      return true;
  return false;
}

/// Gives every result that lives in a buffer of its own a value of its own,
/// computed by a kernel that writes it there: an argument, or a value
/// returned so twice (the gradients of both operands of `a + b` are one
/// value), is returned through a reshape to its own type, which step 2
/// makes a kernel of.
static void separateOwnBufferResults(func::FuncOp function) {
  Operation *terminator = function.getBody().front().getTerminator();
  OpBuilder builder(terminator);
  llvm::DenseSet<Value> returned;
  for (OpOperand &operand : terminator->getOpOperands()) {
    Value value = operand.get();
    if (!hasOwnBuffer(function, operand.getOperandNumber()) ||
        (!isa<BlockArgument>(value) && returned.insert(value).second))
      continue;
    operand.set(builder.create<ReshapeOp>(value.getLoc(), value.getType(),
                                          value));
  }
}

/// Step 2: pointwise trees and single-op groups, walking backwards.
static void formRemainingGroups(func::FuncOp function, Grouping &grouping) {
  Block &body = function.getBody().front();
  llvm::SmallPtrSet<Value, 4> updatedInPlace =
      argumentsUpdatedInPlace(function);
  llvm::DenseSet<Operation *> updateOps = optimizerUpdateOps(function);
  for (Operation &op : llvm::reverse(body)) {
    OpClass opClass = classify(&op);
    if (grouping.of(&op) || opClass == OpClass::Other || op.use_empty())
      continue;
    // A view is an alias of its operand, unless the function returns it as
    // a gradient or an update, which live in buffers of their own: then a
    // kernel computes it there.
    if (opClass == OpClass::View && !isReturnedToOwnBuffer(op))
      continue;
    // Constants are copied into the regions that use them. One that a
    // kernel reads from memory (a loss gradient's seed, the zero gradient of
    // a parameter the loss does not use) is filled by a kernel of its own.
    if (isa<ConstantOp>(op) && llvm::all_of(op.getUsers(), [&](Operation *u) {
          return inlinesConstant(u, grouping.of(u), &op);
        }))
      continue;
    Group *group = grouping.create(fusionKindOf(&op), &op);
    if (opClass != OpClass::Pointwise && opClass != OpClass::Gather &&
        opClass != OpClass::View)
      continue;
    // (member, whether the kernel evaluates it at remapped positions: below
    // an index-remapping op, where it cannot also be a result).
    SmallVector<std::pair<Operation *, bool>> worklist = {{&op, false}};
    int64_t fanOut = 1;
    while (!worklist.empty()) {
      auto [member, remapped] = worklist.pop_back_val();
      bool remaps = remapsOperands(member);
      for (Value operand : member->getOperands()) {
        Operation *producer = operand.getDefiningOp();
        if (!producer || grouping.of(producer) || isa<ConstantOp>(producer))
          continue;
        OpClass producerClass = classify(producer);
        if (producerClass != OpClass::Pointwise &&
            producerClass != OpClass::Gather && producerClass != OpClass::View)
          continue;
        if (!fitsKernelBudget(group->kind, group->ops, {producer}))
          continue;
        // An update's element-wise operand that reads a parameter another
        // update overwrites in place, in another shape, is computed before
        // the updates, in a kernel of its own: in the updates' kernel the
        // threads of one shape would read what those of the other overwrite
        // (p' = p - f(view of q) beside q' = q - g(view of p): either order
        // reads a new value).
        if (updateOps.contains(producer) &&
            readsThroughView(producer, updatedInPlace))
          continue;
        if (remaps || remapped) {
          if (!canComputeAtRemappedPositions(producer, member, *group, fanOut))
            continue;
        } else if (producerClass == OpClass::View ||
                   !usersOutsideComeAfter(producer, *group, &op)) {
          continue;
        }
        grouping.add(group, producer);
        worklist.push_back({producer, remaps || remapped});
      }
    }
  }
}

/// Step 3: one optimizer kernel for the parameter and state updates.
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
  // such as bias corrections) join them, unless they read, through a view,
  // a parameter that an update overwrites (step 2 left them out for that).
  llvm::SmallPtrSet<Value, 4> updatedInPlace =
      argumentsUpdatedInPlace(function);
  bool changed = true;
  while (changed) {
    changed = false;
    for (Group *group : grouping.all()) {
      if (update.contains(group) || group->kind != "pointwise" ||
          llvm::any_of(group->ops, [&](Operation *op) {
            return readsThroughView(op, updatedInPlace);
          }))
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
  // The kernel stands at the last op of the latest group. A group joins it
  // only when nothing outside reads its values before that point: a view of
  // one update that another update reads leaves its producer a kernel of its
  // own, which runs first.
  SmallVector<Group *> candidates(update.begin(), update.end());
  llvm::sort(candidates, [](Group *a, Group *b) {
    return a->last()->isBeforeInBlock(b->last());
  });
  Group *merged = candidates.pop_back_val();
  bool joined = true, any = false;
  while (joined) {
    joined = false;
    for (Group *group : llvm::reverse(candidates))
      if (!group->ops.empty() && canJoin(*group, *merged)) {
        grouping.merge(merged, group);
        joined = any = true;
      }
  }
  if (any)
    merged->kind = "optimizer";
}

/// Whether a kernel writes `result` even when nothing outside its group reads
/// it: the attention kernels always write the attention's output (none
/// computes the row log-sum-exp alone), so the fusion yields it into a buffer
/// of its own.
static bool isAlwaysWritten(Value result) {
  auto attention = result.getDefiningOp<AttentionOp>();
  return attention && result == attention.getResult();
}

/// Replaces the ops of `group` by one kiln.fusion at its last op.
static void materialize(const Group &group) {
  SmallVector<Operation *> ops(group.ops.begin(), group.ops.end());
  llvm::sort(ops,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  Operation *last = ops.back();
  llvm::SetVector<Value> inputs, outputs;
  llvm::SetVector<Operation *> constants;
  for (Operation *op : ops) {
    for (Value operand : op->getOperands()) {
      Operation *producer = operand.getDefiningOp();
      if (producer && group.ops.contains(producer))
        continue;
      if (producer && isa<ConstantOp>(producer) &&
          inlinesConstant(op, &group, producer))
        constants.insert(producer);
      else
        inputs.insert(operand);
    }
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUsers(),
                       [&](Operation *user) {
                         return !group.ops.contains(user);
                       }) ||
          (result.use_empty() && isAlwaysWritten(result)))
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
  llvm::DenseMap<Value, Value> argumentOf;
  for (Value input : inputs) {
    argumentOf[input] = block->addArgument(input.getType(), input.getLoc());
    mapping.map(input, argumentOf[input]);
  }
  OpBuilder inner = OpBuilder::atBlockEnd(block);
  // A constant that one member evaluates in place and another reads from
  // memory (a matmul by a constant whose epilogue uses it too) is both a
  // copy and an input: each member gets the one it takes.
  llvm::DenseMap<Operation *, Operation *> copies;
  for (Operation *constant : constants)
    copies[constant] = inner.clone(*constant);
  for (Operation *op : ops) {
    for (Value operand : op->getOperands()) {
      Operation *copy = copies.lookup(operand.getDefiningOp());
      if (!copy)
        continue;
      mapping.map(operand,
                  inlinesConstant(op, &group, operand.getDefiningOp())
                      ? copy->getResult(0)
                      : argumentOf.lookup(operand));
    }
    inner.clone(*op, mapping);
  }
  SmallVector<Value> yielded;
  for (Value v : outputs)
    yielded.push_back(mapping.lookup(v));
  inner.create<YieldOp>(last->getLoc(), yielded);

  for (auto [index, original] : llvm::enumerate(outputs))
    Value(original).replaceUsesWithIf(
        fusion.getResult(index),
        [&](OpOperand &use) { return !group.ops.contains(use.getOwner()); });
  for (Operation *op : llvm::reverse(ops))
    op->erase();
}

LogicalResult fuseFunction(func::FuncOp function) {
  if (function.isExternal())
    return success();
  Block &body = function.getBody().front();
  // Unused results of side-effect-free ops would otherwise stay outside every
  // kernel (nothing consumes them into a group).
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
    if (isOpTriviallyDead(&op))
      op.erase();
  separateOwnBufferResults(function);
  foldTransposedOperands(body);
  rewriteOuterProducts(body);
  rewriteVectorProducts(body);
  pairAttentionRowLse(body);
  sinkViews(body);
  Grouping grouping;
  formAttentionGroups(body, grouping);
  formGemmGroups(function, grouping);
  formConvGroups(function, grouping);
  formLossGradientGroups(body, grouping);
  for (llvm::ArrayRef<Operation *> ops :
       formReductionGroups(function, [&](Operation *op) {
         return grouping.of(op) != nullptr;
       })) {
    Group *group = grouping.create("reduction", ops.front());
    for (Operation *op : ops.drop_front())
      grouping.add(group, op);
  }
  formRemainingGroups(function, grouping);
  formOptimizerGroup(function, grouping);
  mergeHorizontalGroups(function, grouping);
  // Constants that fill a buffer of their own go last, so that the kernels
  // that inline them still find the constant op.
  std::vector<Group *> groups = grouping.all();
  std::stable_partition(groups.begin(), groups.end(), [](Group *group) {
    return !llvm::all_of(group->ops,
                         [](Operation *op) { return isa<ConstantOp>(op); });
  });
  for (Group *group : groups)
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
