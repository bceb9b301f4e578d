//===- LayoutAssignment.cpp - convolutional graphs channels-last ----------===//
//
// Layout assignment as a graph partition. A rank-4 activation can be held
// NCHW or NHWC as long as every op that touches it can take either: those
// ops (layoutFlexible below) tie their rank-4 operands and results into one
// region, and a region that holds an NCHW convolution is rewritten NHWC as
// a whole: its values change type (dims permuted by kToNhwc), its ops their
// attributes. Where a region's value comes from outside (a function
// argument, a reshape, ...) one transpose brings it in; where a value is
// read outside, one transpose takes it back. So the layout changes only at
// the region's edges, as XLA's layout assignment leaves copies only where a
// layout constraint meets another; the convolution kernels then need no
// NCHW gathers. A transpose of a constant (an inference model's filters) is
// folded into the constant, which the artifact then stores NHWC; trained
// filters are function arguments in the user's layout and are read through
// a transpose.
//
//===----------------------------------------------------------------------===//

#include "compiler/transforms/LayoutAssignment.h"

#include "compiler/transforms/Fusion.h"
#include "compiler/transforms/OpClasses.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cstring>
#include <vector>

namespace mlir::kiln {

#define GEN_PASS_DEF_KILNASSIGNLAYOUTS
#include "compiler/transforms/Passes.h.inc"

namespace {

/// NHWC dim i is NCHW dim kToNhwc[i].
constexpr int64_t kToNhwc[] = {0, 2, 3, 1};
constexpr int64_t kToNchw[] = {0, 3, 1, 2};

bool isRank4(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && type.getRank() == 4;
}

/// The NHWC position of NCHW dim `dim`.
int64_t nhwcDim(int64_t dim) {
  return llvm::find(kToNhwc, dim) - std::begin(kToNhwc);
}

template <typename T>
SmallVector<T> permuted(ArrayRef<T> values) {
  return {values[kToNhwc[0]], values[kToNhwc[1]], values[kToNhwc[2]],
          values[kToNhwc[3]]};
}

/// `value`'s elements moved as `transpose` moves them (result index j holds
/// input index i with i[perm[k]] = j[k]), or null for elements of less than
/// a byte (i1), which the raw data packs.
DenseElementsAttr transposedElements(DenseElementsAttr value,
                                     TransposeOp transpose) {
  auto type = transpose.getType();
  if (value.isSplat())
    return value.reshape(type);
  unsigned bits = type.getElementTypeBitWidth();
  if (bits % 8)
    return {};
  const size_t bytes = bits / 8;
  ArrayRef<int64_t> in = value.getType().getShape(), out = type.getShape();
  ArrayRef<int64_t> perm = transpose.getPerm();
  // The input stride of each result dim.
  SmallVector<int64_t> inStrides(in.size(), 1), strides(out.size());
  for (int64_t d = static_cast<int64_t>(in.size()) - 2; d >= 0; --d)
    inStrides[d] = inStrides[d + 1] * in[d + 1];
  for (size_t k = 0; k < out.size(); ++k)
    strides[k] = inStrides[perm[k]];
  ArrayRef<char> raw = value.getRawData();
  std::vector<char> moved(raw.size());
  SmallVector<int64_t> index(out.size(), 0);
  for (size_t j = 0, count = value.getNumElements(); j < count; ++j) {
    int64_t from = 0;
    for (size_t k = 0; k < out.size(); ++k)
      from += index[k] * strides[k];
    std::memcpy(&moved[j * bytes], &raw[from * bytes], bytes);
    for (int64_t k = static_cast<int64_t>(out.size()) - 1; k >= 0; --k) {
      if (++index[k] < out[k])
        break;
      index[k] = 0;
    }
  }
  return DenseElementsAttr::getFromRawBuffer(type, moved);
}

RankedTensorType nhwcType(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  return RankedTensorType::get(permuted(tensor.getShape()),
                               tensor.getElementType());
}

/// A reduction over `dims` of a rank-4 input whose remaining dims keep
/// their order under the permutation (a result without `keepdim` is then
/// the same tensor in either layout).
bool keepsOrder(ArrayRef<int64_t> dims) {
  int64_t last = -1;
  for (int64_t dim : kToNhwc) {
    if (llvm::is_contained(dims, dim))
      continue;
    if (dim < last)
      return false;
    last = dim;
  }
  return true;
}

bool isElementwise(Operation *op) {
  return classify(op) == OpClass::Pointwise && op->getNumOperands() > 0 &&
         op->getNumResults() == 1 && isRank4(op->getResult(0)) &&
         !isa<BroadcastToOp, DropoutOp, TriuOp, TrilOp>(op);
}

/// The layout attribute of a convolution or pool (the ops that slide a
/// window over the spatial dims), or nullopt for any other op.
std::optional<ConvLayout> windowLayout(Operation *op) {
  return TypeSwitch<Operation *, std::optional<ConvLayout>>(op)
      .Case<Conv2dOp, MaxPool2dOp, AvgPool2dOp>(
          [](auto window) { return window.getLayout(); })
      .Default([](Operation *) { return std::nullopt; });
}

/// The operand positions of `op` that hold rank-4 activations if `op` can
/// run in either layout, or nullopt. Its rank-4 results are activations too.
std::optional<SmallVector<unsigned>> layoutFlexible(Operation *op) {
  auto first = [&]() -> std::optional<SmallVector<unsigned>> {
    if (!isRank4(op->getOperand(0)))
      return std::nullopt;
    return SmallVector<unsigned>{0};
  };
  if (std::optional<ConvLayout> layout = windowLayout(op))
    return *layout == ConvLayout::nchw ? first() : std::nullopt;
  if (auto norm = dyn_cast<BatchNormOp>(op))
    return norm.getDim() == 1 ? first() : std::nullopt;
  if (auto norm = dyn_cast<GroupNormOp>(op))
    return norm.getDim() == 1 ? first() : std::nullopt;
  if (isa<ResizeOp, PadOp>(op))
    return first();
  if (isa<ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp>(op)) {
    auto dims = op->getAttrOfType<DenseI64ArrayAttr>("dims").asArrayRef();
    if (!isRank4(op->getOperand(0)) ||
        !(op->hasAttr("keepdim") || keepsOrder(dims)))
      return std::nullopt;
    return SmallVector<unsigned>{0};
  }
  if (isa<ConcatOp>(op) || isElementwise(op)) {
    SmallVector<unsigned> positions;
    for (auto [index, operand] : llvm::enumerate(op->getOperands()))
      if (isRank4(operand))
        positions.push_back(index);
    if (isa<ConcatOp>(op) && positions.size() != op->getNumOperands())
      return std::nullopt;
    return positions;
  }
  return std::nullopt;
}

/// Regions of rank-4 values tied together by layout-flexible ops.
class Regions {
public:
  Value find(Value value) {
    auto it = parent.find(value);
    if (it == parent.end() || it->second == value)
      return value;
    return it->second = find(it->second);
  }
  void join(Value a, Value b) {
    a = find(a), b = find(b);
    if (a != b)
      parent[a] = b;
  }

private:
  llvm::DenseMap<Value, Value> parent;
};

class ChannelsLast {
public:
  explicit ChannelsLast(func::FuncOp function) : function(function) {}

  int64_t run() {
    partition();
    if (members.empty())
      return 0;
    for (Operation &op : llvm::make_early_inc_range(function.getBody().front()))
      if (members.count(&op))
        rewrite(&op);
    foldTransposes();
    foldConstantTransposes();
    return members.size();
  }

private:
  /// Finds the regions and keeps, as members, the ops of those that hold an
  /// NCHW convolution.
  void partition() {
    Regions regions;
    llvm::DenseMap<Operation *, SmallVector<unsigned>> candidates;
    for (Operation &op : function.getBody().front()) {
      std::optional<SmallVector<unsigned>> positions = layoutFlexible(&op);
      if (!positions)
        continue;
      SmallVector<Value> values;
      for (unsigned position : *positions)
        values.push_back(op.getOperand(position));
      for (Value result : op.getResults())
        if (isRank4(result))
          values.push_back(result);
      for (Value value : llvm::drop_begin(values))
        regions.join(values.front(), value);
      candidates[&op] = std::move(*positions);
    }
    llvm::DenseSet<Value> converted;
    for (auto &[op, positions] : candidates)
      if (isa<Conv2dOp>(op))
        converted.insert(regions.find(op->getOperand(0)));
    for (auto &[op, positions] : candidates) {
      Value any = positions.empty() ? op->getResult(0)
                                    : op->getOperand(positions.front());
      if (converted.count(regions.find(any)))
        activations[op] = positions, members.insert(op);
    }
  }

  bool isActivationUse(OpOperand &use) {
    auto it = activations.find(use.getOwner());
    return it != activations.end() &&
           llvm::is_contained(it->second, use.getOperandNumber());
  }

  /// `value` (NCHW, from outside the regions) transposed NHWC once, right
  /// after its definition.
  Value enter(Value value) {
    Value &nhwc = entered[value];
    if (nhwc)
      return nhwc;
    OpBuilder builder(function.getContext());
    if (Operation *def = value.getDefiningOp())
      builder.setInsertionPointAfter(def);
    else
      builder.setInsertionPointToStart(value.getParentBlock());
    nhwc = builder.create<TransposeOp>(value.getLoc(), value, kToNhwc);
    return nhwc;
  }

  /// A per-channel operand of rank below 4, broadcast from the right against
  /// NCHW, as the same operand broadcast against NHWC.
  Value broadcastOperand(OpBuilder &builder, Value value) {
    auto type = cast<RankedTensorType>(value.getType());
    SmallVector<int64_t> shape(4 - type.getRank(), 1);
    llvm::append_range(shape, type.getShape());
    Value full = builder.create<ReshapeOp>(
        value.getLoc(), RankedTensorType::get(shape, type.getElementType()),
        value);
    return builder.create<TransposeOp>(value.getLoc(), full, kToNhwc);
  }

  void rewrite(Operation *op) {
    OpBuilder builder(op);
    for (OpOperand &use : op->getOpOperands()) {
      Value value = use.get();
      if (isActivationUse(use)) {
        Operation *def = value.getDefiningOp();
        if (!def || !members.count(def))
          use.set(enter(value));
        continue;
      }
      auto type = dyn_cast<RankedTensorType>(value.getType());
      if (isElementwise(op) && type && type.getRank() > 0)
        use.set(broadcastOperand(builder, value));
    }
    rewriteAttributes(builder, op);
    for (Value result : op->getResults())
      if (isRank4(result))
        retype(result);
  }

  void rewriteAttributes(OpBuilder &builder, Operation *op) {
    TypeSwitch<Operation *>(op)
        .Case([&](Conv2dOp conv) {
          conv.setLayout(ConvLayout::nhwc);
          conv.getFilterMutable().assign(builder.create<TransposeOp>(
              op->getLoc(), conv.getFilter(), kToNhwc));
        })
        .Case<MaxPool2dOp, AvgPool2dOp>(
            [](auto pool) { pool.setLayout(ConvLayout::nhwc); })
        .Case([](BatchNormOp norm) { norm.setDim(nhwcDim(1)); })
        .Case([](GroupNormOp norm) { norm.setDim(nhwcDim(1)); })
        .Case([](ConcatOp concat) {
          concat.setDim(nhwcDim(concat.getDim()));
        })
        .Case([](PadOp pad) {
          pad.setLow(permuted(pad.getLow()));
          pad.setHigh(permuted(pad.getHigh()));
        })
        .Case([](ResizeOp resize) {
          resize.setScales(permuted(resize.getScales()));
        })
        .Default([&](Operation *) {
          // The reductions: their reduced dims move with the layout.
          auto dims = op->getAttrOfType<DenseI64ArrayAttr>("dims");
          if (!dims)
            return;
          SmallVector<int64_t> moved;
          for (int64_t dim : dims.asArrayRef())
            moved.push_back(nhwcDim(dim));
          llvm::sort(moved);
          op->setAttr("dims", builder.getDenseI64ArrayAttr(moved));
        });
  }

  /// Gives a member's result its NHWC type; readers outside the regions
  /// read it through one transpose back.
  void retype(Value result) {
    SmallVector<OpOperand *> outside;
    for (OpOperand &use : result.getUses())
      if (!isActivationUse(use))
        outside.push_back(&use);
    result.setType(nhwcType(result.getType()));
    if (outside.empty())
      return;
    OpBuilder builder(function.getContext());
    builder.setInsertionPointAfter(result.getDefiningOp());
    Value back = builder.create<TransposeOp>(result.getLoc(), result, kToNchw);
    for (OpOperand *use : outside)
      use->set(back);
  }

  /// transpose(transpose(x, inner), outer) is transpose(x, inner[outer[i]]),
  /// and x itself where that is the identity.
  void foldTransposes() {
    for (Operation &op :
         llvm::make_early_inc_range(function.getBody().front())) {
      auto outer = dyn_cast<TransposeOp>(op);
      auto inner = outer ? outer.getInput().getDefiningOp<TransposeOp>()
                         : TransposeOp();
      if (!inner)
        continue;
      SmallVector<int64_t> perm;
      for (int64_t dim : outer.getPerm())
        perm.push_back(inner.getPerm()[dim]);
      if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size()))) {
        outer.getResult().replaceAllUsesWith(inner.getInput());
      } else {
        OpBuilder builder(outer);
        outer.getResult().replaceAllUsesWith(builder.create<TransposeOp>(
            outer.getLoc(), inner.getInput(), perm));
      }
      outer.erase();
      if (inner->use_empty())
        inner.erase();
    }
  }

  /// transpose(constant) is a constant with its elements moved: an
  /// inference model's filters (ONNX initializers) are stored in the layout
  /// the kernels read instead of being transposed on every call.
  void foldConstantTransposes() {
    for (Operation &op :
         llvm::make_early_inc_range(function.getBody().front())) {
      auto transpose = dyn_cast<TransposeOp>(op);
      auto constant = transpose
                          ? transpose.getInput().getDefiningOp<ConstantOp>()
                          : ConstantOp();
      auto value =
          constant ? dyn_cast<DenseElementsAttr>(constant.getValue()) : nullptr;
      DenseElementsAttr moved =
          value ? transposedElements(value, transpose) : nullptr;
      if (!moved)
        continue;
      OpBuilder builder(transpose);
      auto folded = builder.create<ConstantOp>(transpose.getLoc(), moved);
      // The buffer holds other values than the one named: say which.
      if (auto name = constant->getAttrOfType<StringAttr>(
              KilnDialect::kNameAttrName))
        folded->setAttr(KilnDialect::kNameAttrName,
                        builder.getStringAttr(name.getValue() + ".nhwc"));
      transpose.getResult().replaceAllUsesWith(folded.getResult());
      transpose.erase();
      if (constant->use_empty())
        constant.erase();
    }
  }

  func::FuncOp function;
  llvm::DenseSet<Operation *> members;
  llvm::DenseMap<Operation *, SmallVector<unsigned>> activations;
  llvm::DenseMap<Value, Value> entered;
};

struct AssignLayoutsPass
    : public impl::KilnAssignLayoutsBase<AssignLayoutsPass> {
  using KilnAssignLayoutsBase::KilnAssignLayoutsBase;

  void runOnOperation() override {
    auto loss = getOperation().lookupSymbol<func::FuncOp>(function);
    if (!loss) {
      getOperation().emitError("kiln-assign-layouts: no function named '")
          << function << "'";
      return signalPassFailure();
    }
    assignChannelsLast(loss);
  }
};

} // namespace

int64_t assignChannelsLast(func::FuncOp function) {
  return ChannelsLast(function).run();
}

} // namespace mlir::kiln
