//===- OuterProducts.cpp - products over K = 1 as broadcast multiplies ----===//
//
// A kiln.matmul whose reduction has one term (K = 1, the Linear layer of a
// scalar feature and its gradients) is an outer product: each result element
// is one product of two elements, computed in f32 and rounded once, which is
// exactly what a broadcast kiln.mul of the operands computes. As a multiply
// it becomes part of a pointwise kernel with its neighbours (a bias, an
// activation), where a GEMM tile would spend its time on K's zero padding. A
// transposed operand of one row or one column holds its elements in the same
// order as the untransposed one: a reshape (a view) stands for the
// transpose.
//
//===----------------------------------------------------------------------===//

#include "compiler/transforms/FusionSteps.h"

#include "dialects/kiln/IR/KilnBuilder.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include "llvm/ADT/STLExtras.h"

namespace mlir::kiln {

void rewriteOuterProducts(Block &body) {
  SmallVector<MatmulOp> products;
  for (auto matmul : body.getOps<MatmulOp>()) {
    ArrayRef<int64_t> lhs = KilnBuilder::typeOf(matmul.getLhs()).getShape();
    int64_t k = matmul.getTransposeLhs() ? lhs[lhs.size() - 2] : lhs.back();
    if (k == 1)
      products.push_back(matmul);
  }
  for (MatmulOp matmul : products) {
    OpBuilder builder(matmul);
    KilnBuilder b(builder, matmul.getLoc());
    // The operand as [..., M, 1] (lhs) or [..., 1, N] (rhs).
    auto untransposed = [&](Value operand, bool transposed) -> Value {
      if (!transposed)
        return operand;
      SmallVector<int64_t> shape(KilnBuilder::typeOf(operand).getShape());
      std::swap(shape[shape.size() - 1], shape[shape.size() - 2]);
      return b.reshape(operand, shape);
    };
    Value product =
        b.mul(untransposed(matmul.getLhs(), matmul.getTransposeLhs()),
              untransposed(matmul.getRhs(), matmul.getTransposeRhs()));
    matmul.getResult().replaceAllUsesWith(product);
    matmul.erase();
  }
}

} // namespace mlir::kiln
