//===- VectorProducts.cpp - products with one row or column as reductions -===//
//
// A kiln.matmul with one result column (N = 1: a Linear layer to one
// output, and the weight gradient of such a layer) or one result row
// (M = 1: the weight gradient of a Linear layer from one input) is a
// matrix-vector product; from a million matrix elements up it is rewritten. On a GEMM tile it keeps one of 128 columns busy;
// as the broadcast multiply of the matrix by the vector summed over K it is
// one pass over the matrix in a reduction kernel, with the multiply fused
// into the kernel's loads. The operands are widened to f32 first, so that
// each product is exact and the sum is accumulated in f32 and rounded once
// to the result type, as the GEMM does.
//
//===----------------------------------------------------------------------===//

#include "compiler/transforms/FusionSteps.h"

#include "dialects/kiln/IR/KilnBuilder.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/IR/Builders.h"

namespace mlir::kiln {

namespace {

/// Matrices below this many elements keep their GEMM: there the kernel's
/// launch costs more than its tile's idle columns, and a GEMM takes its
/// neighbours into its epilogue (a bias, a loss gradient) and merges with
/// the launches beside it.
constexpr int64_t kMinMatrixElements = int64_t{1} << 20;

/// `shape` with its last two dimensions swapped.
SmallVector<int64_t> swapLastTwo(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> swapped(shape);
  std::swap(swapped[swapped.size() - 1], swapped[swapped.size() - 2]);
  return swapped;
}

/// `vector` (the operand of one row or one column) as a row [..., 1, K]
/// (`asRow`) or a column [..., K, 1]: the same elements in the same order,
/// so a reshape (a view).
Value orient(KilnBuilder &b, Value vector, bool asRow) {
  ArrayRef<int64_t> shape = KilnBuilder::typeOf(vector).getShape();
  bool isRow = shape[shape.size() - 2] == 1;
  return isRow == asRow ? vector : b.reshape(vector, swapLastTwo(shape));
}

/// Whether `matmul`'s result is one column (else it is one row).
bool hasColumnResult(MatmulOp matmul) {
  return matmul.getType().getShape().back() == 1;
}

/// The operand that is not the vector: the lhs of a column result, the rhs
/// of a row.
Value matrixOf(MatmulOp matmul) {
  return hasColumnResult(matmul) ? matmul.getLhs() : matmul.getRhs();
}

} // namespace

void rewriteVectorProducts(Block &body) {
  SmallVector<MatmulOp> products;
  for (auto matmul : body.getOps<MatmulOp>()) {
    ArrayRef<int64_t> lhs = KilnBuilder::typeOf(matmul.getLhs()).getShape();
    ArrayRef<int64_t> result = matmul.getType().getShape();
    int64_t k = matmul.getTransposeLhs() ? lhs[lhs.size() - 2] : lhs.back();
    int64_t m = result[result.size() - 2], n = result.back();
    if (k <= 1 || (m != 1 && n != 1) || !matmul.getType().hasStaticShape())
      continue;
    if (KilnBuilder::typeOf(matrixOf(matmul)).getNumElements() >=
        kMinMatrixElements)
      products.push_back(matmul);
  }
  for (MatmulOp matmul : products) {
    OpBuilder builder(matmul);
    KilnBuilder b(builder, matmul.getLoc());
    Type f32 = builder.getF32Type();
    int64_t rank = matmul.getType().getRank();
    bool columnResult = hasColumnResult(matmul);
    // The matrix keeps its stored orientation; the vector is laid along K
    // beside it. Summing over the matrix's K axis leaves the result, or its
    // transpose when the matrix is stored transposed.
    Value matrix = matrixOf(matmul);
    Value vector = columnResult ? matmul.getRhs() : matmul.getLhs();
    bool matrixTransposed =
        columnResult ? matmul.getTransposeLhs() : matmul.getTransposeRhs();
    // K is the matrix's last axis for an untransposed lhs or a transposed
    // rhs, else its second last.
    bool kLast = columnResult != matrixTransposed;
    // Reshapes go next to the stored tensors and casts next to the
    // arithmetic, so that the reduction kernel reads the stored tensors
    // and rounds its result as it stores it.
    Value product = b.mul(b.cast(matrix, f32),
                          b.cast(orient(b, vector, /*asRow=*/kLast), f32));
    Value sum = b.reduceSum(product, {kLast ? rank - 1 : rank - 2},
                            /*keepDim=*/true);
    Value rounded = b.cast(sum, matmul.getType().getElementType());
    Value replacement = b.reshape(rounded, matmul.getType().getShape());
    matmul.getResult().replaceAllUsesWith(replacement);
    matmul.erase();
  }
}

} // namespace mlir::kiln
