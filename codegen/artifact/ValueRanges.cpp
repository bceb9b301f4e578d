//===- ValueRanges.cpp - the values an entry's index inputs may hold ------===//

#include "codegen/artifact/ValueRanges.h"

#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>

namespace mlir::kiln::codegen {
namespace {

int64_t dim(Value value, unsigned index) {
  return cast<RankedTensorType>(value.getType()).getDimSize(index);
}

/// The labels of a cross entropy over the classes of `logits`, and the
/// label it ignores, if any.
IndexRange labelsOver(Value logits, std::optional<int64_t> ignore) {
  int64_t classes = dim(logits, 1);
  std::string use = "labels of kiln.cross_entropy over " +
                    std::to_string(classes) + " classes";
  if (ignore)
    use += " with ignore_index " + std::to_string(*ignore);
  return {0, classes, ignore, use};
}

IndexRange rowsOf(int64_t rows) {
  return {0, rows, std::nullopt,
          "indices of kiln.embedding of " + std::to_string(rows) + " rows"};
}

/// The range the use of a value by `op` (as operand `operand`) allows, if
/// any.
std::optional<IndexRange> rangeOfUse(Operation *op, unsigned operand) {
  if (auto loss = dyn_cast<CrossEntropyOp>(op);
      loss && operand == loss.getLabelsMutable().getOperandNumber())
    return labelsOver(loss.getLogits(), loss.getIgnoreIndex());
  if (auto grad = dyn_cast<CrossEntropyBackwardOp>(op);
      grad && operand == grad.getLabelsMutable().getOperandNumber())
    return labelsOver(grad.getLogits(), grad.getIgnoreIndex());
  if (auto gather = dyn_cast<EmbeddingOp>(op);
      gather && operand == gather.getIndicesMutable().getOperandNumber())
    return rowsOf(dim(gather.getTable(), 0));
  if (auto grad = dyn_cast<EmbeddingBackwardOp>(op);
      grad && operand == grad.getIndicesMutable().getOperandNumber())
    return rowsOf(dim(grad.getResult(), 0));
  return std::nullopt;
}

/// The values the use carries on to, unchanged: a fusion's block argument,
/// a fusion's result (through kiln.yield), or the result of an op that only
/// moves values.
SmallVector<Value> carriedBy(OpOperand &use) {
  Operation *op = use.getOwner();
  if (auto fusion = dyn_cast<FusionOp>(op))
    return {fusion.getBody().front().getArgument(use.getOperandNumber())};
  if (isa<YieldOp>(op))
    return {op->getParentOp()->getResult(use.getOperandNumber())};
  if (isa<ReshapeOp, TransposeOp, SliceOp, BroadcastToOp, FlipOp, ConcatOp>(op))
    return {op->getResult(0)};
  return {};
}

/// The values both `a` and `b` allow; the ignored index only where both
/// allow it.
IndexRange intersect(const IndexRange &a, const IndexRange &b) {
  IndexRange out;
  out.low = std::max(a.low, b.low);
  out.high = std::min(a.high, b.high);
  if (a.ignoreIndex && a.ignoreIndex == b.ignoreIndex)
    out.ignoreIndex = a.ignoreIndex;
  out.use = a.use + " and " + b.use;
  return out;
}

} // namespace

std::optional<IndexRange> validRangeOf(Value input) {
  SmallVector<IndexRange> allowed;
  SmallVector<Value> worklist = {input};
  llvm::SmallPtrSet<void *, 16> seen;
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (!seen.insert(value.getAsOpaquePointer()).second)
      continue;
    for (OpOperand &use : value.getUses()) {
      if (std::optional<IndexRange> range =
              rangeOfUse(use.getOwner(), use.getOperandNumber()))
        allowed.push_back(*range);
      llvm::append_range(worklist, carriedBy(use));
    }
  }
  if (allowed.empty())
    return std::nullopt;
  // In the order of their descriptions, whatever the order of the uses; a
  // use seen twice (a loss and its gradient) counts once.
  auto byUse = [](const IndexRange &a, const IndexRange &b) {
    return a.use < b.use;
  };
  llvm::sort(allowed, byUse);
  allowed.erase(std::unique(allowed.begin(), allowed.end(),
                            [](const IndexRange &a, const IndexRange &b) {
                              return a.use == b.use;
                            }),
                allowed.end());
  IndexRange range = allowed.front();
  for (const IndexRange &other : llvm::drop_begin(allowed))
    range = intersect(range, other);
  if (range.low >= range.high)
    return std::nullopt;
  return range;
}

} // namespace mlir::kiln::codegen
