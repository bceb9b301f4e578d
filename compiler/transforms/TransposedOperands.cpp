//===- TransposedOperands.cpp - transposes read as GEMM operand layouts ---===//
//
// A matmul reads either operand with its last two dimensions swapped by a
// flag (transpose_lhs, transpose_rhs): the GEMM kernels then take that
// operand M- or N-major, with no copy. A transpose that swaps exactly the
// last two dimensions of a matmul operand, as a model written against
// numpy's or ONNX's conventions states it (x @ w.T, K^T), is that flag; left
// as an op it would become a kernel of its own that copies the operand.
// Each such operand reads the transpose's input with its flag toggled, and
// a transpose no other op reads goes.
//
//===----------------------------------------------------------------------===//

#include "compiler/transforms/FusionSteps.h"

#include "dialects/kiln/IR/KilnDialect.h"

#include "llvm/ADT/STLExtras.h"

namespace mlir::kiln {

/// Whether `perm` swaps the last two of its dimensions and keeps the others.
static bool swapsLastTwo(llvm::ArrayRef<int64_t> perm) {
  int64_t rank = perm.size();
  if (rank < 2)
    return false;
  for (int64_t i = 0; i + 2 < rank; ++i)
    if (perm[i] != i)
      return false;
  return perm[rank - 2] == rank - 1 && perm[rank - 1] == rank - 2;
}

/// The input of the transpose that defines `operand` when it swaps the last
/// two dimensions; null otherwise.
static Value swappedInput(Value operand) {
  auto transpose = operand.getDefiningOp<TransposeOp>();
  if (!transpose || !swapsLastTwo(transpose.getPerm()))
    return Value();
  return transpose.getInput();
}

void foldTransposedOperands(Block &body) {
  for (Operation &op : llvm::make_early_inc_range(body)) {
    auto matmul = dyn_cast<MatmulOp>(op);
    if (!matmul)
      continue;
    Value lhs = swappedInput(matmul.getLhs());
    Value rhs = swappedInput(matmul.getRhs());
    if (!lhs && !rhs)
      continue;
    Operation *oldLhs = matmul.getLhs().getDefiningOp();
    Operation *oldRhs = matmul.getRhs().getDefiningOp();
    if (lhs) {
      matmul.getLhsMutable().assign(lhs);
      matmul.setTransposeLhs(!matmul.getTransposeLhs());
    }
    if (rhs) {
      matmul.getRhsMutable().assign(rhs);
      matmul.setTransposeRhs(!matmul.getTransposeRhs());
    }
    for (Operation *old : {oldLhs, oldRhs})
      if (old && isa<TransposeOp>(old) && old->use_empty())
        old->erase();
  }
}

} // namespace mlir::kiln
