//===- PadImporters.cpp - ONNX Pad of every opset -------------------------===//
//
// Constant padding is one kiln.pad. The other modes pad one axis at a time
// (so corners come out as ONNX and numpy define them) by concatenating the
// input with slices of itself: `edge` repeats the border slice (a
// broadcast), `reflect` mirrors the slices beside the border (a flip, the
// border not repeated), `wrap` (19) takes the slices at the other end.
// Their gradients are slices, flips and sums of the pieces: exact and
// deterministic, without a scatter.
//
//===----------------------------------------------------------------------===//

#include "compiler/import/onnx/GraphImporter.h"

#include <algorithm>
#include <limits>

namespace mlir::kiln::onnx_import {
namespace {

/// Pad's pads of every dim, [begin..., end...]: from the attribute before
/// version 11, else from the `pads` input, spread over the `axes` input's
/// dims from version 18. Also sets `value`, the constant mode's value.
FailureOr<llvm::SmallVector<int64_t>> readPads(OnnxNode &node, int64_t rank,
                                               double &value) {
  llvm::SmallVector<int64_t> pads;
  value = 0;
  if (node.opset() < 11) {
    pads = node.intsAttr(node.opset() < 2 ? "paddings" : "pads");
    value = node.floatAttr("value", 0.0f);
  } else {
    auto p = node.constantInts(1, "the pads of Pad");
    if (failed(p))
      return failure();
    pads = *p;
    if (node.hasInput(2)) {
      auto v = node.constantNumbers(2, "the constant_value of Pad");
      if (failed(v))
        return failure();
      value = v->front();
    }
  }
  // Version 18: the pads of the axes the `axes` input names, the others 0.
  if (node.hasInput(3)) {
    if (node.version() < 18)
      return node.emitError() << "Pad-" << node.version()
                              << " has no axes input (it came in Pad-18)",
             failure();
    auto axes = node.constantInts(3, "the axes of Pad");
    if (failed(axes))
      return failure();
    if (pads.size() != 2 * axes->size())
      return node.emitError() << "Pad needs 2 pads per axis: " << pads.size()
                              << " pads for " << axes->size() << " axes",
             failure();
    llvm::SmallVector<int64_t> all(2 * rank, 0);
    llvm::SmallVector<bool> seen(rank, false);
    for (auto [i, axis] : llvm::enumerate(*axes)) {
      auto a = node.normalizeAxis(axis, rank);
      if (failed(a))
        return failure();
      if (seen[*a])
        return node.emitError() << "Pad's axes repeat " << axis, failure();
      seen[*a] = true;
      all[*a] = pads[i];
      all[*a + rank] = pads[i + axes->size()];
    }
    pads = all;
  }
  if (static_cast<int64_t>(pads.size()) != 2 * rank)
    return node.emitError() << "Pad needs 2 * rank pads", failure();
  for (int64_t p : pads)
    if (p < 0)
      return static_cast<void>(node.unsupported("negative pads")), failure();
  return pads;
}

/// Elements [begin, end) of `x` along `dim`.
Value sliceAlong(KilnBuilder &kb, Value x, int64_t dim, int64_t begin,
                 int64_t end) {
  auto shape = KilnBuilder::typeOf(x).getShape();
  llvm::SmallVector<int64_t> start(shape.size(), 0), limit(shape),
      step(shape.size(), 1);
  start[dim] = begin;
  limit[dim] = end;
  return kb.slice(x, start, limit, step);
}

/// The `count` elements that `mode` puts before (`before`) or after the
/// `size` elements of `x` along `dim`.
Value padding(KilnBuilder &kb, Value x, int64_t dim, int64_t count,
              bool before, llvm::StringRef mode) {
  int64_t size = KilnBuilder::typeOf(x).getDimSize(dim);
  if (mode == "edge") {
    Value border = before ? sliceAlong(kb, x, dim, 0, 1)
                          : sliceAlong(kb, x, dim, size - 1, size);
    auto shape = llvm::to_vector(KilnBuilder::typeOf(border).getShape());
    shape[dim] = count;
    return kb.broadcastTo(
        border, RankedTensorType::get(shape, KilnBuilder::elementOf(x)));
  }
  if (mode == "reflect") {
    Value mirrored = before ? sliceAlong(kb, x, dim, 1, count + 1)
                            : sliceAlong(kb, x, dim, size - 1 - count,
                                         size - 1);
    return kb.builder().create<FlipOp>(kb.location(), mirrored,
                                       llvm::ArrayRef<int64_t>{dim});
  }
  // wrap
  return before ? sliceAlong(kb, x, dim, size - count, size)
                : sliceAlong(kb, x, dim, 0, count);
}

/// The most elements `mode` can pad on one side of a dim of `size`.
int64_t maxPad(llvm::StringRef mode, int64_t size) {
  if (mode == "edge")
    return size > 0 ? std::numeric_limits<int64_t>::max() : 0;
  return mode == "reflect" ? size - 1 : size;
}

LogicalResult importPad(OnnxNode &node) {
  auto type = node.inputType(0);
  if (!type)
    return failure();
  int64_t rank = type.getRank();
  double value;
  auto pads = readPads(node, rank, value);
  if (failed(pads))
    return failure();
  std::string mode = node.stringAttr("mode", "constant");
  if (mode == "constant") {
    llvm::ArrayRef<int64_t> all = *pads;
    node.setResult(0, node.builder().create<PadOp>(
                          node.loc(), node.input(0), all.take_front(rank),
                          all.drop_front(rank), llvm::APFloat(value)));
    return success();
  }
  if (mode != "edge" && mode != "reflect" &&
      !(mode == "wrap" && node.version() >= 19))
    return node.unsupported("mode = '" + mode + "'");
  KilnBuilder kb = node.kb();
  Value x = node.input(0);
  for (int64_t d = 0; d < rank; ++d) {
    int64_t low = (*pads)[d], high = (*pads)[d + rank];
    if (!low && !high)
      continue;
    int64_t size = type.getDimSize(d);
    if (std::max(low, high) > maxPad(mode, size))
      return node.unsupported(
          "mode = '" + mode + "' padding dim " + std::to_string(d) + " of " +
          std::to_string(size) + " by " + std::to_string(std::max(low, high)) +
          " (" + (mode == "reflect" ? "at most size - 1" : "at most size") +
          " on each side)");
    llvm::SmallVector<Value> pieces;
    if (low)
      pieces.push_back(padding(kb, x, d, low, /*before=*/true, mode));
    pieces.push_back(x);
    if (high)
      pieces.push_back(padding(kb, x, d, high, /*before=*/false, mode));
    x = node.builder().create<ConcatOp>(node.loc(), pieces, d);
  }
  node.setResult(0, x);
  return success();
}

} // namespace

void registerPadImporters(OpImporterRegistry &registry) {
  registry.add("Pad", importPad);
}

} // namespace mlir::kiln::onnx_import
