//===- MemoryPlan.cpp - device buffers of an entry ------------------------===//
//
// Resident buffers come from roles; arena offsets from liveness intervals over
// the fused program, placed largest first at the lowest offset that does not
// collide with a placed tensor whose lifetime overlaps (best fit).
//
//===----------------------------------------------------------------------===//

#include "compiler/transforms/MemoryPlan.h"

#include "compiler/transforms/OpClasses.h"
#include "dialects/kiln/IR/KilnDialect.h"
#include "dialects/kiln/IR/KilnNaming.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include <random>

namespace mlir::kiln {

#define GEN_PASS_DECL_KILNPLANMEMORY
#define GEN_PASS_DEF_KILNPLANMEMORY
#include "compiler/transforms/Passes.h.inc"

static constexpr llvm::StringLiteral kBuffersAttr = "kiln.buffers";
static constexpr llvm::StringLiteral kBufferAttr = "kiln.buffer";
static constexpr llvm::StringLiteral kWorkspaceAttr = "kiln.workspace";
static constexpr llvm::StringLiteral kReuseDelayAttr = "kiln.reuse_delay";

uint64_t tensorBytes(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  unsigned bits = tensor.getElementTypeBitWidth();
  uint64_t elementBytes = bits == 1 ? 1 : bits / 8;
  return static_cast<uint64_t>(tensor.getNumElements()) * elementBytes;
}

static uint64_t alignUp(uint64_t x) {
  return (x + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
}

static DictionaryAttr encode(MLIRContext *context, const BufferSlot &slot) {
  Builder b(context);
  return b.getDictionaryAttr(
      {b.getNamedAttr("buffer",
                      b.getStringAttr(slot.resident ? slot.name : "arena")),
       b.getNamedAttr("offset", b.getI64IntegerAttr(slot.offset)),
       b.getNamedAttr("size", b.getI64IntegerAttr(slot.size))});
}

static FailureOr<BufferSlot> decode(Attribute attr) {
  auto dict = dyn_cast_or_null<DictionaryAttr>(attr);
  if (!dict)
    return failure();
  auto buffer = dict.getAs<StringAttr>("buffer");
  auto offset = dict.getAs<IntegerAttr>("offset");
  auto size = dict.getAs<IntegerAttr>("size");
  if (!buffer || !offset || !size)
    return failure();
  BufferSlot slot;
  slot.resident = buffer.getValue() != "arena";
  if (slot.resident)
    slot.name = buffer.getValue().str();
  slot.offset = offset.getInt();
  slot.size = size.getInt();
  return slot;
}

FailureOr<BufferSlot> bufferOf(Value value) {
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    auto function = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
    if (!function)
      return failure();
    return decode(function.getArgAttr(arg.getArgNumber(), kBufferAttr));
  }
  Operation *op = value.getDefiningOp();
  auto slots = op->getAttrOfType<ArrayAttr>(kBuffersAttr);
  unsigned index = cast<OpResult>(value).getResultNumber();
  if (!slots || index >= slots.size())
    return failure();
  return decode(slots[index]);
}

namespace {

/// An arena tensor: a root value, the values that alias it, and its
/// lifetime in top-level op indices (inclusive); or the workspace of the
/// fusion `workspace` (no root).
struct Interval {
  Value root;
  int64_t start = 0, end = 0;
  uint64_t bytes = 0;
  uint64_t offset = 0;
  Operation *workspace = nullptr;
};

class Planner {
public:
  Planner(func::FuncOp function, const MemoryPlanOptions &options)
      : function(function), options(options) {}

  LogicalResult run() {
    Block &body = function.getBody().front();
    for (Operation &op : body)
      index[&op] = static_cast<int64_t>(order.size()), order.push_back(&op);
    terminator = body.getTerminator();

    if (failed(planArguments()) || failed(planResults()))
      return failure();
    planIntermediates();
    addWorkspaces();
    delayReuse();
    assignOffsets();
    return record();
  }

private:
  /// The root a value aliases through reshapes.
  Value rootOf(Value v) {
    while (auto reshape = v.getDefiningOp<ReshapeOp>())
      v = reshape.getInput();
    return v;
  }

  /// Last top-level use of `v` or of any reshape of it.
  int64_t lastUse(Value v) {
    int64_t last = -1;
    for (Operation *user : v.getUsers()) {
      last = std::max(last, index.lookup(user));
      if (auto reshape = dyn_cast<ReshapeOp>(user))
        last = std::max(last, lastUse(reshape.getResult()));
    }
    return last;
  }

  LogicalResult planArguments() {
    for (BlockArgument arg : function.getArguments()) {
      DictionaryAttr attrs = function.getArgAttrDict(arg.getArgNumber());
      StringRef role = stringEntry(attrs, KilnDialect::kRoleAttrName);
      StringRef name = stringEntry(attrs, KilnDialect::kNameAttrName);
      if (role == "param" || role == "state" || role == "optimizer_state" ||
          role == "master_weight" || role == "gradient" || role == "constant") {
        resident[arg] =
            BufferSlot{true, name.str(), 0, tensorBytes(arg.getType())};
        continue;
      }
      // Inputs, learning rate and step: written by the runtime before the
      // first kernel, so live from the start.
      intervals.push_back(
          {arg, -1, lastUse(arg), tensorBytes(arg.getType()), 0});
    }
    return success();
  }

  LogicalResult planResults() {
    for (OpOperand &operand : terminator->getOpOperands()) {
      unsigned i = operand.getOperandNumber();
      Value v = operand.get();
      DictionaryAttr attrs = function.getResultAttrDict(i);
      StringRef role = stringEntry(attrs, KilnDialect::kRoleAttrName);
      StringRef name = stringEntry(attrs, KilnDialect::kNameAttrName);
      auto updates =
          attrs ? attrs.getAs<IntegerAttr>(KilnDialect::kUpdatesAttrName)
                : IntegerAttr();
      Operation *producer = v.getDefiningOp();
      if (updates || role == "gradient") {
        if (!producer || !isa<FusionOp>(producer) || resident.count(v))
          return function.emitOpError("result ")
                     << i << " ('" << name
                     << "') must be computed by a kernel to be stored in its "
                        "resident buffer",
                 failure();
        if (updates) {
          BlockArgument target = function.getArgument(updates.getInt());
          // In place only if nothing reads the old value afterwards.
          if (lastUse(target) > index.lookup(producer))
            return function.emitOpError("result ")
                       << i << " ('" << name << "') cannot update argument "
                       << updates.getInt() << " in place: it is read after "
                       << "the update is computed",
                   failure();
          resident[v] = resident.lookup(target);
        } else {
          resident[v] =
              BufferSlot{true, name.str(), 0, tensorBytes(v.getType())};
        }
        continue;
      }
      returned.insert(rootOf(v));
    }
    return success();
  }

  /// Whether `fusion` may write result `result` over its operand `input`:
  /// an element-wise kernel where element i of the result reads only element
  /// i of the operand, same byte size, and the operand dies here.
  bool mayReuse(FusionOp fusion, Value input, Value result) {
    if (input.getType() != result.getType())
      return false;
    if (lastUse(input) != index.lookup(fusion) || returned.contains(input))
      return false;
    // The kernel must read those bytes through this operand alone: through
    // a view of them that is another operand, it may read them at other
    // positions (broadcast to a larger result, say) after they are written.
    if (llvm::any_of(fusion.getInputs(), [&](Value other) {
          return other != input && rootOf(other) == rootOf(input);
        }))
      return false;
    auto arg = fusion.getBody().getArgument(
        llvm::find(fusion.getInputs(), input) - fusion.getInputs().begin());
    if (fusion.getKind() == "reduction")
      return isLossGradientOver(fusion, arg, result);
    return fusion.getKind() == "pointwise" && readsOnlyOwnElements(arg);
  }

  /// Whether `result` is the gradient that a cross entropy's loss-and-gradient
  /// kernel (a fusion of only cross_entropy, its backward and constants)
  /// computes from the logits `arg`: each thread reads its own elements of a
  /// row before writing them, and the one other element (the label's) before
  /// the row's first reduction (cross_entropy.cuh), so the gradient may be
  /// written over the logits.
  static bool isLossGradientOver(FusionOp fusion, BlockArgument arg,
                                 Value result) {
    Block &body = fusion.getBody().front();
    bool forward = false;
    CrossEntropyBackwardOp backward;
    for (Operation &op : body.without_terminator()) {
      if (isa<CrossEntropyOp>(op))
        forward = true;
      else if (auto b = dyn_cast<CrossEntropyBackwardOp>(op))
        backward = b;
      else if (!isa<ConstantOp>(op))
        return false;
    }
    if (!forward || !backward || backward.getLogits() != arg)
      return false;
    auto yielded = llvm::find(body.getTerminator()->getOperands(),
                              backward.getResult());
    return yielded != body.getTerminator()->getOperands().end() &&
           fusion.getResult(yielded.getIndex()) == result;
  }

  /// Whether every element of `arg` is read only while its own position is
  /// computed: everything computed from it is element-wise and of its shape
  /// (no broadcast to a larger root, no index-remapping op that makes the
  /// kernel compute it at other positions).
  static bool readsOnlyOwnElements(BlockArgument arg) {
    SmallVector<Value> worklist = {arg};
    llvm::DenseSet<Value> seen = {arg};
    while (!worklist.empty()) {
      Value value = worklist.pop_back_val();
      for (Operation *user : value.getUsers()) {
        if (isa<YieldOp>(user))
          continue;
        if (classify(user) != OpClass::Pointwise || isa<BroadcastToOp>(user))
          return false;
        for (Value produced : user->getResults()) {
          if (cast<RankedTensorType>(produced.getType()).getShape() !=
              cast<RankedTensorType>(arg.getType()).getShape())
            return false;
          if (seen.insert(produced).second)
            worklist.push_back(produced);
        }
      }
    }
    return true;
  }

  void planIntermediates() {
    llvm::DenseMap<Value, size_t> intervalOf;
    for (size_t i = 0; i < intervals.size(); ++i)
      intervalOf[intervals[i].root] = i;
    for (Operation *op : order) {
      auto fusion = dyn_cast<FusionOp>(op);
      if (!fusion)
        continue;
      for (Value result : fusion.getResults()) {
        if (resident.count(result))
          continue;
        int64_t end =
            returned.contains(result) ? int64_t(order.size()) : lastUse(result);
        // Reuse a dying operand's bytes: extend its interval instead.
        bool reused = false;
        for (Value input : fusion.getInputs()) {
          auto it = intervalOf.find(input);
          if (it == intervalOf.end() || reusedBy.count(input) ||
              !mayReuse(fusion, input, result))
            continue;
          intervals[it->second].end = std::max(intervals[it->second].end, end);
          aliasOf[result] = input;
          reusedBy[input] = result;
          intervalOf[result] = it->second;
          reused = true;
          break;
        }
        if (reused)
          continue;
        intervalOf[result] = intervals.size();
        intervals.push_back(
            {result, index.lookup(op), end, tensorBytes(result.getType()), 0});
      }
    }
  }

  /// Each fusion's workspace, for the fusion's own time.
  void addWorkspaces() {
    for (Operation *op : order) {
      auto it = options.workspaces.find(op);
      if (it == options.workspaces.end() || it->second == 0)
        continue;
      int64_t at = index.lookup(op);
      intervals.push_back({Value(), at, at, it->second, 0, op});
    }
  }

  /// Keeps the bytes of every arena tensor of at most kMaxDelayedBytes
  /// through the `reuseDelay` kernels after its last use.
  void delayReuse() {
    if (options.reuseDelay == 0)
      return;
    const int64_t last = static_cast<int64_t>(order.size()) - 1;
    for (Interval &interval : intervals) {
      if (interval.bytes > kMaxDelayedBytes)
        continue;
      int64_t end = interval.end;
      for (unsigned kernels = 0; kernels < options.reuseDelay && end < last;)
        if (isa<FusionOp>(order[++end]))
          ++kernels;
      interval.end = std::max(interval.end, end);
    }
  }

  /// Places intervals in `sequence` order, each at the lowest offset (or,
  /// with `bestFit`, in the smallest gap) free for its whole lifetime;
  /// returns the arena size and leaves the offsets in `offsets`.
  uint64_t place(llvm::ArrayRef<size_t> sequence, bool bestFit,
                 std::vector<uint64_t> &offsets) {
    offsets.assign(intervals.size(), 0);
    uint64_t arena = 0;
    std::vector<size_t> placed;
    for (size_t i : sequence) {
      const Interval &current = intervals[i];
      uint64_t size = alignUp(current.bytes);
      // Occupied byte ranges of tensors alive at the same time, by offset.
      std::vector<std::pair<uint64_t, uint64_t>> busy;
      for (size_t j : placed) {
        const Interval &other = intervals[j];
        if (other.start <= current.end && current.start <= other.end)
          busy.push_back({offsets[j], offsets[j] + alignUp(other.bytes)});
      }
      llvm::sort(busy);
      uint64_t best = UINT64_MAX, bestGap = UINT64_MAX, cursor = 0;
      for (auto [begin, end] : busy) {
        if (begin >= cursor + size && begin - cursor < bestGap) {
          best = cursor;
          bestGap = bestFit ? begin - cursor : 0;
          if (!bestFit)
            break;
        }
        cursor = std::max(cursor, end);
      }
      offsets[i] = best != UINT64_MAX ? best : cursor;
      arena = std::max(arena, offsets[i] + size);
      placed.push_back(i);
    }
    return arena;
  }

  /// Dynamic storage allocation has no exact fast solution: try a few
  /// classic orders (largest first, longest-lived first, by start time) with
  /// first and best fit, and keep the smallest arena.
  void assignOffsets() {
    std::vector<size_t> ids(intervals.size());
    for (size_t i = 0; i < intervals.size(); ++i)
      ids[i] = i;
    auto bytes = [&](size_t i) { return alignUp(intervals[i].bytes); };
    auto span = [&](size_t i) { return intervals[i].end - intervals[i].start; };
    std::vector<std::vector<size_t>> orders;
    orders.push_back(ids);
    llvm::stable_sort(orders.back(),
                      [&](size_t a, size_t b) { return bytes(a) > bytes(b); });
    orders.push_back(ids);
    llvm::stable_sort(orders.back(), [&](size_t a, size_t b) {
      return bytes(a) * span(a) > bytes(b) * span(b);
    });
    orders.push_back(ids);
    llvm::stable_sort(orders.back(), [&](size_t a, size_t b) {
      return intervals[a].start < intervals[b].start;
    });
    orders.push_back(ids);
    llvm::stable_sort(orders.back(),
                      [&](size_t a, size_t b) { return span(a) > span(b); });
    arenaSize = UINT64_MAX;
    std::vector<uint64_t> offsets;
    for (const std::vector<size_t> &sequence : orders)
      for (bool bestFit : {false, true}) {
        uint64_t size = place(sequence, bestFit, offsets);
        if (size < arenaSize) {
          arenaSize = size;
          for (size_t i = 0; i < intervals.size(); ++i)
            intervals[i].offset = offsets[i];
        }
      }
    // Then perturbed largest-first orders (a fixed seed keeps the plan
    // deterministic), stopping as soon as the peak itself is reached.
    std::mt19937_64 rng(20261130);
    peakLive = peakLiveBytes();
    for (int attempt = 0; attempt < 256 && arenaSize > peakLive; ++attempt) {
      std::vector<size_t> sequence = orders.front();
      for (size_t k = 0; k + 1 < sequence.size(); ++k)
        if (rng() % 3 == 0)
          std::swap(
              sequence[k],
              sequence[k + 1 +
                       rng() % std::min<size_t>(4, sequence.size() - k - 1)]);
      for (bool bestFit : {false, true}) {
        uint64_t size = place(sequence, bestFit, offsets);
        if (size < arenaSize) {
          arenaSize = size;
          for (size_t i = 0; i < intervals.size(); ++i)
            intervals[i].offset = offsets[i];
        }
      }
    }
    if (intervals.empty())
      arenaSize = 0;
  }

  /// The largest sum of sizes of tensors alive at one time: no arena can be
  /// smaller.
  uint64_t peakLiveBytes() {
    uint64_t peak = 0;
    for (int64_t t = -1; t <= int64_t(order.size()); ++t) {
      uint64_t live = 0;
      for (const Interval &interval : intervals)
        if (interval.start <= t && t <= interval.end)
          live += alignUp(interval.bytes);
      peak = std::max(peak, live);
    }
    return peak;
  }

  LogicalResult record() {
    MLIRContext *context = function.getContext();
    llvm::DenseMap<Value, BufferSlot> slots;
    for (auto &[value, slot] : resident)
      slots[value] = slot;
    Builder b(context);
    for (Operation *op : order)
      op->removeAttr(kWorkspaceAttr);
    for (const Interval &interval : intervals) {
      if (interval.workspace) {
        interval.workspace->setAttr(
            kWorkspaceAttr, b.getDictionaryAttr(
                                {b.getNamedAttr("offset", b.getI64IntegerAttr(
                                                              interval.offset)),
                                 b.getNamedAttr("size", b.getI64IntegerAttr(
                                                            interval.bytes))}));
        continue;
      }
      slots[interval.root] = BufferSlot{false, "", interval.offset,
                                        tensorBytes(interval.root.getType())};
    }
    // A result may reuse an operand that itself reused another: follow the
    // chain to the interval's root.
    for (auto &[value, input] : aliasOf) {
      Value root = input;
      while (aliasOf.count(root))
        root = aliasOf.lookup(root);
      slots[value] = slots.lookup(root);
    }
    auto slotOf = [&](Value v) -> FailureOr<BufferSlot> {
      Value root = rootOf(v);
      auto it = slots.find(root);
      if (it == slots.end())
        return failure();
      BufferSlot slot = it->second;
      slot.size = tensorBytes(v.getType());
      return slot;
    };
    for (BlockArgument arg : function.getArguments()) {
      FailureOr<BufferSlot> slot = slotOf(arg);
      if (succeeded(slot))
        function.setArgAttr(arg.getArgNumber(), kBufferAttr,
                            encode(context, *slot));
    }
    for (Operation *op : order) {
      if (!isa<FusionOp, ReshapeOp>(op))
        continue;
      SmallVector<Attribute> encoded;
      for (Value result : op->getResults()) {
        FailureOr<BufferSlot> slot = slotOf(result);
        if (failed(slot))
          return op->emitOpError("has a result without a buffer (unused?)"),
                 failure();
        encoded.push_back(encode(context, *slot));
      }
      op->setAttr(kBuffersAttr, ArrayAttr::get(context, encoded));
    }
    function->setAttr("kiln.arena_size", b.getI64IntegerAttr(arenaSize));
    function->setAttr("kiln.peak_live_bytes", b.getI64IntegerAttr(peakLive));
    function->setAttr(kReuseDelayAttr,
                      b.getI64IntegerAttr(options.reuseDelay));
    return success();
  }

  func::FuncOp function;
  Operation *terminator = nullptr;
  std::vector<Operation *> order;
  llvm::DenseMap<Operation *, int64_t> index;
  llvm::DenseMap<Value, BufferSlot> resident;
  llvm::DenseSet<Value> returned;
  std::vector<Interval> intervals;
  llvm::DenseMap<Value, Value> aliasOf, reusedBy;
  uint64_t arenaSize = 0, peakLive = 0;
  MemoryPlanOptions options;
};

} // namespace

LogicalResult planMemory(func::FuncOp function,
                         const MemoryPlanOptions &options) {
  if (function.isExternal())
    return success();
  for (Operation &op : function.getBody().front())
    if (!isa<FusionOp, ReshapeOp, func::ReturnOp>(op))
      return op.emitOpError("must be inside a kiln.fusion before memory "
                            "planning (run --kiln-fuse first)"),
             failure();
  return Planner(function, options).run();
}

LogicalResult
planWorkspaces(func::FuncOp function,
               const llvm::DenseMap<Operation *, uint64_t> &workspaces) {
  MemoryPlanOptions options;
  if (auto delay = function->getAttrOfType<IntegerAttr>(kReuseDelayAttr))
    options.reuseDelay = static_cast<unsigned>(delay.getInt());
  options.workspaces = workspaces;
  return planMemory(function, options);
}

std::optional<uint64_t> workspaceOffset(Operation *fusion) {
  auto workspace = fusion->getAttrOfType<DictionaryAttr>(kWorkspaceAttr);
  if (!workspace)
    return std::nullopt;
  auto offset = workspace.getAs<IntegerAttr>("offset");
  if (!offset)
    return std::nullopt;
  return static_cast<uint64_t>(offset.getInt());
}

namespace {
struct PlanMemoryPass : public impl::KilnPlanMemoryBase<PlanMemoryPass> {
  using KilnPlanMemoryBase::KilnPlanMemoryBase;
  void runOnOperation() override {
    MemoryPlanOptions options;
    options.reuseDelay = reuseDelay;
    for (auto function : getOperation().getOps<func::FuncOp>())
      if (failed(planMemory(function, options)))
        return signalPassFailure();
  }
};
} // namespace

} // namespace mlir::kiln
