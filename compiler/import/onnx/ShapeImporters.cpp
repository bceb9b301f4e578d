//===- ShapeImporters.cpp - ONNX shape and layout ops ---------------------===//
//
// Shapes are static in kiln, so every shape operand (Reshape's shape, Slice's
// bounds, axes, repeats, pads) must be known at import time: a constant, an
// initializer, or a shape computation the importer folded. Shape and Size
// give such static values themselves.
//
//===----------------------------------------------------------------------===//

#include "compiler/import/onnx/GraphImporter.h"
#include "compiler/import/onnx/OnnxTypes.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <numeric>

namespace mlir::kiln::onnx_import {
namespace {

int64_t product(llvm::ArrayRef<int64_t> dims) {
  return std::accumulate(dims.begin(), dims.end(), int64_t{1},
                         std::multiplies<int64_t>());
}

Value transpose(OnnxNode &node, Value x, llvm::ArrayRef<int64_t> perm) {
  bool identity = true;
  for (auto [i, p] : llvm::enumerate(perm))
    identity &= static_cast<int64_t>(i) == p;
  if (identity)
    return x;
  return node.builder().create<TransposeOp>(node.loc(), x, perm);
}

/// Axes from the attribute `axes` (older opsets) or from input `index`.
FailureOr<llvm::SmallVector<int64_t>> axesOf(OnnxNode &node, unsigned index,
                                             bool fromInput) {
  if (fromInput) {
    if (!node.hasInput(index))
      return llvm::SmallVector<int64_t>();
    return node.constantInts(index, "the axes");
  }
  return node.intsAttr("axes");
}

LogicalResult importReshape(OnnxNode &node) {
  auto type = node.inputType(0);
  if (!type)
    return failure();
  llvm::SmallVector<int64_t> shape;
  if (node.opset() < 5) {
    shape = node.intsAttr("shape");
  } else {
    auto ints = node.constantInts(1, "the shape of Reshape");
    if (failed(ints))
      return failure();
    shape = *ints;
  }
  bool allowZero = node.intAttr("allowzero", 0) != 0;
  int64_t inferred = -1, known = 1;
  for (auto [i, d] : llvm::enumerate(shape)) {
    if (d == 0 && !allowZero) {
      if (static_cast<int64_t>(i) >= type.getRank())
        return node.emitError() << "Reshape copies dimension " << i
                                << ", which the input of rank "
                                << type.getRank() << " does not have";
      d = type.getDimSize(i);
    }
    if (d == -1) {
      if (inferred >= 0)
        return node.emitError() << "Reshape's shape has more than one -1";
      inferred = i;
      continue;
    }
    if (d < 0)
      return node.emitError() << "Reshape's shape has the dimension " << d;
    known *= d;
  }
  if (inferred >= 0) {
    if (known == 0 || type.getNumElements() % known != 0)
      return node.emitError() << "Reshape cannot infer the -1 of its shape "
                                 "for "
                              << type;
    shape[inferred] = type.getNumElements() / known;
  }
  if (product(shape) != type.getNumElements())
    return node.emitError()
           << "Reshape's shape holds " << product(shape)
           << " elements, the input " << type << " " << type.getNumElements();
  node.setResult(0, node.reshape(node.input(0), shape));
  return success();
}

LogicalResult importFlatten(OnnxNode &node) {
  auto type = node.inputType(0);
  if (!type)
    return failure();
  int64_t rank = type.getRank();
  int64_t axis = node.intAttr("axis", 1);
  if (axis < -rank || axis > rank)
    return node.emitError()
           << "Flatten's axis " << axis << " is out of range for rank " << rank;
  if (axis < 0)
    axis += rank;
  int64_t outer = product(type.getShape().take_front(axis));
  int64_t inner = product(type.getShape().drop_front(axis));
  node.setResult(0, node.reshape(node.input(0), {outer, inner}));
  return success();
}

LogicalResult importSqueeze(OnnxNode &node) {
  auto type = node.inputType(0);
  if (!type)
    return failure();
  auto axes = axesOf(node, 1, node.opset() >= 13);
  if (failed(axes))
    return failure();
  llvm::SmallVector<bool> drop(type.getRank(), false);
  if (axes->empty()) {
    for (int64_t d = 0; d < type.getRank(); ++d)
      drop[d] = type.getDimSize(d) == 1;
  }
  for (int64_t axis : *axes) {
    auto a = node.normalizeAxis(axis, type.getRank());
    if (failed(a))
      return failure();
    if (type.getDimSize(*a) != 1)
      return node.emitError() << "Squeeze's axis " << axis << " has size "
                              << type.getDimSize(*a) << ", not 1";
    drop[*a] = true;
  }
  llvm::SmallVector<int64_t> shape;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (!drop[d])
      shape.push_back(type.getDimSize(d));
  node.setResult(0, node.reshape(node.input(0), shape));
  return success();
}

LogicalResult importUnsqueeze(OnnxNode &node) {
  auto type = node.inputType(0);
  if (!type)
    return failure();
  auto axes = axesOf(node, 1, node.opset() >= 13);
  if (failed(axes))
    return failure();
  int64_t rank = type.getRank() + axes->size();
  llvm::SmallVector<bool> inserted(rank, false);
  for (int64_t axis : *axes) {
    auto a = node.normalizeAxis(axis, rank);
    if (failed(a))
      return failure();
    if (inserted[*a])
      return node.emitError() << "Unsqueeze's axes repeat " << axis;
    inserted[*a] = true;
  }
  llvm::SmallVector<int64_t> shape;
  int64_t next = 0;
  for (int64_t d = 0; d < rank; ++d)
    shape.push_back(inserted[d] ? 1 : type.getDimSize(next++));
  node.setResult(0, node.reshape(node.input(0), shape));
  return success();
}

LogicalResult importTranspose(OnnxNode &node) {
  auto type = node.inputType(0);
  if (!type)
    return failure();
  llvm::SmallVector<int64_t> perm = node.intsAttr("perm");
  if (perm.empty())
    for (int64_t d = type.getRank() - 1; d >= 0; --d)
      perm.push_back(d);
  llvm::SmallVector<bool> seen(type.getRank(), false);
  bool valid = static_cast<int64_t>(perm.size()) == type.getRank();
  for (int64_t p : perm) {
    valid = valid && p >= 0 && p < type.getRank() && !seen[p];
    if (valid)
      seen[p] = true;
  }
  if (!valid)
    return node.emitError() << "Transpose's perm is not a permutation of the "
                            << type.getRank() << " dimensions";
  node.setResult(
      0, node.builder().create<TransposeOp>(node.loc(), node.input(0), perm));
  return success();
}

LogicalResult importSlice(OnnxNode &node) {
  auto type = node.inputType(0);
  if (!type)
    return failure();
  int64_t rank = type.getRank();
  llvm::SmallVector<int64_t> starts, ends, axes, steps;
  if (node.opset() < 10) {
    starts = node.intsAttr("starts");
    ends = node.intsAttr("ends");
    axes = node.intsAttr("axes");
  } else {
    auto s = node.constantInts(1, "the starts of Slice");
    auto e = node.constantInts(2, "the ends of Slice");
    if (failed(s) || failed(e))
      return failure();
    starts = *s;
    ends = *e;
    if (node.hasInput(3)) {
      auto a = node.constantInts(3, "the axes of Slice");
      if (failed(a))
        return failure();
      axes = *a;
    }
    if (node.hasInput(4)) {
      auto st = node.constantInts(4, "the steps of Slice");
      if (failed(st))
        return failure();
      steps = *st;
    }
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(i);
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size())
    return node.emitError() << "Slice's starts, ends, axes and steps differ "
                               "in length";
  llvm::SmallVector<int64_t> start(rank, 0), limit(type.getShape()),
      step(rank, 1), flipDims;
  llvm::SmallVector<bool> seen(rank, false);
  for (size_t i = 0; i < starts.size(); ++i) {
    auto axis = node.normalizeAxis(axes[i], rank, "Slice's axis");
    if (failed(axis))
      return failure();
    if (seen[*axis])
      return node.emitError() << "Slice's axes repeat " << axes[i];
    seen[*axis] = true;
    int64_t n = type.getDimSize(*axis), s = steps[i];
    if (s == 0)
      return node.emitError() << "Slice's step is 0";
    int64_t first = starts[i], last = ends[i];
    if (first < 0)
      first += n;
    if (last < 0)
      last += n;
    if (s > 0) {
      first = std::clamp<int64_t>(first, 0, n);
      last = std::clamp<int64_t>(last, 0, n);
      start[*axis] = first;
      limit[*axis] = std::max(first, last);
      step[*axis] = s;
    } else {
      // Negative steps walk the flipped dimension forwards.
      first = std::clamp<int64_t>(first, 0, n - 1);
      last = std::clamp<int64_t>(last, -1, n - 1);
      int64_t flippedFirst = n - 1 - first, flippedLast = n - 1 - last;
      start[*axis] = std::clamp<int64_t>(flippedFirst, 0, n);
      limit[*axis] = std::max(start[*axis], flippedLast);
      step[*axis] = -s;
      flipDims.push_back(*axis);
    }
  }
  Value x = node.input(0);
  if (!flipDims.empty())
    x = node.builder().create<FlipOp>(node.loc(), x, flipDims);
  node.setResult(
      0, node.builder().create<SliceOp>(node.loc(), x, start, limit, step));
  return success();
}

LogicalResult importConcat(OnnxNode &node) {
  llvm::SmallVector<Value> inputs;
  int64_t rank = -1;
  for (unsigned i = 0; i < node.numInputs(); ++i) {
    Value v = node.input(i);
    if (!v)
      return failure();
    auto type = KilnBuilder::typeOf(v);
    rank = type.getRank();
    // Empty pieces contribute nothing (ONNX allows them).
    if (type.getNumElements() == 0 && node.numInputs() > 1)
      continue;
    inputs.push_back(v);
  }
  if (rank < 0)
    return node.emitError() << "ONNX Concat needs inputs";
  if (inputs.empty())
    inputs.push_back(node.input(0));
  auto axis = node.normalizeAxis(node.intAttr("axis", 0), rank);
  if (failed(axis))
    return failure();
  auto first = KilnBuilder::typeOf(inputs.front());
  for (Value v : inputs) {
    auto type = KilnBuilder::typeOf(v);
    bool matches = type.getRank() == first.getRank() &&
                   type.getElementType() == first.getElementType();
    for (int64_t d = 0; matches && d < type.getRank(); ++d)
      matches = d == *axis || type.getDimSize(d) == first.getDimSize(d);
    if (!matches)
      return node.emitError() << "Concat's inputs " << first << " and " << type
                              << " differ beyond the axis " << *axis;
  }
  node.setResult(0, node.builder().create<ConcatOp>(node.loc(), inputs, *axis));
  return success();
}

LogicalResult importExpand(OnnxNode &node) {
  auto type = node.inputType(0);
  if (!type)
    return failure();
  auto shape = node.constantInts(1, "the shape of Expand");
  if (failed(shape))
    return failure();
  // Bidirectional: the result is the broadcast of both shapes.
  size_t rank = std::max<size_t>(type.getRank(), shape->size());
  llvm::SmallVector<int64_t> result(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t a = i < rank - type.getRank()
                    ? 1
                    : type.getDimSize(i - (rank - type.getRank()));
    int64_t b =
        i < rank - shape->size() ? 1 : (*shape)[i - (rank - shape->size())];
    if (b < 0)
      return node.emitError() << "Expand's shape has the dimension " << b;
    if (a != b && a != 1 && b != 1)
      return node.emitError()
             << "Expand cannot broadcast " << type << " to the given shape";
    result[i] = a == 1 ? b : a;
  }
  node.setResult(0, node.builder().create<BroadcastToOp>(
                        node.loc(),
                        RankedTensorType::get(result, type.getElementType()),
                        node.input(0)));
  return success();
}

LogicalResult importGather(OnnxNode &node) {
  auto type = node.inputType(0);
  auto indexType = node.inputType(1);
  if (!type || !indexType)
    return failure();
  int64_t rank = type.getRank();
  auto axis = node.normalizeAxis(node.intAttr("axis", 0), rank);
  if (failed(axis))
    return failure();
  int64_t n = type.getDimSize(*axis);
  llvm::SmallVector<int64_t> resultShape(type.getShape().take_front(*axis));
  llvm::append_range(resultShape, indexType.getShape());
  llvm::append_range(resultShape, type.getShape().drop_front(*axis + 1));

  // Static data and indices (shape computations): gathered here, exactly.
  if (node.isConstant(0) && node.isConstant(1) &&
      type.getElementType().isIntOrIndex()) {
    auto data = node.constantInts(0, "the data");
    auto indices = node.constantInts(1, "the indices");
    if (failed(data) || failed(indices))
      return failure();
    int64_t outer = product(type.getShape().take_front(*axis));
    int64_t inner = product(type.getShape().drop_front(*axis + 1));
    llvm::SmallVector<int64_t> result;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t index : *indices) {
        if (index < -n || index >= n)
          return node.emitError() << "Gather's index " << index
                                  << " is out of range for size " << n;
        if (index < 0)
          index += n;
        for (int64_t i = 0; i < inner; ++i)
          result.push_back((*data)[(o * n + index) * inner + i]);
      }
    node.setConstantResult(0, resultShape, result, type.getElementType());
    return success();
  }
  if (!llvm::isa<FloatType>(type.getElementType()))
    return node.unsupported("Gather from a non-constant integer or BOOL "
                            "tensor (kiln.embedding gathers floats)");
  OpBuilder &b = node.builder();
  Value indices;
  if (node.isConstant(1)) {
    auto ints = node.constantInts(1, "the indices");
    if (failed(ints))
      return failure();
    std::vector<double> fixed;
    for (int64_t index : *ints) {
      if (index < -n || index >= n)
        return node.emitError() << "Gather's index " << index
                                << " is out of range for size " << n;
      fixed.push_back(index < 0 ? index + n : index);
    }
    indices = b.create<ConstantOp>(
        node.loc(),
        elementsFromNumbers(
            RankedTensorType::get(indexType.getShape(), b.getI32Type()),
            fixed));
  } else {
    indices = node.input(1);
    // Negative indices count from the end.
    Value negative = b.create<CompareOp>(node.loc(), CmpPredicate::lt, indices,
                                         node.scalarLike(0, indices));
    indices = b.create<SelectOp>(
        node.loc(), negative,
        node.kb().add(indices, node.scalarLike(n, indices)), indices);
  }
  // Gather rows of [n, rest] with kiln.embedding, then put the index
  // dimensions where the axis was.
  llvm::SmallVector<int64_t> perm = {*axis};
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis)
      perm.push_back(d);
  Value table = transpose(node, node.input(0), perm);
  int64_t rest = product(type.getShape()) / std::max<int64_t>(n, 1);
  table = node.reshape(table, {n, rest});
  Value rows = b.create<EmbeddingOp>(node.loc(), table, indices);
  llvm::SmallVector<int64_t> gatheredShape(indexType.getShape());
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis)
      gatheredShape.push_back(type.getDimSize(d));
  rows = node.reshape(rows, gatheredShape);
  int64_t q = indexType.getRank();
  llvm::SmallVector<int64_t> back;
  for (int64_t d = 0; d < *axis; ++d)
    back.push_back(q + d);
  for (int64_t d = 0; d < q; ++d)
    back.push_back(d);
  for (int64_t d = *axis; d < rank - 1; ++d)
    back.push_back(q + d);
  node.setResult(0, transpose(node, rows, back));
  return success();
}

/// GatherElements as a masked sum: out[p] = sum_c (c == index[p]) ? data'[p
/// with p_axis := c] : 0, where data' is data cut to the indices' extent in
/// the other dimensions. Exactly one term is selected (select, not a
/// multiplication, so infinities elsewhere stay out of it).
LogicalResult importGatherElements(OnnxNode &node) {
  auto type = node.inputType(0);
  auto indexType = node.inputType(1);
  if (!type || !indexType)
    return failure();
  int64_t rank = type.getRank();
  if (indexType.getRank() != rank || rank == 0)
    return node.emitError() << "GatherElements needs data and indices of one "
                               "rank (at least 1), not "
                            << type << " and " << indexType;
  auto axis = node.normalizeAxis(node.intAttr("axis", 0), rank);
  if (failed(axis))
    return failure();
  int64_t n = type.getDimSize(*axis);
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis && indexType.getDimSize(d) > type.getDimSize(d))
      return node.emitError()
             << "GatherElements' indices " << indexType << " exceed the data "
             << type << " in dimension " << d;
  OpBuilder &b = node.builder();
  KilnBuilder kb = node.kb();
  Value indices = node.input(1);
  Value negative =
      kb.compare(CmpPredicate::lt, indices, node.scalarLike(0, indices));
  indices = kb.select(negative, kb.add(indices, node.scalarLike(n, indices)),
                      indices);
  // data' with the gathered axis moved last and a 1 where it was.
  llvm::SmallVector<int64_t> start(rank, 0), limit(indexType.getShape()),
      step(rank, 1);
  limit[*axis] = n;
  Value data = kb.slice(node.input(0), start, limit, step);
  llvm::SmallVector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis)
      perm.push_back(d);
  perm.push_back(*axis);
  data = transpose(node, data, perm);
  llvm::SmallVector<int64_t> dataShape(indexType.getShape());
  dataShape[*axis] = 1;
  dataShape.push_back(n);
  data = node.reshape(data, dataShape);
  // The one-hot mask [indices..., n].
  llvm::SmallVector<int64_t> maskShape(indexType.getShape());
  maskShape.push_back(n);
  Value iota = b.create<IotaOp>(
      node.loc(), RankedTensorType::get(maskShape, b.getI32Type()), rank);
  llvm::SmallVector<int64_t> indexShape(indexType.getShape());
  indexShape.push_back(1);
  Value mask =
      kb.compare(CmpPredicate::eq, iota, node.reshape(indices, indexShape));
  if (type.getElementType().isInteger(1))
    return node.unsupported("GatherElements of BOOL data");
  Value picked = kb.select(mask, data, node.scalarLike(0.0, data));
  node.setResult(0,
                 b.create<ReduceSumOp>(node.loc(), picked,
                                       llvm::ArrayRef<int64_t>{rank}, false));
  return success();
}

/// ScatterND with indices known at compile time (what exporters write for
/// slice assignment, e.g. Swin's shifted-window mask), in layers: layer j
/// holds the j-th tuple naming each position of data's first k dims, whose
/// rows of `updates` kiln.embedding gathers; the positions a layer names
/// take them (or data's combined with them by `reduction`: add, mul, max,
/// min) and the others keep what they held: acc = select(written_j,
/// combine(acc, embedding(updates [M, R], source_j)), acc). Each position
/// sees its updates in index order, as ONNX's reference applies them (with
/// no reduction the last wins). The gradient flows to both operands.
LogicalResult importScatterND(OnnxNode &node) {
  auto type = node.inputType(0);
  auto indexType = node.inputType(1);
  auto updateType = node.inputType(2);
  if (!type || !indexType || !updateType)
    return failure();
  std::string reduction = node.stringAttr("reduction", "none");
  if (!llvm::is_contained({"none", "add", "mul", "max", "min"}, reduction))
    return node.emitError() << "ScatterND's reduction must be none, add, "
                               "mul, max or min, not '"
                            << reduction << "'";
  if (!isa<FloatType>(type.getElementType()))
    return node.unsupported("ScatterND of non-float data");
  int64_t rank = type.getRank(), depth = indexType.getShape().back();
  if (indexType.getRank() < 1 || depth < 1 || depth > rank)
    return node.emitError() << "ScatterND's indices " << indexType
                            << " do not index the data " << type;
  llvm::ArrayRef<int64_t> shape = type.getShape();
  llvm::SmallVector<int64_t> expected(indexType.getShape().drop_back());
  llvm::append_range(expected, shape.drop_front(depth));
  if (updateType.getShape() != llvm::ArrayRef<int64_t>(expected))
    return node.emitError() << "ScatterND's updates " << updateType
                            << " must have the shape of indices[:-1] + "
                               "data[k:] for indices "
                            << indexType << " and data " << type;
  FailureOr<llvm::SmallVector<int64_t>> tuples =
      node.constantInts(1, "ScatterND's indices");
  if (failed(tuples))
    return failure();
  int64_t positions = product(shape.take_front(depth));
  int64_t rows = product(shape.drop_front(depth));
  int64_t count = static_cast<int64_t>(tuples->size()) / depth;
  // layers[j]: (source, written) of the j-th tuple naming each position.
  std::vector<std::pair<std::vector<double>, std::vector<double>>> layers;
  std::vector<size_t> seen(positions, 0);
  for (int64_t i = 0; i < count; ++i) {
    int64_t position = 0;
    for (int64_t d = 0; d < depth; ++d) {
      int64_t index = (*tuples)[i * depth + d], size = shape[d];
      if (index < -size || index >= size)
        return node.emitError() << "ScatterND's index " << index
                                << " is out of range for size " << size
                                << " (dimension " << d << ")";
      position = position * size + (index < 0 ? index + size : index);
    }
    size_t layer = seen[position]++;
    if (layer == layers.size())
      layers.emplace_back(std::vector<double>(positions, 0.0),
                          std::vector<double>(positions, 0.0));
    layers[layer].first[position] = static_cast<double>(i);
    layers[layer].second[position] = 1.0;
  }
  OpBuilder &b = node.builder();
  KilnBuilder kb = node.kb();
  auto constant = [&](llvm::ArrayRef<int64_t> dims,
                      const std::vector<double> &values) -> Value {
    return b.create<ConstantOp>(
        node.loc(), elementsFromNumbers(
                        RankedTensorType::get(dims, b.getI32Type()), values));
  };
  Value result = node.reshape(node.input(0), {positions, rows});
  Value table = count ? node.reshape(node.input(2), {count, rows}) : Value();
  for (const auto &[source, written] : layers) {
    Value rowsOf = b.create<EmbeddingOp>(node.loc(), table,
                                         constant({positions}, source));
    if (reduction == "add")
      rowsOf = kb.add(result, rowsOf);
    else if (reduction == "mul")
      rowsOf = kb.mul(result, rowsOf);
    else if (reduction == "max")
      rowsOf = kb.max(result, rowsOf);
    else if (reduction == "min")
      rowsOf = kb.min(result, rowsOf);
    Value mask = constant({positions, 1}, written);
    mask = kb.compare(CmpPredicate::eq, mask, node.scalarLike(1, mask));
    result = kb.select(mask, rowsOf, result);
  }
  node.setResult(0, node.reshape(result, shape));
  return success();
}

LogicalResult importSplit(OnnxNode &node) {
  auto type = node.inputType(0);
  if (!type)
    return failure();
  auto axis = node.normalizeAxis(node.intAttr("axis", 0), type.getRank());
  if (failed(axis))
    return failure();
  llvm::SmallVector<int64_t> sizes;
  if (node.opset() >= 13) {
    if (node.hasInput(1)) {
      auto s = node.constantInts(1, "the split sizes");
      if (failed(s))
        return failure();
      sizes = *s;
    }
  } else {
    sizes = node.intsAttr("split");
  }
  int64_t n = type.getDimSize(*axis);
  unsigned parts = node.numOutputs();
  // Version 18: num_outputs chunks of ceil(n / num_outputs), the last one
  // smaller.
  int64_t chunks = node.version() >= 18 ? node.intAttr("num_outputs", 0) : 0;
  if (chunks != 0) {
    if (!sizes.empty())
      return node.emitError() << "Split takes the split sizes or "
                                 "num_outputs, not both";
    if (chunks != static_cast<int64_t>(parts))
      return node.emitError() << "Split's num_outputs is " << chunks
                              << " but the node has " << parts << " outputs";
    int64_t chunk = (n + chunks - 1) / chunks;
    sizes.assign(chunks, chunk);
    sizes.back() = n - chunk * (chunks - 1);
  }
  if (sizes.empty()) {
    if (parts == 0 || n % parts != 0)
      return node.emitError() << "Split cannot divide size " << n << " into "
                              << parts << " equal parts";
    sizes.assign(parts, n / parts);
  }
  for (int64_t size : sizes)
    if (size < 0)
      return node.emitError() << "Split's size " << size << " is negative";
  if (sizes.size() != parts ||
      std::accumulate(sizes.begin(), sizes.end(), int64_t{0}) != n)
    return node.emitError() << "Split's sizes do not add up to " << n
                            << " over " << parts << " outputs";
  int64_t offset = 0;
  for (auto [i, size] : llvm::enumerate(sizes)) {
    llvm::SmallVector<int64_t> start(type.getRank(), 0), limit(type.getShape()),
        step(type.getRank(), 1);
    start[*axis] = offset;
    limit[*axis] = offset + size;
    offset += size;
    node.setResult(i, node.builder().create<SliceOp>(node.loc(), node.input(0),
                                                     start, limit, step));
  }
  return success();
}

LogicalResult importTile(OnnxNode &node) {
  auto type = node.inputType(0);
  if (!type)
    return failure();
  auto repeats = node.constantInts(1, "the repeats of Tile");
  if (failed(repeats))
    return failure();
  if (static_cast<int64_t>(repeats->size()) != type.getRank())
    return node.emitError() << "Tile needs one repeat per dimension";
  // [d0, d1, ...] -> [1, d0, 1, d1, ...] -> [r0, d0, r1, d1, ...] -> merged.
  llvm::SmallVector<int64_t> spread, broadcast, result;
  for (auto [r, d] : llvm::zip(*repeats, type.getShape())) {
    if (r < 0)
      return node.emitError() << "Tile's repeat " << r << " is negative";
    spread.append({1, d});
    broadcast.append({r, d});
    result.push_back(r * d);
  }
  Value x = node.reshape(node.input(0), spread);
  x = node.builder().create<BroadcastToOp>(
      node.loc(), RankedTensorType::get(broadcast, type.getElementType()), x);
  node.setResult(0, node.reshape(x, result));
  return success();
}

LogicalResult importShape(OnnxNode &node) {
  auto type = node.inputType(0);
  if (!type)
    return failure();
  int64_t rank = type.getRank();
  int64_t start = node.intAttr("start", 0);
  int64_t end = node.hasAttr("end") ? node.intAttr("end", rank) : rank;
  if (start < 0)
    start += rank;
  if (end < 0)
    end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  llvm::SmallVector<int64_t> dims(type.getShape().slice(start, end - start));
  node.setConstantResult(0, {static_cast<int64_t>(dims.size())}, dims,
                         node.builder().getI32Type());
  return success();
}

LogicalResult importSize(OnnxNode &node) {
  auto type = node.inputType(0);
  if (!type)
    return failure();
  node.setConstantResult(0, {}, {type.getNumElements()},
                         node.builder().getI32Type());
  return success();
}

LogicalResult importRange(OnnxNode &node) {
  auto type = node.inputType(0);
  if (!type)
    return failure();
  auto start = node.constantNumbers(0, "the start of Range");
  auto limit = node.constantNumbers(1, "the limit of Range");
  auto delta = node.constantNumbers(2, "the delta of Range");
  if (failed(start) || failed(limit) || failed(delta))
    return failure();
  double s = start->front(), l = limit->front(), d = delta->front();
  if (d == 0)
    return node.emitError() << "Range's delta is 0";
  // Version 27: f16 and bf16 ranges are computed in f32 (stash_type 1, the
  // default) or in their own type (0).
  bool halfWidth =
      type.getElementType().isF16() || type.getElementType().isBF16();
  if (node.version() >= 27 && node.intAttr("stash_type", 1) != 1 && halfWidth)
    return node.unsupported("stash_type = 0 (a range accumulated in its own "
                            "16-bit type)");
  int64_t count =
      std::max<int64_t>(static_cast<int64_t>(std::ceil((l - s) / d)), 0);
  std::vector<double> values;
  for (int64_t i = 0; i < count; ++i)
    values.push_back(halfWidth ? static_cast<double>(static_cast<float>(s) +
                                                     static_cast<float>(i) *
                                                         static_cast<float>(d))
                               : s + i * d);
  auto resultType = RankedTensorType::get({count}, type.getElementType());
  if (type.getElementType().isIntOrIndex()) {
    node.setConstantResult(
        0, {count}, llvm::SmallVector<int64_t>(values.begin(), values.end()),
        type.getElementType());
    return success();
  }
  node.setResult(0, node.builder().create<ConstantOp>(
                        node.loc(), elementsFromNumbers(resultType, values)));
  return success();
}

LogicalResult importEyeLike(OnnxNode &node) {
  auto type = node.inputType(0);
  if (!type)
    return failure();
  if (type.getRank() != 2)
    return node.emitError() << "EyeLike needs a rank-2 input";
  Type element = type.getElementType();
  if (node.hasAttr("dtype")) {
    int64_t dtype = node.intAttr("dtype", 0);
    element = kilnElementType(node.builder().getContext(), dtype);
    if (!element)
      return node.unsupported("dtype " + onnxTypeName(dtype));
  }
  int64_t k = node.intAttr("k", 0);
  int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
  std::vector<double> values(rows * cols, 0.0);
  for (int64_t r = 0; r < rows; ++r)
    if (r + k >= 0 && r + k < cols)
      values[r * cols + r + k] = 1.0;
  node.setResult(
      0, node.builder().create<ConstantOp>(
             node.loc(),
             elementsFromNumbers(RankedTensorType::get({rows, cols}, element),
                                 values)));
  return success();
}

LogicalResult importTrilu(OnnxNode &node) {
  auto type = node.inputType(0);
  if (!type)
    return failure();
  int64_t k = 0;
  if (node.hasInput(1)) {
    auto ints = node.constantInts(1, "the k of Trilu");
    if (failed(ints))
      return failure();
    k = ints->front();
  }
  bool upper = node.intAttr("upper", 1) != 0;
  Value x = node.input(0);
  Value result =
      upper ? node.builder().create<TriuOp>(node.loc(), x, k).getResult()
            : node.builder().create<TrilOp>(node.loc(), x, k).getResult();
  node.setResult(0, result);
  return success();
}

LogicalResult importDepthToSpace(OnnxNode &node) {
  auto type = node.inputType(0);
  if (!type)
    return failure();
  if (type.getRank() != 4)
    return node.emitError() << "DepthToSpace needs [N, C, H, W]";
  int64_t b = node.intAttr("blocksize", 0);
  std::string mode = node.stringAttr("mode", "DCR");
  int64_t n = type.getDimSize(0), c = type.getDimSize(1),
          h = type.getDimSize(2), w = type.getDimSize(3);
  if (b <= 0 || c % (b * b) != 0)
    return node.emitError() << "DepthToSpace's blocksize must divide the "
                               "channels into squares";
  Value x = node.input(0);
  if (mode == "DCR") {
    x = node.reshape(x, {n, b, b, c / (b * b), h, w});
    x = transpose(node, x, {0, 3, 4, 1, 5, 2});
  } else if (mode == "CRD") {
    x = node.reshape(x, {n, c / (b * b), b, b, h, w});
    x = transpose(node, x, {0, 1, 4, 2, 5, 3});
  } else {
    return node.unsupported("mode = '" + mode + "'");
  }
  node.setResult(0, node.reshape(x, {n, c / (b * b), h * b, w * b}));
  return success();
}

LogicalResult importSpaceToDepth(OnnxNode &node) {
  auto type = node.inputType(0);
  if (!type)
    return failure();
  if (type.getRank() != 4)
    return node.emitError() << "SpaceToDepth needs [N, C, H, W]";
  int64_t b = node.intAttr("blocksize", 0);
  int64_t n = type.getDimSize(0), c = type.getDimSize(1),
          h = type.getDimSize(2), w = type.getDimSize(3);
  if (b <= 0 || h % b != 0 || w % b != 0)
    return node.emitError() << "SpaceToDepth's blocksize must divide H and W";
  Value x = node.reshape(node.input(0), {n, c, h / b, b, w / b, b});
  x = transpose(node, x, {0, 3, 5, 1, 2, 4});
  node.setResult(0, node.reshape(x, {n, c * b * b, h / b, w / b}));
  return success();
}

} // namespace

void registerShapeImporters(OpImporterRegistry &registry) {
  registry.add("Reshape", importReshape);
  registry.add("Flatten", importFlatten);
  registry.add("Squeeze", importSqueeze);
  registry.add("Unsqueeze", importUnsqueeze);
  registry.add("Transpose", importTranspose);
  registry.add("Slice", importSlice);
  registry.add("Concat", importConcat);
  registry.add("Expand", importExpand);
  registry.add("Gather", importGather);
  registry.add("GatherElements", importGatherElements);
  registry.add("ScatterND", importScatterND);
  registry.add("Split", importSplit);
  registry.add("Tile", importTile);
  registry.add("Shape", importShape);
  registry.add("Size", importSize);
  registry.add("Range", importRange);
  registry.add("EyeLike", importEyeLike);
  registry.add("Trilu", importTrilu);
  registry.add("DepthToSpace", importDepthToSpace);
  registry.add("SpaceToDepth", importSpaceToDepth);
}

} // namespace mlir::kiln::onnx_import
