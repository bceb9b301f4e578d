//===- PointwiseEmitter.cpp - pointwise and multi-tensor optimizer kernels
//-===//
//
// Kinds "pointwise" and "optimizer".
//
// pointwise: the body holds any pointwise and index-remapping ops (every op
// with the ScalarForm trait), which read their operands from fusion inputs
// or compute them at the positions they read (a chain of layout, gather and
// element-wise ops is one loop; ScalarEmitter.h). This is the loop kernel
// of every group --kiln-fuse forms from such ops, whatever their order and
// whatever computes their operands. One result (the largest) is the root;
// every other result must broadcast to it. The kernel is
// kernels/pointwise.cuh: one thread per root element in a grid-stride loop,
// or V consecutive elements with 16-byte vector accesses when every tensor
// read or written has the root's elements (or one element) and every
// pointer is aligned at run time (V = 16 / the smallest element size, at
// most 8). The group's functor
// (PointwiseFunctors.cpp) computes and stores everything at one root
// element; values with one element (a learning rate, a bias correction) are
// computed once per thread.
//
// optimizer: a multi-tensor kernel (kernels/optimizer.cuh) for bodies made
// of independent pointwise computations over tensors of different shapes (an
// optimizer's update of every parameter). A pointwise fusion whose results
// share no root (two independent computations merged into one launch) is
// emitted the same way. The results are partitioned by shape: group g holds
// every result of shape S_g, and its computation is the pointwise one above
// with root S_g (shared scalars are recomputed per group, once per thread).
// Group g owns the contiguous block range [start_g, start_g+1) of one
// launch, sized to its element count; a block finds its group by binary
// search in the constant table of ranges and runs that group's grid-stride
// loop over its own blocks. Groups whose pointers would exceed the
// kernel-parameter budget (kMaxPointerArgs) go to further kernels (launched
// one after the other), and a group that alone exceeds it is split into
// groups of fewer results of the same shape, as is a group whose vector
// path would hold more than kMaxLaneRegisters registers of tensor elements;
// results written over an input that others are computed from stay in one
// group (inseparableResults).
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/pointwise/PointwiseEmitter.h"
#include "codegen/cuda/EmitterRegistry.h"
#include "codegen/cuda/EmitterUtils.h"
#include "codegen/cuda/RecordedKernel.h"
#include "codegen/cuda/scalar/ScalarEmitter.h"

#include "compiler/transforms/MemoryPlan.h"
#include "compiler/transforms/OpClasses.h"

#include "dialects/kiln/Utils/ShapeInference.h"

#include "kiln/pointwise_layout.cuh"
#include "runtime/artifact/launch_limits.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <functional>

namespace mlir::kiln::codegen::pointwise {
namespace {

/// Blocks per group at most: 4 waves of 8 blocks on every SM; more work
/// loops inside the grid-stride loop.
int64_t maxGroupBlocks(const GpuTarget &target) {
  return target.blocksForWaves(4, 8);
}
/// Pointer parameters of one kernel at most: its parameters are pointers,
/// and one launch passes at most kMaxKernelParams (launch_limits.h); the
/// tensors of more go to further kernels.
constexpr int64_t kMaxPointerArgs = ::kiln::launch_limits::kMaxKernelParams;
/// Registers the vector path of one group may hold its tensors' V elements
/// in (a quarter of what a thread may have): a group of many tensors of one
/// shape (an optimizer's moments of many parameters) is split into groups
/// of fewer results, each with a block range of its own, instead of
/// spilling its registers.
constexpr int64_t kMaxLaneRegisters = 128;

RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}
ArrayRef<int64_t> shapeOf(Value v) { return tensorType(v).getShape(); }


/// Checks that the values `group` computes can be emitted at its root and
/// collects what it reads; `why` says what is wrong otherwise.
bool analyze(FusionOp fusion, Group &group, std::string *why) {
  auto fail = [&](const std::string &reason) {
    if (why)
      *why = reason;
    return false;
  };
  Block &body = fusion.getBody().front();
  auto yield = cast<YieldOp>(body.getTerminator());
  // (value, whether it is evaluated at remapped positions rather than at
  // the root element: the operand of an index-remapping op computed in the
  // fusion, and everything it is computed from).
  SmallVector<std::pair<Value, bool>> stack;
  for (unsigned r : group.results)
    stack.push_back({yield.getValues()[r], false});
  llvm::DenseSet<Value> seen[2];
  llvm::DenseSet<unsigned> inputs;
  auto isRoot = [&](Value v) { return sameElements(shapeOf(v), group.shape); };
  while (!stack.empty()) {
    auto [v, remappedHere] = stack.pop_back_val();
    if (!seen[remappedHere].insert(v).second)
      continue;
    if (!remappedHere && !isBroadcastableTo(shapeOf(v), group.shape))
      return fail("a value of shape " + formatShape(shapeOf(v)) +
                  " does not broadcast to the root shape " +
                  formatShape(group.shape));
    int64_t count = numElements(shapeOf(v));
    if (auto argument = dyn_cast<BlockArgument>(v)) {
      inputs.insert(argument.getArgNumber());
      if (isRoot(v) && count > 1 && !remappedHere)
        group.laneInputs.insert(v);
      else if (count > 1)
        group.vectorizable = false; // broadcast or remapped read
      continue;
    }
    Operation *op = v.getDefiningOp();
    std::string reason;
    if (!ScalarEmitter::supportsOp(op, &reason))
      return fail(reason);
    SmallVector<Value> remapped = ScalarEmitter::remappedOperands(op);
    bool computedRemapped = false;
    for (Value operand : remapped) {
      if (auto argument = dyn_cast<BlockArgument>(operand)) {
        inputs.insert(argument.getArgNumber());
        continue;
      }
      computedRemapped = true;
      stack.push_back({operand, true});
    }
    if (!remapped.empty() && count > 1) {
      // A reshape of an input at the root's flat index reads element for
      // element.
      bool atRoot = isRoot(v) && !remappedHere && !computedRemapped;
      if (isa<ReshapeOp>(op) && atRoot) {
        group.laneInputs.insert(op->getOperand(0));
      } else if (isa<RopeOp>(op) && atRoot) {
        // The element at the root and its rotation partner, each a vector.
        Value input = op->getOperand(0);
        group.laneInputs.insert(input);
        group.pairInputs[input] = shapeOf(input).back();
      } else {
        group.vectorizable = false;
      }
    }
    for (Value operand : op->getOperands())
      if (!llvm::is_contained(remapped, operand))
        stack.push_back({operand, remappedHere});
  }
  for (unsigned r : group.results)
    if (!isRoot(yield.getValues()[r]))
      group.vectorizable = false;
  group.inputs.assign(inputs.begin(), inputs.end());
  llvm::sort(group.inputs);
  group.elements = numElements(group.shape);
  // Vector width: 16 bytes of the narrowest tensor moved at once.
  int64_t narrowest = 16;
  for (Value v : group.laneInputs)
    narrowest =
        std::min(narrowest, storageBytes(tensorType(v).getElementType()));
  for (unsigned r : group.results)
    narrowest = std::min(
        narrowest,
        storageBytes(tensorType(yield.getValues()[r]).getElementType()));
  group.width = ::kiln::pointwise::vector_width(group.vectorizable, narrowest,
                                                group.elements);
  // A step's lanes and their partners stay in one half of a rope's row.
  for (auto [input, row] : group.pairInputs)
    while (group.width > 1 && (row / 2) % group.width != 0)
      group.width /= 2;
  return true;
}

/// The 32-bit registers that hold V elements of every tensor the vector
/// path of `group` moves.
int64_t laneRegisters(FusionOp fusion, const Group &group) {
  if (group.width == 1)
    return 0;
  int64_t bytes = 0;
  for (Value v : group.laneInputs)
    bytes += group.width * storageBytes(tensorType(v).getElementType()) *
             (group.pairInputs.count(v) ? 2 : 1);
  for (unsigned r : group.results)
    bytes += group.width *
             storageBytes(tensorType(fusion.getResult(r)).getElementType());
  return bytes / 4;
}

/// Every op of the body is one the ScalarEmitter knows (checked for dead ops
/// too, so that the fusion as written is what the kernel computes).
bool bodySupported(FusionOp fusion, std::string *why) {
  for (Operation &op : fusion.getBody().front().without_terminator()) {
    std::string reason;
    if (!ScalarEmitter::supportsOp(&op, &reason)) {
      if (why)
        *why = reason;
      return false;
    }
  }
  return true;
}

/// Whether two buffers share bytes.
bool overlap(const BufferSlot &a, const BufferSlot &b) {
  return a.resident == b.resident && (!a.resident || a.name == b.name) &&
         a.offset < b.offset + b.size && b.offset < a.offset + a.size;
}

/// The results of `group` in the sets that one group must hold whole, each
/// ascending, the sets in order of their first result. A result written over
/// an input that another result is computed from (an optimizer's moment or
/// master weight, updated in place) must be computed by the threads that
/// read that input, before they overwrite it. Split into two groups, the
/// other group's blocks would read the input before or after it is
/// overwritten as they happen to be scheduled, and a later kernel would
/// always read the new value: an optimizer's update, split that way, took
/// the new moment for the old one in some runs and not in others. Buffers
/// come from the memory plan; without one nothing is tied.
SmallVector<SmallVector<unsigned>> inseparableResults(FusionOp fusion,
                                                      const Group &group) {
  const size_t n = group.results.size();
  SmallVector<size_t> parent(n);
  for (size_t i = 0; i < n; ++i)
    parent[i] = i;
  std::function<size_t(size_t)> find = [&](size_t i) {
    return parent[i] == i ? i : parent[i] = find(parent[i]);
  };
  SmallVector<std::optional<BufferSlot>> written(n);
  for (size_t i = 0; i < n; ++i)
    if (FailureOr<BufferSlot> slot =
            bufferOf(fusion.getResult(group.results[i]));
        succeeded(slot))
      written[i] = *slot;
  for (size_t reader = 0; reader < n; ++reader) {
    Group one;
    one.shape = group.shape;
    one.results = {group.results[reader]};
    if (!analyze(fusion, one, nullptr))
      continue;
    for (unsigned input : one.inputs) {
      FailureOr<BufferSlot> read = bufferOf(fusion.getInputs()[input]);
      if (failed(read))
        continue;
      for (size_t writer = 0; writer < n; ++writer)
        if (writer != reader && written[writer] &&
            overlap(*written[writer], *read))
          parent[find(writer)] = find(reader);
    }
  }
  SmallVector<SmallVector<unsigned>> sets;
  llvm::DenseMap<size_t, size_t> setOf;
  for (size_t i = 0; i < n; ++i) {
    auto [it, added] = setOf.try_emplace(find(i), sets.size());
    if (added)
      sets.emplace_back();
    sets[it->second].push_back(group.results[i]);
  }
  return sets;
}

/// The buffers `group` reads (its inputs') and writes (its results').
SmallVector<BufferSlot> slotsOf(FusionOp fusion, const Group &group,
                                bool written) {
  SmallVector<BufferSlot> slots;
  for (unsigned i : written ? group.results : group.inputs) {
    Value v = written ? fusion.getResult(i) : fusion.getInputs()[i];
    if (FailureOr<BufferSlot> slot = bufferOf(v); succeeded(slot))
      slots.push_back(*slot);
  }
  return slots;
}

bool anyOverlap(ArrayRef<BufferSlot> a, ArrayRef<BufferSlot> b) {
  return llvm::any_of(a, [&](const BufferSlot &x) {
    return llvm::any_of(b, [&](const BufferSlot &y) { return overlap(x, y); });
  });
}

/// The round of each group: groups of one round may share a kernel, and the
/// kernels of a round run after those of the rounds before. A group that
/// writes a buffer another group reads (state shared by every parameter's
/// update, such as the dynamic loss scale's counters, updated in place)
/// runs a round after that group: in one kernel their blocks would run in
/// either order. Within a group every result is written by the thread that
/// reads its element, so a result of fewer elements than the group's root
/// (written by one thread) may not overwrite what a result of another shape
/// is computed from (read by every thread). Other threads may still read
/// such an input to recompute the broadcast result itself, but they do not
/// store it. Errors at the fusion for groups that would overwrite each
/// other's inputs.
FailureOr<SmallVector<unsigned>> kernelRounds(FusionOp fusion,
                                              ArrayRef<Group> groups) {
  const size_t n = groups.size();
  SmallVector<SmallVector<BufferSlot>> reads, writes;
  for (const Group &group : groups) {
    reads.push_back(slotsOf(fusion, group, false));
    writes.push_back(slotsOf(fusion, group, true));
  }
  auto yield = cast<YieldOp>(fusion.getBody().front().getTerminator());
  auto shapeOfResult = [&](unsigned r) {
    return shapeOf(yield.getValues()[r]);
  };
  // The buffers read for the results of `group` whose shape is not `shape`.
  auto readsForOtherShapes = [&](const Group &group, ArrayRef<int64_t> shape) {
    Group others;
    others.shape = group.shape;
    for (unsigned s : group.results)
      if (ArrayRef<int64_t>(shapeOfResult(s)) != shape)
        others.results.push_back(s);
    if (others.results.empty() || !analyze(fusion, others, nullptr))
      return SmallVector<BufferSlot>();
    return slotsOf(fusion, others, false);
  };
  for (const Group &group : groups)
    for (unsigned r : group.results) {
      ArrayRef<int64_t> shape = shapeOfResult(r);
      if (numElements(shape) == group.elements)
        continue;
      FailureOr<BufferSlot> slot = bufferOf(fusion.getResult(r));
      if (succeeded(slot) &&
          anyOverlap({*slot}, readsForOtherShapes(group, shape))) {
        emitFusionError(fusion)
            << "pointwise codegen: result #" << r
            << " has fewer elements than its kernel's root and is written "
               "over an input the kernel reads";
        return failure();
      }
    }
  SmallVector<unsigned> round(n, 0);
  for (size_t pass = 0;; ++pass) {
    bool changed = false;
    for (size_t w = 0; w < n; ++w)
      for (size_t r = 0; r < n; ++r)
        if (w != r && round[w] <= round[r] && anyOverlap(writes[w], reads[r])) {
          round[w] = round[r] + 1;
          changed = true;
        }
    if (!changed)
      return round;
    if (pass == n) {
      emitFusionError(fusion)
          << "pointwise codegen: results are written over inputs that other "
             "results of the fusion are computed from, both ways";
      return failure();
    }
  }
}

/// The results partitioned by shape, in order of first appearance.
SmallVector<Group> groupsByShape(FusionOp fusion) {
  SmallVector<Group> groups;
  for (auto [i, type] : llvm::enumerate(fusion.getResultTypes())) {
    ArrayRef<int64_t> shape = cast<RankedTensorType>(type).getShape();
    auto it = llvm::find_if(groups, [&](const Group &g) {
      return ArrayRef<int64_t>(g.shape) == shape;
    });
    if (it == groups.end()) {
      groups.emplace_back();
      groups.back().shape.assign(shape.begin(), shape.end());
      it = groups.end() - 1;
    }
    it->results.push_back(i);
  }
  return groups;
}

/// The root of a pointwise fusion: the largest result, to which every other
/// result broadcasts.
std::optional<Group> pointwiseGroup(FusionOp fusion, std::string *why) {
  if (fusion.getNumResults() == 0) {
    if (why)
      *why = "the fusion has no results";
    return std::nullopt;
  }
  if (!bodySupported(fusion, why))
    return std::nullopt;
  Group group;
  int64_t best = -1;
  for (Type type : fusion.getResultTypes()) {
    ArrayRef<int64_t> shape = cast<RankedTensorType>(type).getShape();
    if (numElements(shape) > best ||
        (numElements(shape) == best && shape.size() > group.shape.size())) {
      best = numElements(shape);
      group.shape.assign(shape.begin(), shape.end());
    }
  }
  for (auto [i, type] : llvm::enumerate(fusion.getResultTypes())) {
    if (!isBroadcastableTo(cast<RankedTensorType>(type).getShape(),
                           group.shape)) {
      if (why)
        *why = "result #" + std::to_string(i) +
               " does not broadcast to the root " + formatShape(group.shape);
      return std::nullopt;
    }
    group.results.push_back(i);
  }
  if (!analyze(fusion, group, why))
    return std::nullopt;
  return group;
}

std::optional<SmallVector<Group>> optimizerGroups(FusionOp fusion,
                                                  std::string *why) {
  if (!bodySupported(fusion, why))
    return std::nullopt;
  SmallVector<Group> groups = groupsByShape(fusion);
  if (groups.empty()) {
    if (why)
      *why = "the fusion has no results";
    return std::nullopt;
  }
  for (Group &group : groups)
    if (!analyze(fusion, group, why))
      return std::nullopt;
  return groups;
}

//===----------------------------------------------------------------------===//
// The emitter
//===----------------------------------------------------------------------===//

/// Whether every result broadcasts to the largest one (one loop suffices).
bool haveCommonRoot(FusionOp fusion) {
  ArrayRef<int64_t> largest;
  int64_t most = -1;
  for (Type type : fusion.getResultTypes()) {
    ArrayRef<int64_t> shape = cast<RankedTensorType>(type).getShape();
    if (numElements(shape) > most ||
        (numElements(shape) == most && shape.size() > largest.size())) {
      most = numElements(shape);
      largest = shape;
    }
  }
  return llvm::all_of(fusion.getResultTypes(), [&](Type type) {
    return isBroadcastableTo(cast<RankedTensorType>(type).getShape(), largest);
  });
}

} // namespace

std::optional<SmallVector<Group>> groupsOf(FusionOp fusion, std::string *why) {
  if (fusion.getKind() == "pointwise" && haveCommonRoot(fusion)) {
    std::optional<Group> group = pointwiseGroup(fusion, why);
    if (!group)
      return std::nullopt;
    return SmallVector<Group>{std::move(*group)};
  }
  if (fusion.getKind() == "pointwise" || fusion.getKind() == "optimizer")
    return optimizerGroups(fusion, why);
  if (why)
    *why =
        "kind \"" + fusion.getKind().str() + "\" is not pointwise or optimizer";
  return std::nullopt;
}

FailureOr<std::vector<KernelPlan>> planKernels(FusionOp fusion,
                                               const GpuTarget &target) {
  std::string why;
  SmallVector<Group> groups;
  if (std::optional<SmallVector<Group>> found = groupsOf(fusion, &why))
    groups = std::move(*found);
  if (groups.empty())
    return (emitFusionError(fusion) << "pointwise codegen: ") << why;

  // A group that alone needs too many pointers, or too many registers on
  // its vector path, is split by its results (same shape, fewer tensors
  // each), never between results that must stay together.
  SmallVector<Group> fitted;
  std::function<LogicalResult(Group &)> fit =
      [&](Group &group) -> LogicalResult {
    bool fewPointers =
        int64_t(group.inputs.size() + group.results.size()) <= kMaxPointerArgs;
    SmallVector<SmallVector<unsigned>> sets = inseparableResults(fusion, group);
    if (fewPointers &&
        (sets.size() == 1 || laneRegisters(fusion, group) <= kMaxLaneRegisters)) {
      fitted.push_back(std::move(group));
      return success();
    }
    if (sets.size() == 1)
      return (emitFusionError(fusion) << "pointwise codegen: result #")
             << group.results[0]
             << (group.results.size() > 1
                     ? " and the results written over what it reads read"
                     : " reads")
             << " more than " << kMaxPointerArgs << " inputs";
    size_t half = sets.size() / 2;
    for (auto part : {ArrayRef(sets).take_front(half),
                      ArrayRef(sets).drop_front(half)}) {
      Group piece;
      piece.shape = group.shape;
      for (const SmallVector<unsigned> &set : part)
        piece.results.append(set.begin(), set.end());
      llvm::sort(piece.results);
      if (!analyze(fusion, piece, &why))
        return (emitFusionError(fusion) << "pointwise codegen: ") << why;
      if (failed(fit(piece)))
        return failure();
    }
    return success();
  };
  for (Group &group : groups)
    if (failed(fit(group)))
      return failure();

  // Groups in kernels of at most kMaxPointerArgs parameters each, a group
  // that overwrites what others read after them (kernelRounds).
  FailureOr<SmallVector<unsigned>> rounds = kernelRounds(fusion, fitted);
  if (failed(rounds))
    return failure();
  std::vector<KernelPlan> kernels(1);
  llvm::DenseSet<unsigned> inputs, results;
  unsigned lastRound = 0;
  for (unsigned round = 0; !fitted.empty(); ++round) {
    for (auto [g, group] : llvm::enumerate(fitted)) {
      if ((*rounds)[g] != round)
        continue;
      llvm::DenseSet<unsigned> moreInputs = inputs;
      moreInputs.insert(group.inputs.begin(), group.inputs.end());
      size_t pointers =
          moreInputs.size() + results.size() + group.results.size();
      if ((pointers > kMaxPointerArgs || round != lastRound) &&
          !kernels.back().groups.empty()) {
        kernels.emplace_back();
        inputs.clear();
        results.clear();
        moreInputs =
            llvm::DenseSet<unsigned>(group.inputs.begin(), group.inputs.end());
      }
      lastRound = round;
      inputs = std::move(moreInputs);
      results.insert(group.results.begin(), group.results.end());
      kernels.back().groups.push_back(std::move(group));
    }
    if (round == *llvm::max_element(*rounds))
      break;
  }

  // Index type: int unless some tensor (or a loop bound) needs 64 bits.
  Block &body = fusion.getBody().front();
  int64_t largest = 0;
  for (Value v : body.getArguments())
    largest = std::max(largest, numElements(shapeOf(v)));
  body.walk([&](Operation *op) {
    for (Value v : op->getResults())
      largest = std::max(largest, numElements(shapeOf(v)));
  });
  for (KernelPlan &plan : kernels) {
    if (largest >= (int64_t(1) << 30))
      plan.indexType = "long long";
    layOut(plan, target);
  }
  return kernels;
}

void layOut(KernelPlan &plan, const GpuTarget &target) {
  int64_t mostSteps = 1;
  for (const Group &g : plan.groups)
    mostSteps = std::max<int64_t>(
        mostSteps, ::kiln::pointwise::steps(g.elements, g.width));
  plan.threads = ::kiln::pointwise::block_threads(mostSteps);
  plan.starts = {0};
  for (const Group &g : plan.groups)
    plan.starts.push_back(
        plan.starts.back() +
        ::kiln::pointwise::group_blocks(g.elements, g.width, plan.threads,
                                        maxGroupBlocks(target)));
}

namespace {

/// What is fused and how it is partitioned, for the head of the source.
std::string headerOf(FusionOp fusion, const KernelPlan &plan) {
  std::string header;
  llvm::raw_string_ostream os(header);
  // The fused ops by name, in order of first appearance, with counts.
  os << "// kiln fusion \"" << fusion.getKind() << "\": ";
  llvm::MapVector<StringRef, unsigned> counts;
  for (Operation &op : fusion.getBody().front().without_terminator())
    ++counts[op.getName().stripDialect()];
  for (auto [i, entry] : llvm::enumerate(counts))
    os << (i ? ", " : "") << entry.first
       << (entry.second > 1 ? " x" + std::to_string(entry.second) : "");
  if (counts.empty())
    os << "(copies only)";
  os << "\n";
  for (auto [g, group] : llvm::enumerate(plan.groups)) {
    os << "// group " << g << ": shape " << formatShape(group.shape) << ", "
       << group.elements << " elements, results";
    for (unsigned r : group.results)
      os << " #" << r;
    os << "; blocks [" << plan.starts[g] << ", " << plan.starts[g + 1] << ")";
    if (group.width > 1)
      os << "; " << group.width << " elements per thread step when aligned";
    os << "\n";
  }
  return header;
}

/// One line for --stats: the groups' widths and the launch.
std::string configurationOf(const KernelPlan &plan) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (plan.groups.size() == 1)
    os << plan.groups[0].elements << " elements, width "
       << plan.groups[0].width;
  else {
    os << plan.groups.size() << " groups, widths";
    for (auto [g, group] : llvm::enumerate(plan.groups))
      os << (g ? "," : " ") << group.width;
  }
  os << ", " << plan.starts.back() << " blocks of " << plan.threads
     << " threads, index " << plan.indexType;
  return text;
}

} // namespace

FailureOr<KernelSpec> kernelSpec(FusionOp fusion, const KernelPlan &plan) {
  Block &body = fusion.getBody().front();
  bool multi = plan.groups.size() > 1;
  KernelSpec spec;
  spec.prefix = "kiln_" + fusion.getKind().str();
  spec.header = headerOf(fusion, plan);
  spec.templateName = multi ? "optimizer" : "pointwise";
  spec.templates = {multi ? "kiln/optimizer.cuh" : "kiln/pointwise.cuh",
                    kScalarOpsHeader.str()};
  spec.configuration = configurationOf(plan);

  // Parameters: the inputs any group reads, then the results.
  llvm::SmallSetVector<unsigned, 16> inputSet;
  SmallVector<unsigned> results;
  for (const Group &g : plan.groups) {
    inputSet.insert(g.inputs.begin(), g.inputs.end());
    results.append(g.results.begin(), g.results.end());
  }
  SmallVector<unsigned> inputs(inputSet.begin(), inputSet.end());
  llvm::sort(inputs);
  llvm::sort(results);
  for (unsigned i : inputs)
    spec.addParam(
        "const " +
            storageCType(tensorType(body.getArgument(i)).getElementType())
                .str() +
            " *",
        paramName(false, i), LaunchArg::operand(i));
  for (unsigned r : results)
    spec.addParam(
        storageCType(tensorType(fusion.getResult(r)).getElementType()).str() +
            " *",
        paramName(true, r), LaunchArg::result(r));

  // One functor per group, built from the kernel's pointers.
  std::string structs, groupArgs;
  for (auto [g, group] : llvm::enumerate(plan.groups)) {
    std::string name = "group" + std::to_string(g);
    FailureOr<std::string> functor =
        groupFunctor(fusion, plan, g, name, structs);
    if (failed(functor))
      return failure();
    structs += *functor;
    std::string args;
    for (unsigned i : group.inputs)
      args += (args.empty() ? "" : ", ") + paramName(false, i);
    for (unsigned r : group.results)
      args += (args.empty() ? "" : ", ") + paramName(true, r);
    groupArgs += (g ? ",\n      " : "") + name + "{" + args + "}";
  }
  spec.functors = "typedef " + plan.indexType + " kiln_index;\n\n" + structs;
  if (multi) {
    spec.functors += "\n// Group g runs on blocks [start(g), start(g + 1)).\n"
                     "typedef kiln::pointwise::block_ranges<";
    for (auto [i, s] : llvm::enumerate(plan.starts))
      spec.functors += (i ? ", " : "") + std::to_string(s);
    spec.functors += "> ranges;\n";
    spec.body = "  kiln::pointwise::multi_tensor<ranges>(\n      ctx, " +
                groupArgs + ");\n";
  } else {
    spec.body = "  kiln::pointwise::run(ctx, " + groupArgs + ");\n";
  }
  spec.grid = {static_cast<uint32_t>(plan.starts.back()), 1, 1};
  spec.block = {static_cast<uint32_t>(plan.threads), 1, 1};
  return spec;
}

namespace {

/// The plans as #kiln_cuda.pointwise records them.
cuda::PointwiseAttr pointwiseAttrOf(MLIRContext *context,
                                    ArrayRef<KernelPlan> plans) {
  SmallVector<int64_t> threads, widths, blocks;
  for (const KernelPlan &plan : plans) {
    threads.push_back(plan.threads);
    for (auto [g, group] : llvm::enumerate(plan.groups)) {
      widths.push_back(group.width);
      blocks.push_back(plan.starts[g + 1] - plan.starts[g]);
    }
  }
  return cuda::PointwiseAttr::get(context, threads, widths, blocks);
}

/// The planner's kernels of `fusion` with the block sizes, widths and
/// blocks `fusion` records (checked against the groups; errors at the
/// fusion), or as planned where it records none.
FailureOr<std::vector<KernelPlan>> recordedPlans(FusionOp fusion,
                                                 const GpuTarget &target) {
  FailureOr<cuda::PointwiseAttr> recorded =
      recordedKernel<cuda::PointwiseAttr>(fusion);
  if (failed(recorded))
    return failure();
  FailureOr<std::vector<KernelPlan>> plans = planKernels(fusion, target);
  if (failed(plans) || !*recorded)
    return plans;
  ArrayRef<int64_t> threads = recorded->getThreads(),
                    widths = recorded->getWidths(),
                    blocks = recorded->getBlocks();
  size_t groups = 0;
  for (const KernelPlan &plan : *plans)
    groups += plan.groups.size();
  if (threads.size() != plans->size() || widths.size() != groups)
    return emitRecordedKernelError(fusion)
           << "the results fall into " << groups << " groups of "
           << plans->size() << " kernels, not " << widths.size() << " of "
           << threads.size();
  size_t next = 0;
  for (auto [plan, size] : llvm::zip(*plans, threads)) {
    plan.threads = size;
    plan.starts = {0};
    for (Group &group : plan.groups) {
      if (group.width % widths[next] != 0)
        return emitRecordedKernelError(fusion)
               << "group " << next << " moves " << group.width
               << " elements per step or a power of two fewer, not "
               << widths[next];
      group.width = widths[next];
      plan.starts.push_back(plan.starts.back() + blocks[next++]);
    }
  }
  return plans;
}

class PointwiseEmitter final : public KernelEmitter {
public:
  bool matches(FusionOp fusion) const override {
    return groupsOf(fusion, nullptr).has_value();
  }

  FailureOr<GeneratedFusion>
  emit(FusionOp fusion, const CodegenOptions &options) const override {
    FailureOr<std::vector<KernelPlan>> plans =
        recordedPlans(fusion, options.target());
    if (failed(plans))
      return failure();
    FusionBuilder builder("");
    for (const KernelPlan &plan : *plans) {
      FailureOr<KernelSpec> spec = kernelSpec(fusion, plan);
      if (failed(spec))
        return failure();
      builder.kernel(std::move(*spec));
    }
    return builder.take();
  }

  FailureOr<Attribute>
  selectKernel(FusionOp fusion, const CodegenOptions &options) const override {
    FailureOr<std::vector<KernelPlan>> plans =
        planKernels(fusion, options.target());
    if (failed(plans))
      return failure();
    return Attribute(pointwiseAttrOf(fusion.getContext(), *plans));
  }

  LogicalResult verifyKernel(FusionOp fusion, Attribute,
                             const CodegenOptions &options) const override {
    return failure(failed(recordedPlans(fusion, options.target())));
  }
};

} // namespace
} // namespace mlir::kiln::codegen::pointwise

namespace mlir::kiln::codegen {

std::unique_ptr<KernelEmitter> createPointwiseEmitter() {
  return std::make_unique<pointwise::PointwiseEmitter>();
}

static const EmitterRegistration registration(EmitterOrder::Pointwise,
                                              createPointwiseEmitter);

} // namespace mlir::kiln::codegen
