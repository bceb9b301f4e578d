//===- Recompute.cpp - trading kernels for memory in the backward --------===//
//
// A training step keeps every activation its backward reads, from the
// forward until that read. For a tensor made by a pointwise op or a norm
// from operands that stay live until the backward anyway, keeping it costs
// its bytes across the whole gap, while computing it again costs one cheap
// kernel. kiln-recompute makes that trade, candidate by candidate, measured
// by planning the fused function as kiln-plan-memory will, until the step
// fits its memory budget.
//
//===----------------------------------------------------------------------===//

#include "compiler/transforms/Fusion.h"
#include "compiler/transforms/MemoryPlan.h"
#include "compiler/transforms/OpClasses.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::kiln {

#define GEN_PASS_DEF_KILNRECOMPUTE
#include "compiler/transforms/Passes.h.inc"

namespace {

/// Tensors smaller than this are not worth a kernel.
constexpr uint64_t kMinRecomputeBytes = 1 << 20;
/// A read at least this many ops after the previous one is "later".
constexpr unsigned kMinGap = 8;

/// A tensor that can be computed again just before its later reads.
struct Candidate {
  Operation *op;
  /// The first of the reads after the gap; it and every read after it get
  /// the copy.
  Operation *firstLateUser;
  uint64_t bytes;
};

/// Ops whose copy computes the same tensor from the same operands: pointwise
/// ops without state, and the norms (one result, a reduction over rows).
bool isRecomputable(Operation *op) {
  if (op->getNumResults() != 1 || op->getNumRegions() != 0)
    return false;
  StringRef name = op->getName().getStringRef();
  if (name.contains("random") || name.contains("dropout") ||
      name == "kiln.constant")
    return false;
  switch (classify(op)) {
  case OpClass::Pointwise:
    return true;
  case OpClass::Reduction:
    return name.ends_with("_norm");
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
    // Recomputing must not keep an operand alive longer than it is already.
    bool operandsLive = llvm::all_of(op.getOperands(), [&](Value operand) {
      return isa<BlockArgument>(operand) || lastRead(operand) >= latePosition;
    });
    if (operandsLive)
      candidates.push_back({&op, late, tensorBytes(type)});
  }
  llvm::stable_sort(candidates, [](const Candidate &a, const Candidate &b) {
    return a.bytes > b.bytes;
  });
  return candidates;
}

/// A copy of a candidate's op with the reads it took over, to undo it.
struct AppliedCopy {
  Operation *copy;
  SmallVector<OpOperand *> reads;
};

AppliedCopy applyCopy(func::FuncOp function, const Candidate &candidate) {
  llvm::DenseMap<Operation *, unsigned> positions = positionsOf(function);
  unsigned from = positions.lookup(candidate.firstLateUser);
  OpBuilder builder(candidate.firstLateUser);
  AppliedCopy applied{builder.clone(*candidate.op), {}};
  for (OpOperand &use :
       llvm::make_early_inc_range(candidate.op->getResult(0).getUses()))
    if (positions.lookup(use.getOwner()) >= from)
      applied.reads.push_back(&use);
  for (OpOperand *read : applied.reads)
    read->set(applied.copy->getResult(0));
  return applied;
}

void undoCopy(const AppliedCopy &applied, Operation *original) {
  for (OpOperand *read : applied.reads)
    read->set(original->getResult(0));
  applied.copy->erase();
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
  for (auto copy : scratch->getOps<func::FuncOp>())
    if (failed(fuseFunction(copy)) ||
        failed(planMemory(copy, {/*reuseDelay=*/reuseDelay})))
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
    for (const Candidate &candidate : findCandidates(function)) {
      AppliedCopy applied = applyCopy(function, candidate);
      FailureOr<uint64_t> after = plannedArena(function, reuseDelay);
      if (failed(after) || *after >= *arena) {
        undoCopy(applied, candidate.op);
        continue;
      }
      choices.push_back(b.getDictionaryAttr({
          b.getNamedAttr("op", b.getStringAttr(describe(candidate.op))),
          b.getNamedAttr("bytes", b.getI64IntegerAttr(candidate.bytes)),
          b.getNamedAttr("arena_before", b.getI64IntegerAttr(*arena)),
          b.getNamedAttr("arena_after", b.getI64IntegerAttr(*after)),
      }));
      arena = after;
      if (resident + *arena <= memoryBudget)
        break;
    }
    if (!choices.empty())
      function->setAttr("kiln.recomputed", b.getArrayAttr(choices));
    if (resident + *arena > memoryBudget)
      function.emitWarning(llvm::formatv(
          "memory budget of {0} bytes not met by '{1}': {2} resident + {3} "
          "arena bytes after recomputing {4} tensors{5}",
          uint64_t(memoryBudget), function.getSymName(), resident, *arena,
          choices.size(),
          reuseDelay > 0 ? " (--no-merge-launches frees the bytes kept "
                           "for merged launches)"
                         : ""));
    return success();
  }
};

} // namespace

} // namespace mlir::kiln
