//===- Recompute.cpp - trading kernels for memory in the backward --------===//
//
// A training step keeps every activation its backward reads, from the
// forward until that read. For a tensor made by a pointwise op or a norm
// from operands that stay live until the backward anyway, keeping it costs
// its bytes across the whole gap, while computing it again costs one cheap
// kernel. The operands may themselves be computed again, a few cheap ops
// back, from tensors that stay live (the parameters and a batch's inputs,
// say: a Linear layer of a scalar feature and its bias). kiln-recompute
// makes that trade, candidate by candidate, measured by planning the fused
// function as kiln-plan-memory will, until the step fits its memory budget.
//
//===----------------------------------------------------------------------===//

#include "compiler/transforms/Fusion.h"
#include "compiler/transforms/MemoryPlan.h"
#include "compiler/transforms/OpClasses.h"

#include "dialects/kiln/IR/KilnBuilder.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"

#include <functional>

namespace mlir::kiln {

#define GEN_PASS_DEF_KILNRECOMPUTE
#include "compiler/transforms/Passes.h.inc"

namespace {

/// Tensors smaller than this are not worth a kernel.
constexpr uint64_t kMinRecomputeBytes = 1 << 20;
/// A read at least this many ops after the previous one is "later".
constexpr unsigned kMinGap = 8;
/// The most ops copied for one tensor (it and what it is computed from).
constexpr unsigned kMaxCopiedOps = 4;

/// A tensor that can be computed again just before its later reads.
struct Candidate {
  /// The ops to copy, each after the ops it reads; the last computes the
  /// tensor.
  SmallVector<Operation *> ops;
  /// The first of the reads after the gap; it and every read after it get
  /// the copy.
  Operation *firstLateUser;
  uint64_t bytes;

  Operation *op() const { return ops.back(); }
};

/// Whether `matmul` is an outer product (a contraction of one term): each
/// result element is one multiply, as cheap as a pointwise op (kiln-fuse
/// makes it one).
bool isOuterProduct(Operation *op) {
  auto matmul = dyn_cast<MatmulOp>(op);
  if (!matmul)
    return false;
  ArrayRef<int64_t> lhs = KilnBuilder::typeOf(matmul.getLhs()).getShape();
  return (matmul.getTransposeLhs() ? lhs[lhs.size() - 2] : lhs.back()) == 1;
}

/// Ops whose copy computes the same tensor from the same operands: pointwise
/// ops without state, the norms (one result, a reduction over rows) and
/// outer products; as the operand of another copy, also constants and views.
bool isRecomputable(Operation *op, bool operand = false) {
  if (op->getNumResults() != 1 || op->getNumRegions() != 0)
    return false;
  StringRef name = op->getName().getStringRef();
  if (name.contains("random") || name.contains("dropout"))
    return false;
  if (name == "kiln.constant")
    return operand;
  switch (classify(op)) {
  case OpClass::Pointwise:
    return true;
  case OpClass::Reduction:
    return name.ends_with("_norm");
  case OpClass::Gemm:
    return isOuterProduct(op);
  case OpClass::View:
    return operand;
  default:
    return false;
  }
}

/// Position of every top-level op of `function`'s body.
llvm::DenseMap<Operation *, unsigned> positionsOf(func::FuncOp function) {
  llvm::DenseMap<Operation *, unsigned> positions;
  unsigned index = 0;
  for (Operation &op : function.getBody().front())
    positions[&op] = index++;
  return positions;
}

/// The tensors of `function` worth recomputing, largest first.
SmallVector<Candidate> findCandidates(func::FuncOp function) {
  llvm::DenseMap<Operation *, unsigned> positions = positionsOf(function);
  // The position of the last top-level read of each value.
  auto lastRead = [&](Value value) {
    unsigned last = 0;
    for (Operation *user : value.getUsers())
      if (auto it = positions.find(user); it != positions.end())
        last = std::max(last, it->second);
    return last;
  };
  // Adds to `ops`, after what they read, the ops that compute `op`'s
  // operands which are not live at `position` anyway; false when one cannot
  // be copied or the copies would exceed kMaxCopiedOps.
  std::function<bool(Operation *, unsigned, SmallVector<Operation *> &)>
      copiesOf = [&](Operation *op, unsigned position,
                     SmallVector<Operation *> &ops) {
        for (Value operand : op->getOperands()) {
          if (isa<BlockArgument>(operand) || lastRead(operand) >= position)
            continue;
          Operation *producer = operand.getDefiningOp();
          if (llvm::is_contained(ops, producer))
            continue;
          if (!positions.count(producer) ||
              !isRecomputable(producer, /*operand=*/true) ||
              !copiesOf(producer, position, ops) ||
              ops.size() + 1 >= kMaxCopiedOps)
            return false;
          ops.push_back(producer);
        }
        return true;
      };
  SmallVector<Candidate> candidates;
  for (Operation &op : function.getBody().front()) {
    if (!isRecomputable(&op))
      continue;
    Value result = op.getResult(0);
    auto type = dyn_cast<RankedTensorType>(result.getType());
    if (!type || !type.hasStaticShape() ||
        tensorBytes(type) < kMinRecomputeBytes)
      continue;
    SmallVector<std::pair<unsigned, Operation *>> reads;
    for (Operation *user : result.getUsers())
      reads.push_back({positions.lookup(user), user});
    llvm::sort(reads, [](auto &a, auto &b) { return a.first < b.first; });
    reads.erase(std::unique(reads.begin(), reads.end()), reads.end());
    // The longest gap between the definition or one read and the next.
    unsigned previous = positions.lookup(&op), gap = 0;
    Operation *late = nullptr;
    unsigned latePosition = 0;
    for (auto [position, user] : reads) {
      if (position - previous > gap) {
        gap = position - previous;
        late = user;
        latePosition = position;
      }
      previous = position;
    }
    if (!late || gap < kMinGap)
      continue;
    // Recomputing must not keep an operand alive longer than it is already:
    // what is not live at the late read is computed again too.
    SmallVector<Operation *> ops;
    if (!copiesOf(&op, latePosition, ops))
      continue;
    ops.push_back(&op);
    candidates.push_back({std::move(ops), late, tensorBytes(type)});
  }
  llvm::stable_sort(candidates, [](const Candidate &a, const Candidate &b) {
    return a.bytes > b.bytes;
  });
  return candidates;
}

/// The copies of a candidate's ops with the reads they took over, to undo
/// them.
struct AppliedCopy {
  SmallVector<Operation *> copies;
  SmallVector<OpOperand *> reads;
};

AppliedCopy applyCopy(func::FuncOp function, const Candidate &candidate) {
  llvm::DenseMap<Operation *, unsigned> positions = positionsOf(function);
  unsigned from = positions.lookup(candidate.firstLateUser);
  OpBuilder builder(candidate.firstLateUser);
  IRMapping copied;
  AppliedCopy applied;
  for (Operation *op : candidate.ops)
    applied.copies.push_back(builder.clone(*op, copied));
  Value original = candidate.op()->getResult(0);
  for (OpOperand &use : llvm::make_early_inc_range(original.getUses()))
    if (positions.lookup(use.getOwner()) >= from)
      applied.reads.push_back(&use);
  for (OpOperand *read : applied.reads)
    read->set(applied.copies.back()->getResult(0));
  return applied;
}

void undoCopy(const AppliedCopy &applied, Operation *original) {
  for (OpOperand *read : applied.reads)
    read->set(original->getResult(0));
  for (Operation *copy : llvm::reverse(applied.copies))
    copy->erase();
}

/// Plans `functions` (unfused) in a scratch module as the pipeline will.
FailureOr<ModuleOp> planScratch(OwningOpRef<ModuleOp> &scratch,
                                ArrayRef<func::FuncOp> functions,
                                unsigned reuseDelay) {
  scratch = ModuleOp::create(functions.front()->getLoc());
  for (func::FuncOp function : functions)
    scratch->push_back(function->clone());
  // The scratch copies' diagnostics duplicate what the pipeline reports.
  ScopedDiagnosticHandler quiet(scratch->getContext(),
                                [](Diagnostic &) { return success(); });
  MemoryPlanOptions options;
  options.reuseDelay = reuseDelay;
  for (auto copy : scratch->getOps<func::FuncOp>())
    if (failed(fuseFunction(copy)) || failed(planMemory(copy, options)))
      return failure();
  return *scratch;
}

/// The arena `function` will have once fused and planned.
FailureOr<uint64_t> plannedArena(func::FuncOp function, unsigned reuseDelay) {
  OwningOpRef<ModuleOp> scratch;
  FailureOr<ModuleOp> planned = planScratch(scratch, {function}, reuseDelay);
  if (failed(planned))
    return failure();
  auto arena = (*planned->getOps<func::FuncOp>().begin())
                   ->getAttrOfType<IntegerAttr>("kiln.arena_size");
  if (!arena)
    return failure();
  return arena.getValue().getZExtValue();
}

/// Bytes of every resident buffer of the module (each named buffer once):
/// the device memory the runtime holds for the whole run.
FailureOr<uint64_t> residentBytes(ModuleOp module, unsigned reuseDelay) {
  SmallVector<func::FuncOp> functions(module.getOps<func::FuncOp>());
  if (functions.empty())
    return uint64_t{0};
  OwningOpRef<ModuleOp> scratch;
  FailureOr<ModuleOp> planned = planScratch(scratch, functions, reuseDelay);
  if (failed(planned))
    return failure();
  llvm::StringMap<uint64_t> residents;
  auto note = [&](Value value) {
    FailureOr<BufferSlot> slot = bufferOf(value);
    if (succeeded(slot) && slot->resident)
      residents[slot->name] = std::max(residents[slot->name], slot->size);
  };
  for (auto function : planned->getOps<func::FuncOp>()) {
    for (BlockArgument argument : function.getArguments())
      note(argument);
    function.walk([&](FusionOp fusion) {
      for (Value result : fusion.getResults())
        note(result);
    });
  }
  uint64_t total = 0;
  for (const auto &entry : residents)
    total += entry.getValue();
  return total;
}

std::string describe(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << op->getName().getStringRef();
  if (auto loc = dyn_cast<FileLineColLoc>(op->getLoc()))
    os << " at " << loc.getFilename().getValue().rsplit('/').second << ":"
       << loc.getLine() << ":" << loc.getColumn();
  return text;
}

struct KilnRecomputePass
    : public impl::KilnRecomputeBase<KilnRecomputePass> {
  using KilnRecomputeBase::KilnRecomputeBase;

  void runOnOperation() override {
    if (memoryBudget == 0)
      return;
    ModuleOp module = getOperation();
    FailureOr<uint64_t> resident = residentBytes(module, reuseDelay);
    if (failed(resident))
      return; // kiln-fuse and kiln-plan-memory will say why.
    // The entries that hold activations for a backward.
    for (auto function : module.getOps<func::FuncOp>())
      if (llvm::is_contained({"forward_backward", "train_step"},
                             function.getSymName()) &&
          failed(recompute(function, *resident)))
        return signalPassFailure();
  }

  LogicalResult recompute(func::FuncOp function, uint64_t resident) {
    FailureOr<uint64_t> arena = plannedArena(function, reuseDelay);
    if (failed(arena))
      return success();
    if (resident + *arena <= memoryBudget)
      return success();
    Builder b(function.getContext());
    SmallVector<Attribute> choices;
    // Each copy changes what is live where, and so the next candidates (a
    // tensor whose operand is now computed again must be computed from
    // that too): they are found again after each. A tensor whose copy did
    // not shrink the arena is not tried again.
    llvm::SmallPtrSet<Operation *, 16> rejected;
    bool chosen = true;
    while (chosen && resident + *arena > memoryBudget) {
      chosen = false;
      for (const Candidate &candidate : findCandidates(function)) {
        if (rejected.contains(candidate.op()))
          continue;
        AppliedCopy applied = applyCopy(function, candidate);
        FailureOr<uint64_t> after = plannedArena(function, reuseDelay);
        if (failed(after) || *after >= *arena) {
          undoCopy(applied, candidate.op());
          rejected.insert(candidate.op());
          continue;
        }
        choices.push_back(b.getDictionaryAttr({
            b.getNamedAttr("op", b.getStringAttr(describe(candidate.op()))),
            b.getNamedAttr("ops", b.getI64IntegerAttr(candidate.ops.size())),
            b.getNamedAttr("bytes", b.getI64IntegerAttr(candidate.bytes)),
            b.getNamedAttr("arena_before", b.getI64IntegerAttr(*arena)),
            b.getNamedAttr("arena_after", b.getI64IntegerAttr(*after)),
        }));
        arena = after;
        chosen = true;
        break;
      }
    }
    if (!choices.empty())
      function->setAttr("kiln.recomputed", b.getArrayAttr(choices));
    if (resident + *arena > memoryBudget)
      function.emitWarning(llvm::formatv(
          "memory budget of {0} bytes not met by '{1}': {2} resident + {3} "
          "arena bytes after recomputing {4} tensors",
          uint64_t(memoryBudget), function.getSymName(), resident, *arena,
          choices.size()));
    return success();
  }
};

} // namespace

} // namespace mlir::kiln
