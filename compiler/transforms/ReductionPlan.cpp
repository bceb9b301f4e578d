//===- ReductionPlan.cpp - how the ops of a reduction fusion compose ------===//

#include "compiler/transforms/ReductionPlan.h"

#include "compiler/transforms/KernelBudget.h"
#include "compiler/transforms/OpClasses.h"
#include "dialects/kiln/Utils/ShapeInference.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <functional>
#include <numeric>

namespace mlir::kiln {

bool isPrimitiveReduction(Operation *op) {
  return isa<ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp>(op);
}

llvm::ArrayRef<int64_t> reducedDimsOf(Operation *op) {
  if (auto r = dyn_cast<ReduceSumOp>(op))
    return r.getDims();
  if (auto r = dyn_cast<ReduceMeanOp>(op))
    return r.getDims();
  if (auto r = dyn_cast<ReduceMaxOp>(op))
    return r.getDims();
  return cast<ReduceMinOp>(op).getDims();
}

static llvm::ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

bool sameElements(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b) {
  auto withoutOnes = [](llvm::ArrayRef<int64_t> shape) {
    llvm::SmallVector<int64_t> out;
    for (int64_t d : shape)
      if (d != 1)
        out.push_back(d);
    return out;
  };
  return withoutOnes(a) == withoutOnes(b);
}

int64_t ReductionSpace::elements() const { return numElements(shape); }

int64_t ReductionSpace::rowLength() const {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= shape[d];
  return n;
}

int64_t ReductionSpace::rows() const {
  int64_t n = 1;
  for (int64_t d = 0, e = shape.size(); d < e; ++d)
    if (!llvm::is_contained(dims, d))
      n *= shape[d];
  return n;
}

bool ReductionSpace::innermost() const {
  for (int64_t d = 0, e = shape.size(); d < e; ++d)
    if (shape[d] != 1 && !llvm::is_contained(dims, d) && !dims.empty() &&
        d > dims.front())
      return false;
  return true;
}

llvm::SmallVector<int64_t> ReductionSpace::rowShape() const {
  llvm::SmallVector<int64_t> out(shape);
  for (int64_t d : dims)
    out[d] = 1;
  return out;
}

/// The reduced dims of `op` that matter (size > 1), ascending.
static llvm::SmallVector<int64_t> normalizedDims(Operation *op) {
  llvm::ArrayRef<int64_t> shape = shapeOf(op->getOperand(0));
  llvm::SmallVector<int64_t> dims;
  for (int64_t d : reducedDimsOf(op))
    if (shape[d] != 1)
      dims.push_back(d);
  llvm::sort(dims);
  return dims;
}

bool isWholeTensorReduction(Operation *op) {
  return isPrimitiveReduction(op) &&
         numElements(shapeOf(op->getResult(0))) == 1;
}

bool reductionsMayShareAPlan(Operation *a, Operation *b) {
  if (isWholeTensorReduction(a) && isWholeTensorReduction(b))
    return true;
  return shapeOf(a->getOperand(0)) == shapeOf(b->getOperand(0)) &&
         normalizedDims(a) == normalizedDims(b);
}

bool ReductionPlan::isRowValue(Value v) const {
  if (!reductionDependent.contains(v))
    return false;
  if (form == Form::MultiTensor)
    return numElements(shapeOf(v)) == 1;
  return sameElements(shapeOf(v), spaces.front().rowShape());
}

const ReductionSpace &ReductionPlan::spaceOf(Operation *reduction) const {
  for (const ReductionSpace &space : spaces)
    if (llvm::is_contained(space.reductions, reduction))
      return space;
  llvm_unreachable("not a planned reduction");
}

/// Whether a row value of shape `v`, read at the elements of `space`, is
/// the value of the element's own row: numpy broadcasting maps every
/// element of a row onto it (it is 1 along the reduced dims) and different
/// rows onto their own entries.
static bool broadcastsAlongRows(llvm::ArrayRef<int64_t> v,
                                const ReductionSpace &space) {
  int64_t rank = space.shape.size(), offset = rank - int64_t(v.size());
  if (offset < 0)
    return false;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t size = d >= offset ? v[d - offset] : 1;
    if (size == 1)
      continue;
    if (llvm::is_contained(space.dims, d) || size != space.shape[d])
      return false;
  }
  return true;
}

namespace {
/// Where a value is evaluated: at the elements of space `space`, or (space
/// kRow) once per row.
constexpr int kRow = -1;

class Planner {
public:
  Planner(llvm::ArrayRef<Operation *> ops, llvm::ArrayRef<Value> outputs,
          std::string *why)
      : ops(ops), outputs(outputs), why(why), members(ops.begin(), ops.end()) {}

  FailureOr<ReductionPlan> run() {
    if (failed(checkOps()) || failed(checkInputs()) || failed(formSpaces()) ||
        failed(placeOutputs()) || failed(placeValues()) ||
        failed(checkKernelShape()))
      return failure();
    return std::move(plan);
  }

private:
  LogicalResult fail(const llvm::Twine &reason) {
    if (why)
      *why = reason.str();
    return failure();
  }

  bool isMember(Value v) const {
    Operation *op = v.getDefiningOp();
    return op && members.contains(op);
  }

  /// Every op is a primitive reduction or element-wise; stages and
  /// reduction dependence in one walk over the block order.
  LogicalResult checkOps() {
    llvm::DenseMap<Value, unsigned> level; // 1 + the last stage it uses
    bool any = false;
    for (Operation *op : ops) {
      bool reduction = isPrimitiveReduction(op);
      if (!reduction && classify(op) != OpClass::Pointwise)
        return fail("'" + op->getName().getStringRef() +
                    "' is neither a primitive reduction nor element-wise");
      if (op->getNumResults() != 1 || op->getNumRegions() != 0)
        return fail("'" + op->getName().getStringRef() +
                    "' has several results");
      unsigned in = 0;
      for (Value operand : op->getOperands())
        in = std::max(in, level.lookup(operand));
      Value result = op->getResult(0);
      if (reduction) {
        any = true;
        plan.stageOf[op] = in;
        plan.numStages = std::max(plan.numStages, in + 1);
        level[result] = in + 1;
      } else {
        level[result] = in;
      }
      if (level[result] > 0)
        plan.reductionDependent.insert(result);
    }
    if (!any)
      return fail("no reduction");
    return success();
  }

  /// A kernel takes every input and output tensor as a pointer parameter,
  /// and one launch passes only so many (KernelBudget.h): the norm of a
  /// model with very many parameters becomes a few multi-tensor kernels.
  LogicalResult checkInputs() {
    const int64_t budget = kernelTensorBudget("reduction");
    llvm::DenseSet<Value> inputs;
    for (Operation *op : ops)
      for (Value operand : op->getOperands())
        if (!isMember(operand))
          inputs.insert(operand);
    if (int64_t(inputs.size() + outputs.size()) > budget)
      return fail("more than " + llvm::Twine(budget) +
                  " input and output tensors");
    return success();
  }

  LogicalResult formSpaces() {
    bool wholeTensors = true;
    for (Operation *op : ops) {
      if (!isPrimitiveReduction(op))
        continue;
      llvm::ArrayRef<int64_t> shape = shapeOf(op->getOperand(0));
      llvm::SmallVector<int64_t> dims = normalizedDims(op);
      wholeTensors &= numElements(shapeOf(op->getResult(0))) == 1;
      auto it = llvm::find_if(plan.spaces, [&](const ReductionSpace &s) {
        return llvm::ArrayRef<int64_t>(s.shape) == shape && s.dims == dims;
      });
      if (it == plan.spaces.end()) {
        if (numElements(shape) == 0)
          return fail("a reduction over an empty tensor");
        plan.spaces.emplace_back();
        plan.spaces.back().shape.assign(shape.begin(), shape.end());
        plan.spaces.back().dims = dims;
        it = plan.spaces.end() - 1;
      }
      it->reductions.push_back(op);
    }
    if (wholeTensors && plan.numStages == 1)
      splitIntoSegments();
    if (plan.spaces.size() > 1) {
      if (!wholeTensors || plan.numStages > 1)
        return fail("reductions over different shapes or dims must all be "
                    "whole-tensor reductions that do not read each other");
      plan.form = ReductionPlan::Form::MultiTensor;
    }
    return success();
  }

  /// Independent whole-tensor reductions of the same shape but of different
  /// tensors become spaces of their own (a multi-tensor kernel gives each its
  /// blocks, and a thread then keeps few accumulators): reductions stay
  /// together only when their prologues share an op or an input.
  void splitIntoSegments() {
    llvm::SmallVector<ReductionSpace> segments;
    for (ReductionSpace &space : plan.spaces) {
      // Union-find over the space's reductions.
      llvm::SmallVector<unsigned> parent(space.reductions.size());
      std::iota(parent.begin(), parent.end(), 0u);
      std::function<unsigned(unsigned)> find = [&](unsigned i) {
        return parent[i] == i ? i : parent[i] = find(parent[i]);
      };
      llvm::DenseMap<Value, unsigned>
          owner; // a value of a prologue, first reader
      for (auto [i, r] : llvm::enumerate(space.reductions)) {
        llvm::SmallVector<Value> stack = {r->getOperand(0)};
        llvm::DenseSet<Value> seen;
        while (!stack.empty()) {
          Value v = stack.pop_back_val();
          Operation *op = v.getDefiningOp();
          // Constants are copied into every use: sharing one links nothing.
          if (!seen.insert(v).second || (op && isa<ConstantOp>(op)))
            continue;
          auto [it, inserted] = owner.try_emplace(v, i);
          if (!inserted)
            parent[find(i)] = find(it->second);
          if (op && members.contains(op))
            llvm::append_range(stack, op->getOperands());
        }
      }
      llvm::DenseMap<unsigned, unsigned> segmentOf; // root -> segment index
      for (auto [i, r] : llvm::enumerate(space.reductions)) {
        auto [it, inserted] = segmentOf.try_emplace(find(i), segments.size());
        if (inserted) {
          segments.emplace_back();
          segments.back().shape = space.shape;
          segments.back().dims = space.dims;
        }
        segments[it->second].reductions.push_back(r);
      }
      for (auto &[value, reader] : owner)
        prologueSegment[value] = segmentOf.lookup(find(reader));
    }
    plan.spaces = std::move(segments);
  }

  /// Whether a value of `shape` can be evaluated once per row.
  bool rowShaped(llvm::ArrayRef<int64_t> shape) const {
    if (plan.form == ReductionPlan::Form::MultiTensor)
      return numElements(shape) == 1;
    const ReductionSpace &space = plan.spaces.front();
    return shape.size() <= space.shape.size() &&
           (numElements(shape) == 1 || sameElements(shape, space.rowShape()));
  }

  LogicalResult placeOutputs() {
    for (Value v : outputs) {
      if (!isMember(v))
        return fail("an output is not computed by the planned ops");
      if (plan.reductionDependent.contains(v)) {
        if (plan.isRowValue(v)) {
          plan.rowOutputs.push_back(v);
          push(v, kRow);
          continue;
        }
        // Stored at the elements of the (single) space.
        ReductionSpace &space = plan.spaces.front();
        if (plan.form == ReductionPlan::Form::Rows &&
            sameElements(shapeOf(v), space.shape)) {
          space.elementOutputs.push_back(v);
          push(v, 0);
          continue;
        }
        return fail("an output that uses a reduction's result has neither one "
                    "element per row nor one per element");
      }
      auto it = llvm::find_if(plan.spaces, [&](const ReductionSpace &s) {
        return sameElements(shapeOf(v), s.shape);
      });
      // A prologue value is stored by the segment that computes it.
      if (auto segment = prologueSegment.find(v);
          segment != prologueSegment.end() &&
          sameElements(shapeOf(v), plan.spaces[segment->second].shape))
        it = plan.spaces.begin() + segment->second;
      if (it != plan.spaces.end()) {
        it->elementOutputs.push_back(v);
        push(v, it - plan.spaces.begin());
        continue;
      }
      if (plan.form == ReductionPlan::Form::Rows && rowShaped(shapeOf(v))) {
        plan.rowOutputs.push_back(v);
        push(v, kRow);
        continue;
      }
      return fail("an output has neither the elements of a reduced tensor nor "
                  "one element per row");
    }
    return success();
  }

  void push(Value v, int where) {
    if (placed.insert({v, where}).second)
      worklist.push_back({v, where});
  }

  /// Follows every evaluation back to the inputs and checks that each value
  /// can be evaluated where it is needed.
  LogicalResult placeValues() {
    for (auto [s, space] : llvm::enumerate(plan.spaces))
      for (Operation *r : space.reductions)
        push(r->getOperand(0), s);
    while (!worklist.empty()) {
      auto [v, where] = worklist.pop_back_val();
      Operation *op = v.getDefiningOp();
      bool member = isMember(v);
      llvm::ArrayRef<int64_t> shape = shapeOf(v);
      if (where == kRow) {
        if (!rowShaped(shape))
          return fail("a value of shape " + formatShape(shape) +
                      " is needed once per row but has another number of "
                      "elements");
        if (!member || isPrimitiveReduction(op))
          continue;
        // These read their own coordinates, which a per-row evaluation of a
        // differently shaped value does not provide.
        if (isa<IotaOp, TriuOp, TrilOp>(op))
          return fail("'" + op->getName().getStringRef() +
                      "' evaluated once per row");
        for (Value operand : op->getOperands())
          push(operand, kRow);
        continue;
      }
      const ReductionSpace &space = plan.spaces[where];
      if (!isBroadcastableTo(shape, space.shape))
        return fail("a value of shape " + formatShape(shape) +
                    " does not broadcast to the reduced shape " +
                    formatShape(space.shape));
      if (!member)
        continue;
      if (plan.reductionDependent.contains(v)) {
        if (plan.form == ReductionPlan::Form::MultiTensor)
          return fail("whole-tensor reductions over several shapes cannot feed "
                      "element values");
        plan.needsRowKernel = true;
        if (isPrimitiveReduction(op) || plan.isRowValue(v)) {
          if (!broadcastsAlongRows(shape, space))
            return fail("a per-row value of shape " + formatShape(shape) +
                        " does not broadcast back along the rows of " +
                        formatShape(space.shape));
          push(v, kRow);
          continue;
        }
      }
      for (Value operand : op->getOperands())
        push(operand, where);
    }
    return success();
  }

  LogicalResult checkKernelShape() {
    // Column mode (kernels/reduce_dims.cuh) combines a tile of 8 x 33
    // threads' accumulators in shared memory: at 8 bytes an accumulator,
    // 16 reductions take 33 KiB of the 48 KiB a block has statically.
    constexpr size_t kMaxColumnReductions = 16;
    for (const ReductionSpace &space : plan.spaces)
      if (plan.form == ReductionPlan::Form::Rows && !space.innermost() &&
          space.reductions.size() > kMaxColumnReductions)
        return fail("more than " + llvm::Twine(kMaxColumnReductions) +
                    " reductions over outer dims");
    if (plan.numStages > 1)
      plan.needsRowKernel = true;
    if (!plan.needsRowKernel)
      return success();
    const ReductionSpace &space = plan.spaces.front();
    if (!space.innermost())
      return fail("a row kernel needs the innermost dims reduced");
    // One block per row: too few rows of great length would leave the GPU
    // idle (the generic kernels split such rows over blocks instead).
    if (space.rows() < 32 && space.rowLength() > 65536)
      return fail("too few rows for a row kernel");
    return success();
  }

  llvm::ArrayRef<Operation *> ops;
  llvm::ArrayRef<Value> outputs;
  std::string *why;
  llvm::SmallPtrSet<Operation *, 16> members;
  ReductionPlan plan;
  /// The segment (space) whose prologue computes a value, after
  /// splitIntoSegments.
  llvm::DenseMap<Value, unsigned> prologueSegment;
  llvm::DenseSet<std::pair<Value, int>> placed;
  llvm::SmallVector<std::pair<Value, int>> worklist;
};
} // namespace

FailureOr<ReductionPlan> planReduction(llvm::ArrayRef<Operation *> ops,
                                       llvm::ArrayRef<Value> outputs,
                                       std::string *why) {
  return Planner(ops, outputs, why).run();
}

FailureOr<ReductionPlan> planReduction(FusionOp fusion, std::string *why) {
  Block &body = fusion.getBody().front();
  llvm::SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  llvm::SetVector<Value> outputs;
  for (Value v : body.getTerminator()->getOperands())
    outputs.insert(v);
  return planReduction(ops, outputs.getArrayRef(), why);
}

} // namespace mlir::kiln
