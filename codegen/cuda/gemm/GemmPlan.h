//===- GemmPlan.h - a gemm fusion taken apart -------------------*- C++ -*-===//
//
// A "gemm" fusion is one kiln.matmul whose operands are block arguments,
// followed by an optional epilogue: element-wise ops applied to the product
// element by element, whose other operands are block arguments that
// broadcast to the product's shape (bias [N], residual [..., M, N],
// scalars), constants, or element-wise values computed from those (e.g. an
// activation's derivative). Every yielded value has the product's shape, so
// each of them is one store per output element.
//
// Several matmuls of one shape (operand types and transposes) may share a
// fusion:
//  - each with an epilogue of its own: one grouped launch whose GEMM batches
//    run problem after problem (operand pointers and stores chosen per
//    problem), e.g. the q, k and v projections of one input;
//  - their products added (a tree of kiln.add before any other epilogue
//    op): one product over their concatenated K, tile kt of problem
//    kt / KT, e.g. the gradient of an input that several projections read.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_CUDA_GEMM_GEMMPLAN_H
#define KILN_CODEGEN_CUDA_GEMM_GEMMPLAN_H

#include "dialects/kiln/IR/KilnDialect.h"

#include "llvm/ADT/SmallVector.h"

#include <string>

namespace mlir::kiln::codegen {

/// One matmul of a gemm fusion and the fusion results of its epilogue.
struct GemmProblem {
  MatmulOp matmul;
  unsigned lhsArg = 0, rhsArg = 0;
  /// Indices of the fusion results it stores (each of the product's shape).
  SmallVector<unsigned> results;
};

/// A gemm fusion taken apart: its matmuls (several of one shape form a
/// grouped launch or, when the body adds their products, one product over
/// their concatenated K), their sizes, and what their epilogues yield.
struct GemmPlan {
  SmallVector<GemmProblem> problems;
  /// The sum of every problem's product when the products are added (all
  /// results then belong to problem 0's epilogue, which starts from it).
  Value sum;
  bool transposeLhs = false, transposeRhs = false;
  Type elementType;
  /// [batch..., M, N] of each product (and of every yielded value).
  SmallVector<int64_t> outShape;
  int64_t batch = 1, m = 0, n = 0, k = 0;
  /// Per output batch dim: the operand's batch stride counted in matrices
  /// (0 where it broadcasts).
  SmallVector<int64_t> lhsBatchStrides, rhsBatchStrides;
};

/// Takes `fusion` apart; on failure says why in `why`.
FailureOr<GemmPlan> analyzeGemm(FusionOp fusion, std::string &why);

ArrayRef<int64_t> gemmShapeOf(Value value);
Type gemmElementTypeOf(Value value);
bool isGemmFloatElement(Type type);
int64_t gemmProduct(ArrayRef<int64_t> dims);

/// Element strides of a row-major `shape` read at the coordinates of `to`
/// (right-aligned; 0 for broadcast or missing dims).
SmallVector<int64_t> gemmBroadcastStrides(ArrayRef<int64_t> shape,
                                          ArrayRef<int64_t> to);

} // namespace mlir::kiln::codegen

#endif // KILN_CODEGEN_CUDA_GEMM_GEMMPLAN_H
