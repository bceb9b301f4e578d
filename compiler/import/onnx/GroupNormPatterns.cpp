//===- GroupNormPatterns.cpp - PyTorch's GroupNorm as one kiln.group_norm -===//
//
// PyTorch's TorchScript exporter writes nn.GroupNorm(G, C) as
//
//   Reshape(x [N, C, S...] -> [N, G, -1]) -> InstanceNormalization(ones,
//   zeros) -> Reshape(back to [N, C, S...]) -> Mul(weight [C, 1...])
//   -> Add(bias [C, 1...])
//
// which imports as a group norm of G groups on the reshaped tensor between
// reshapes and a per-channel affine. After the import each such chain
// becomes one kiln.group_norm of x with the affine as its weight and bias
// (the instance norm's own per-group scale and bias folded in), so that it
// runs as one fused kernel forward and backward. The reshape must split
// every sample into G equal runs of whole channels; the Mul and the Add are
// each optional; every value inside the chain must have no other use.
//
//===----------------------------------------------------------------------===//

#include "compiler/import/onnx/GraphImporter.h"

#include "dialects/kiln/IR/KilnBuilder.h"

#include <optional>

namespace mlir::kiln::onnx_import {
namespace {

/// The one user of `v`, or null.
Operation *soleUser(Value v) {
  return v.hasOneUse() ? *v.getUsers().begin() : nullptr;
}

/// `operand` of a Mul or Add of `chain` read as a per-channel vector of a
/// tensor of `type` [N, C, S...]: its value as [C], or null when it varies
/// along another dim.
Value channelVector(KilnBuilder &kb, Value operand, RankedTensorType type) {
  auto t = llvm::cast<RankedTensorType>(operand.getType());
  if (t.getElementType() != type.getElementType() ||
      t.getRank() > type.getRank())
    return Value();
  int64_t offset = type.getRank() - t.getRank();
  int64_t channels = type.getDimSize(1);
  for (int64_t d = 0; d < t.getRank(); ++d) {
    int64_t at = d + offset;
    int64_t expected = at == 1 ? channels : 1;
    if (t.getDimSize(d) != expected && !(at == 1 && t.getDimSize(d) == 1))
      return Value();
  }
  // A [C] vector reshaped to [C, 1...] (Unsqueeze) is that vector.
  if (auto reshape = operand.getDefiningOp<ReshapeOp>();
      reshape && offset <= 1 &&
      reshape.getInput().getType() ==
          RankedTensorType::get({channels}, type.getElementType()) &&
      t.getDimSize(1 - offset) == channels)
    return reshape.getInput();
  if (offset > 1) // no channel dim: one value for all channels
    return kb.broadcastTo(
        kb.reshape(operand, {1}),
        RankedTensorType::get({channels}, type.getElementType()));
  if (t.getDimSize(1 - offset) == 1)
    return kb.broadcastTo(
        kb.reshape(operand, {1}),
        RankedTensorType::get({channels}, type.getElementType()));
  return kb.reshape(operand, {channels});
}

/// A per-group vector [G] spread over the channels [C] of its groups.
Value perChannel(KilnBuilder &kb, Value perGroup, int64_t channels) {
  auto t = llvm::cast<RankedTensorType>(perGroup.getType());
  int64_t groups = t.getDimSize(0);
  Value spread = kb.broadcastTo(
      kb.reshape(perGroup, {groups, 1}),
      RankedTensorType::get({groups, channels / groups}, t.getElementType()));
  return kb.reshape(spread, {channels});
}

/// Whether `v` is a constant whose every element equals `value`.
bool isConstantSplat(Value v, double value) {
  auto constant = v.getDefiningOp<ConstantOp>();
  if (!constant)
    return false;
  auto attr = llvm::dyn_cast<DenseElementsAttr>(constant.getValue());
  return attr && attr.isSplat() && llvm::isa<FloatType>(attr.getElementType()) &&
         attr.getSplatValue<llvm::APFloat>().convertToDouble() == value;
}

/// Rewrites the chain around `norm` if it is one; returns whether it did.
bool fuse(GroupNormOp norm) {
  auto before = norm.getInput().getDefiningOp<ReshapeOp>();
  if (!before || !norm.getInput().hasOneUse())
    return false;
  Value x = before.getInput();
  auto type = llvm::cast<RankedTensorType>(x.getType());
  auto grouped = llvm::cast<RankedTensorType>(norm.getInput().getType());
  int64_t groups = norm.getGroups();
  if (type.getRank() < 2 || grouped.getRank() < 2 ||
      grouped.getDimSize(0) != type.getDimSize(0) ||
      grouped.getDimSize(1) != groups || type.getDimSize(1) % groups != 0)
    return false;
  auto after = llvm::dyn_cast_or_null<ReshapeOp>(soleUser(norm.getResult()));
  if (!after || after.getType() != type)
    return false;

  // The affine after it: Mul by a per-channel weight, then Add of a bias.
  OpBuilder b(after);
  KilnBuilder kb(b, norm.getLoc());
  Value end = after.getResult();
  Value weight, bias;
  llvm::SmallVector<Operation *> chain = {before, norm, after};
  llvm::SmallVector<Value> unsqueezed; // the affine's operands
  auto operandOther = [&](Operation *op, Value mine) {
    return op->getOperand(0) == mine ? op->getOperand(1) : op->getOperand(0);
  };
  if (auto mul = llvm::dyn_cast_or_null<MulOp>(soleUser(end));
      mul && mul.getType() == type) {
    // Each vector is built where its op is: its operand may be defined
    // after the reshape.
    b.setInsertionPoint(mul);
    if (Value w = channelVector(kb, operandOther(mul, end), type)) {
      weight = w;
      unsqueezed.push_back(operandOther(mul, end));
      end = mul.getResult();
      chain.push_back(mul);
    }
  }
  if (auto add = llvm::dyn_cast_or_null<AddOp>(soleUser(end));
      add && add.getType() == type) {
    b.setInsertionPoint(add);
    if (Value c = channelVector(kb, operandOther(add, end), type)) {
      bias = c;
      unsqueezed.push_back(operandOther(add, end));
      end = add.getResult();
      chain.push_back(add);
    }
  }

  // y = (n * wg + bg) * w + b = n * (wg w) + (bg w + b), per channel,
  // where the chain ends.
  b.setInsertionPoint(end.getDefiningOp());
  int64_t channels = type.getDimSize(1);
  Value wg = norm.getWeight(), bg = norm.getBias();
  if (wg && !isConstantSplat(wg, 1.0))
    weight = weight ? kb.mul(perChannel(kb, wg, channels), weight)
                    : perChannel(kb, wg, channels);
  if (bg && !isConstantSplat(bg, 0.0)) {
    Value shift = perChannel(kb, bg, channels);
    if (weight)
      shift = kb.mul(shift, weight);
    bias = bias ? kb.add(shift, bias) : shift;
  }
  if (bias && !weight)
    weight = kb.broadcastTo(
        kb.scalar(1.0, type.getElementType()),
        RankedTensorType::get({channels}, type.getElementType()));
  Value fused = b.create<GroupNormOp>(norm.getLoc(), type, x, weight, bias,
                                      groups, norm.getEpsAttr().getValue());
  end.replaceAllUsesWith(fused);
  for (Operation *op : llvm::reverse(chain))
    op->erase();
  // The instance norm's constant scale and bias, and the reshapes that
  // unsqueezed the affine's vectors, where nothing else uses them.
  for (Value v : {wg, bg})
    if (auto constant = v ? v.getDefiningOp<ConstantOp>() : ConstantOp();
        constant && constant->use_empty())
      constant->erase();
  for (Value v : unsqueezed)
    if (auto reshape = v.getDefiningOp<ReshapeOp>();
        reshape && reshape->use_empty())
      reshape->erase();
  return true;
}

} // namespace

void fuseGroupNormPatterns(func::FuncOp function) {
  llvm::SmallVector<GroupNormOp> norms;
  function.walk([&](GroupNormOp norm) { norms.push_back(norm); });
  for (GroupNormOp norm : norms)
    fuse(norm);
}

} // namespace mlir::kiln::onnx_import
