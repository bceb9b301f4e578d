//===- ShapeInference.cpp - shape rules shared by kiln ops ----------------===//

#include "dialects/kiln/Utils/ShapeInference.h"

#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::kiln {

std::string formatShape(llvm::ArrayRef<int64_t> shape) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << '[';
  llvm::interleaveComma(shape, os);
  os << ']';
  return text;
}

ShapeOrError broadcastShapes(llvm::ArrayRef<int64_t> lhs,
                             llvm::ArrayRef<int64_t> rhs) {
  size_t rank = std::max(lhs.size(), rhs.size());
  Shape result(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    // Walk from the trailing dimension; a missing leading dim acts as 1.
    int64_t l = i < lhs.size() ? lhs[lhs.size() - 1 - i] : 1;
    int64_t r = i < rhs.size() ? rhs[rhs.size() - 1 - i] : 1;
    if (l != r && l != 1 && r != 1)
      return ShapeOrError::error(
          "shapes " + formatShape(lhs) + " and " + formatShape(rhs) +
          " are not broadcast-compatible: dimension " +
          std::to_string(rank - 1 - i) + " of the broadcast result is " +
          std::to_string(l) + " vs " + std::to_string(r));
    result[rank - 1 - i] = l == 1 ? r : l;
  }
  return result;
}

bool isBroadcastableTo(llvm::ArrayRef<int64_t> from,
                       llvm::ArrayRef<int64_t> to) {
  if (from.size() > to.size())
    return false;
  size_t offset = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i)
    if (from[i] != 1 && from[i] != to[offset + i])
      return false;
  return true;
}

std::string checkDims(llvm::ArrayRef<int64_t> dims, int64_t rank) {
  llvm::SmallSet<int64_t, 8> seen;
  for (int64_t dim : dims) {
    if (dim < 0 || dim >= rank)
      return "dimension " + std::to_string(dim) + " is out of range for rank " +
             std::to_string(rank) + " (expected 0 <= dim < " +
             std::to_string(rank) + ")";
    if (!seen.insert(dim).second)
      return "dimension " + std::to_string(dim) + " is listed twice";
  }
  return {};
}

ShapeOrError reducedShape(llvm::ArrayRef<int64_t> shape,
                          llvm::ArrayRef<int64_t> dims, bool keepDim) {
  std::string error = checkDims(dims, shape.size());
  if (!error.empty())
    return ShapeOrError::error(error);
  Shape result;
  for (int64_t i = 0, e = shape.size(); i < e; ++i) {
    bool reduced = llvm::is_contained(dims, i);
    if (!reduced)
      result.push_back(shape[i]);
    else if (keepDim)
      result.push_back(1);
  }
  return result;
}

ShapeOrError matmulShape(llvm::ArrayRef<int64_t> lhs,
                         llvm::ArrayRef<int64_t> rhs, bool transposeLhs,
                         bool transposeRhs) {
  if (lhs.size() < 2 || rhs.size() < 2)
    return ShapeOrError::error("operands must have rank >= 2, got " +
                               formatShape(lhs) + " and " + formatShape(rhs));
  int64_t m = lhs[lhs.size() - (transposeLhs ? 1 : 2)];
  int64_t kl = lhs[lhs.size() - (transposeLhs ? 2 : 1)];
  int64_t kr = rhs[rhs.size() - (transposeRhs ? 1 : 2)];
  int64_t n = rhs[rhs.size() - (transposeRhs ? 2 : 1)];
  if (kl != kr)
    return ShapeOrError::error(
        "contraction dimensions differ: lhs " + formatShape(lhs) +
        (transposeLhs ? " (transposed)" : "") +
        " has K = " + std::to_string(kl) + " but rhs " + formatShape(rhs) +
        (transposeRhs ? " (transposed)" : "") +
        " has K = " + std::to_string(kr));
  ShapeOrError batch = broadcastShapes(lhs.drop_back(2), rhs.drop_back(2));
  if (!batch.ok())
    return ShapeOrError::error("batch dimensions: " + batch.message());
  Shape result = batch.shape();
  result.push_back(m);
  result.push_back(n);
  return result;
}

int64_t numElements(llvm::ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

namespace {

std::string str(int64_t value) { return std::to_string(value); }

/// "1 entry", "2 entries".
std::string entries(size_t count) {
  return str(count) + (count == 1 ? " entry" : " entries");
}

/// "'start' has 1 entry, expected 2 (the rank of the input)", or empty when
/// `list` has one entry per dim.
std::string checkPerDimList(llvm::StringRef name, llvm::ArrayRef<int64_t> list,
                            size_t rank) {
  if (list.size() == rank)
    return {};
  return "'" + name.str() + "' has " + entries(list.size()) + ", expected " +
         str(rank) + " (the rank of the input)";
}

} // namespace

std::string checkReshape(llvm::ArrayRef<int64_t> from,
                         llvm::ArrayRef<int64_t> to) {
  int64_t fromCount = numElements(from), toCount = numElements(to);
  if (fromCount == toCount)
    return {};
  return "input shape " + formatShape(from) + " has " + str(fromCount) +
         " elements but result shape " + formatShape(to) + " has " +
         str(toCount);
}

std::string checkBroadcastTo(llvm::ArrayRef<int64_t> from,
                             llvm::ArrayRef<int64_t> to) {
  std::string prefix =
      "cannot broadcast " + formatShape(from) + " to " + formatShape(to) + ": ";
  if (from.size() > to.size())
    return prefix + "the input has rank " + str(from.size()) +
           ", more than the result's rank " + str(to.size());
  size_t offset = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i)
    if (from[i] != 1 && from[i] != to[offset + i])
      return prefix + "input dimension " + str(i) + " has size " +
             str(from[i]) + ", which is neither 1 nor the size " +
             str(to[offset + i]) + " of result dimension " + str(offset + i);
  return {};
}

ShapeOrError transposeShape(llvm::ArrayRef<int64_t> shape,
                            llvm::ArrayRef<int64_t> perm) {
  int64_t rank = shape.size();
  if (perm.size() != shape.size())
    return ShapeOrError::error("'perm' " + formatShape(perm) + " has " +
                               entries(perm.size()) + ", expected " +
                               str(rank) + " (the rank of the input)");
  std::string prefix = "'perm' " + formatShape(perm) +
                       " is not a permutation of 0.." + str(rank - 1) + ": ";
  llvm::SmallVector<bool, 6> seen(rank, false);
  Shape result;
  for (int64_t entry : perm) {
    if (entry < 0 || entry >= rank)
      return ShapeOrError::error(prefix + "entry " + str(entry) +
                                 " is out of range");
    if (seen[entry])
      return ShapeOrError::error(prefix + "entry " + str(entry) +
                                 " appears twice");
    seen[entry] = true;
    result.push_back(shape[entry]);
  }
  return result;
}

ShapeOrError sliceShape(llvm::ArrayRef<int64_t> shape,
                        llvm::ArrayRef<int64_t> start,
                        llvm::ArrayRef<int64_t> limit,
                        llvm::ArrayRef<int64_t> step) {
  for (auto [name, list] :
       {std::pair{"start", start}, std::pair{"limit", limit},
        std::pair{"step", step}}) {
    std::string error = checkPerDimList(name, list, shape.size());
    if (!error.empty())
      return ShapeOrError::error(error);
  }
  Shape result;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (step[i] < 1)
      return ShapeOrError::error("'step' is " + str(step[i]) +
                                 " at dimension " + str(i) + ", expected >= 1");
    if (start[i] < 0 || start[i] > limit[i] || limit[i] > shape[i])
      return ShapeOrError::error(
          "dimension " + str(i) + " (size " + str(shape[i]) + ") has start " +
          str(start[i]) + " and limit " + str(limit[i]) +
          ", expected 0 <= start <= limit <= " + str(shape[i]));
    // ceil((limit - start) / step) without overflow-prone rounding tricks.
    int64_t extent = limit[i] - start[i];
    result.push_back(extent / step[i] + (extent % step[i] != 0 ? 1 : 0));
  }
  return result;
}

ShapeOrError concatShape(llvm::ArrayRef<llvm::ArrayRef<int64_t>> shapes,
                         int64_t dim) {
  if (shapes.empty())
    return ShapeOrError::error("expects at least one input");
  llvm::ArrayRef<int64_t> first = shapes.front();
  int64_t rank = first.size();
  if (dim < 0 || dim >= rank)
    return ShapeOrError::error("'dim' " + str(dim) +
                               " is out of range for rank " + str(rank) +
                               " (expected 0 <= dim < " + str(rank) + ")");
  Shape result(first.begin(), first.end());
  for (size_t i = 1; i < shapes.size(); ++i) {
    llvm::ArrayRef<int64_t> shape = shapes[i];
    if (static_cast<int64_t>(shape.size()) != rank)
      return ShapeOrError::error(
          "input " + str(i) + " has rank " + str(shape.size()) + " (shape " +
          formatShape(shape) + ") but input 0 has rank " + str(rank) +
          " (shape " + formatShape(first) + ")");
    for (int64_t d = 0; d < rank; ++d)
      if (d != dim && shape[d] != first[d])
        return ShapeOrError::error(
            "input " + str(i) + " has shape " + formatShape(shape) +
            " but input 0 has shape " + formatShape(first) + ": dimension " +
            str(d) + " differs (only dimension " + str(dim) +
            ", the concatenation dimension, may differ)");
    result[dim] += shape[dim];
  }
  return result;
}

ShapeOrError padShape(llvm::ArrayRef<int64_t> shape,
                      llvm::ArrayRef<int64_t> low,
                      llvm::ArrayRef<int64_t> high) {
  for (auto [name, list] : {std::pair{"low", low}, std::pair{"high", high}}) {
    std::string error = checkPerDimList(name, list, shape.size());
    if (!error.empty())
      return ShapeOrError::error(error);
  }
  Shape result;
  for (size_t i = 0; i < shape.size(); ++i) {
    for (auto [name, amount] :
         {std::pair{"low", low[i]}, std::pair{"high", high[i]}})
      if (amount < 0)
        return ShapeOrError::error("'" + std::string(name) + "' is " +
                                   str(amount) + " at dimension " + str(i) +
                                   ", expected >= 0");
    result.push_back(shape[i] + low[i] + high[i]);
  }
  return result;
}

} // namespace mlir::kiln
