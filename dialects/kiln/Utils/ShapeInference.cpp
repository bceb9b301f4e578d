//===- ShapeInference.cpp - shape rules shared by kiln ops ----------------===//

#include "dialects/kiln/Utils/ShapeInference.h"

#include "llvm/ADT/SmallSet.h"
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

bool isBroadcastableTo(llvm::ArrayRef<int64_t> from, llvm::ArrayRef<int64_t> to) {
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

ShapeOrError matmulShape(llvm::ArrayRef<int64_t> lhs, llvm::ArrayRef<int64_t> rhs,
                         bool transposeLhs, bool transposeRhs) {
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
        (transposeLhs ? " (transposed)" : "") + " has K = " +
        std::to_string(kl) + " but rhs " + formatShape(rhs) +
        (transposeRhs ? " (transposed)" : "") + " has K = " +
        std::to_string(kr));
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

} // namespace mlir::kiln
