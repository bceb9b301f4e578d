//===- GemmEpilogues.cpp - matmuls and convolutions with their epilogues -===//
//
// Every matmul roots a gemm group, and every convolution (forward, input
// or filter gradient) a conv group, and takes, one after the other, the
// element-wise ops that consume its result (bias, activation, residual,
// cast, a loss gradient) as its epilogue. An epilogue op's other operands
// are read from buffers, or, when only the epilogue needs them, computed per
// element inside it from their own operands and constants (e.g. the
// derivative of GELU that multiplies the gradient of an MLP's input). Ops
// that stand between the matmul and the next epilogue op and use the values
// computed so far, but feed nothing before that op (a loss reduction), move
// below it, so that the fusion can stand at its last op. An epilogue ends
// where its tensors would no longer fit one kernel (KernelBudget.h).
//
// A sum of products of matmuls of one shape that nothing else uses roots
// one group: one product over their concatenated K (the gradient of an
// input read by several projections is one launch).
//
// A forward convolution's group then takes a training-mode batch norm over
// the output channels of its last value, when that value is also needed
// elsewhere (the batch norm's gradient reads it, so it is stored anyway):
// the convolution's kernel can then take the batch statistics of the tiles
// it stores, which spares batch norm a pass over the activation.
//
// Epilogues do not reach into an optimizer's update (the element-wise ops
// that produce updated parameters and state): those join the multi-tensor
// optimizer kernel.
//
//===----------------------------------------------------------------------===//

#include "compiler/transforms/FusionSteps.h"
#include "compiler/transforms/KernelBudget.h"

#include "compiler/transforms/OpClasses.h"
#include "dialects/kiln/IR/KilnDialect.h"
#include "dialects/kiln/Utils/ShapeInference.h"

#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::kiln {
namespace {

RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

bool isFloat(Type type) {
  return type.isF32() || type.isBF16() || type.isF16();
}

/// The ops that compute `value` element-wise and that only `group` (with
/// the ops found so far) uses, in no particular order: the epilogue can
/// compute them per element. Values of other shapes must broadcast to
/// `shape`.
SmallVector<Operation *> sideTree(Value value, const Group &group,
                                  const Grouping &grouping,
                                  ArrayRef<int64_t> shape,
                                  const llvm::DenseSet<Operation *> &update) {
  SmallVector<Operation *> tree;
  llvm::SmallPtrSet<Operation *, 16> inTree;
  SmallVector<Value> worklist = {value};
  while (!worklist.empty()) {
    Operation *producer = worklist.pop_back_val().getDefiningOp();
    if (!producer || inTree.contains(producer) || grouping.of(producer) ||
        group.ops.contains(producer) || isa<ConstantOp>(producer) ||
        classify(producer) != OpClass::Pointwise || update.contains(producer) ||
        producer->getNumResults() != 1 ||
        !isBroadcastableTo(tensorType(producer->getResult(0)).getShape(),
                           shape))
      continue;
    // Only the epilogue may use it: the product (matmul, convolution) and
    // batch norm read their operands from memory, so a value they read
    // stays outside (the input of a residual block, cast for the product
    // and added after it, is read twice).
    if (llvm::any_of(producer->getUsers(), [&](Operation *user) {
          return !inTree.contains(user) &&
                 (!group.ops.contains(user) ||
                  classify(user) != OpClass::Pointwise);
        }))
      continue;
    tree.push_back(producer);
    inTree.insert(producer);
    for (Value operand : producer->getOperands())
      worklist.push_back(operand);
  }
  return tree;
}

/// Moves the ops in `blocking`, and the ops before `point` that use them,
/// right after `point` (keeping their order), if none of them is grouped or
/// feeds `group`. Returns whether it did.
bool sinkBelow(SmallVector<Operation *> blocking, Operation *point,
               const Group &group, const Grouping &grouping) {
  llvm::SetVector<Operation *> moving(blocking.begin(), blocking.end());
  for (size_t i = 0; i < moving.size(); ++i) {
    Operation *op = moving[i];
    if (grouping.of(op) || group.ops.contains(op) ||
        op->hasTrait<OpTrait::IsTerminator>())
      return false;
    for (Operation *user : op->getUsers())
      if (!point->isBeforeInBlock(user))
        moving.insert(user);
  }
  SmallVector<Operation *> ordered(moving.begin(), moving.end());
  llvm::sort(ordered,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  Operation *after = point;
  for (Operation *op : ordered) {
    op->moveAfter(after);
    after = op;
  }
  return true;
}

/// The matmuls and adds of the sum of products rooted at `root` when they
/// can be one product over the concatenated K of the matmuls: every matmul
/// of one problem shape, every product and partial sum used once, none
/// grouped yet. Empty otherwise.
SmallVector<Operation *> sumOfProducts(Operation *root,
                                       const Grouping &grouping) {
  SmallVector<Operation *> ops;
  MatmulOp first;
  SmallVector<Operation *> worklist = {root};
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (grouping.of(op) || (op != root && !op->getResult(0).hasOneUse()))
      return {};
    ops.push_back(op);
    if (auto matmul = dyn_cast<MatmulOp>(op)) {
      first = first ? first : matmul;
      if (matmul.getType() != first.getType() ||
          matmul.getLhs().getType() != first.getLhs().getType() ||
          matmul.getRhs().getType() != first.getRhs().getType() ||
          matmul.getTransposeLhs() != first.getTransposeLhs() ||
          matmul.getTransposeRhs() != first.getTransposeRhs())
        return {};
      continue;
    }
    for (Value operand : op->getOperands())
      worklist.push_back(operand.getDefiningOp());
  }
  return ops;
}

/// Tries to extend `group` (ending at `tail`) by `next` and, with
/// `sideTrees`, the side trees of its other operands.
bool extendEpilogue(Group &group, Grouping &grouping, Operation *next,
                    ArrayRef<int64_t> shape,
                    const llvm::DenseSet<Operation *> &update,
                    bool sideTrees = true) {
  SmallVector<Operation *> side;
  group.ops.insert(next);
  for (Value operand : next->getOperands())
    if (sideTrees && !group.ops.contains(operand.getDefiningOp()))
      for (Operation *op : sideTree(operand, group, grouping, shape, update)) {
        side.push_back(op);
        group.ops.insert(op);
      }
  // Users outside the group that come before the new tail must move below
  // it (or the group cannot stand there).
  SmallVector<Operation *> blocking;
  for (Operation *member : group.ops)
    for (Operation *user : member->getUsers())
      if (!group.ops.contains(user) && !next->isBeforeInBlock(user) &&
          !llvm::is_contained(blocking, user))
        blocking.push_back(user);
  bool sunk = fitsKernelBudget(group.kind, group.ops) &&
              (blocking.empty() || sinkBelow(blocking, next, group, grouping));
  group.ops.remove(next);
  for (Operation *op : side)
    group.ops.remove(op);
  if (!sunk)
    return false;
  grouping.add(&group, next);
  for (Operation *op : side)
    grouping.add(&group, op);
  return true;
}

/// Extends `group`, rooted at `root`, by the chain of element-wise ops that
/// consume its result (each keeping its shape and storing a float); returns
/// the last op of the chain.
Operation *takeEpilogue(Group &group, Grouping &grouping, Operation *root,
                        const llvm::DenseSet<Operation *> &update) {
  Operation *tail = root;
  ArrayRef<int64_t> shape = tensorType(root->getResult(0)).getShape();
  while (true) {
    // The first element-wise consumer of the tail that keeps the
    // product's shape and stores a float.
    Operation *next = nullptr;
    for (Operation *user : tail->getResult(0).getUsers())
      if (classify(user) == OpClass::Pointwise && !grouping.of(user) &&
          user->getNumResults() == 1 &&
          tensorType(user->getResult(0)).getShape() == shape &&
          isFloat(tensorType(user->getResult(0)).getElementType()) &&
          (!next || user->isBeforeInBlock(next)))
        next = user;
    if (!next || isa<IotaOp, RandomUniformOp, RandomNormalOp>(next) ||
        update.contains(next) ||
        !extendEpilogue(group, grouping, next, shape, update))
      break;
    tail = next;
  }
  return tail;
}

/// Extends the group of the forward convolution `conv`, ending at `tail`,
/// by a training batch norm over the output channels of `tail`'s result
/// that something outside the group also reads. The batch norm's other
/// operands stay buffers the kernels read; one computed from the group's
/// values blocks it (its producers cannot move below the batch norm).
void takeBatchNorm(Group &group, Grouping &grouping, Conv2dOp conv,
                   Operation *tail, const llvm::DenseSet<Operation *> &update) {
  Value value = tail->getResult(0);
  int64_t channelDim = conv.getLayout() == ConvLayout::nhwc ? 3 : 1;
  BatchNormOp norm;
  bool readElsewhere = false;
  for (Operation *user : value.getUsers()) {
    auto candidate = dyn_cast<BatchNormOp>(user);
    if (candidate && !norm && candidate.getInput() == value &&
        !candidate.getEval() && !grouping.of(user) &&
        candidate.getDimAttr().getInt() == channelDim)
      norm = candidate;
    else if (!group.ops.contains(user))
      readElsewhere = true;
  }
  if (norm && readElsewhere && !update.contains(norm))
    extendEpilogue(group, grouping, norm, tensorType(value).getShape(), update,
                   /*sideTrees=*/false);
}

} // namespace

llvm::DenseSet<Operation *> sumsOfProducts(Block &body) {
  llvm::DenseSet<Operation *> sums;
  for (Operation &op : body)
    if (isa<AddOp>(op) && llvm::all_of(op.getOperands(), [&](Value operand) {
          Operation *producer = operand.getDefiningOp();
          return producer &&
                 (isa<MatmulOp>(producer) || sums.contains(producer));
        }))
      sums.insert(&op);
  return sums;
}

void formGemmGroups(func::FuncOp function, Grouping &grouping) {
  Block &body = function.getBody().front();
  llvm::DenseSet<Operation *> update = optimizerUpdateOps(function);
  // Roots: the outermost sums of products first, then every other matmul.
  SmallVector<Operation *> roots;
  llvm::DenseSet<Operation *> sums = sumsOfProducts(body);
  for (Operation &op : body)
    if (sums.contains(&op) &&
        !(op.getResult(0).hasOneUse() &&
          sums.contains(*op.getResult(0).getUsers().begin())))
      roots.push_back(&op);
  for (Operation &op : body)
    if (isa<MatmulOp>(op))
      roots.push_back(&op);
  for (Operation *root : roots) {
    if (grouping.of(root))
      continue;
    Group *group = nullptr;
    if (isa<AddOp>(root)) {
      SmallVector<Operation *> sum = sumOfProducts(root, grouping);
      if (sum.empty())
        continue;
      group = grouping.create("gemm", root);
      for (Operation *op : sum)
        grouping.add(group, op);
    } else {
      group = grouping.create("gemm", root);
    }
    takeEpilogue(*group, grouping, root, update);
  }
}

void formConvGroups(func::FuncOp function, Grouping &grouping) {
  llvm::DenseSet<Operation *> update = optimizerUpdateOps(function);
  for (Operation &op : function.getBody().front())
    if (isa<Conv2dOp, Conv2dBackwardInputOp, Conv2dBackwardFilterOp>(op) &&
        !grouping.of(&op)) {
      Group &group = *grouping.create("conv", &op);
      Operation *tail = takeEpilogue(group, grouping, &op, update);
      if (auto conv = dyn_cast<Conv2dOp>(&op))
        takeBatchNorm(group, grouping, conv, tail, update);
    }
}

} // namespace mlir::kiln
