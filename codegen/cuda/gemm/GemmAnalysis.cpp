//===- GemmAnalysis.cpp - a gemm fusion taken apart -----------------------===//

#include "codegen/cuda/gemm/GemmPlan.h"

#include "codegen/cuda/scalar/ScalarEmitter.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <limits>

namespace mlir::kiln::codegen {

ArrayRef<int64_t> gemmShapeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

Type gemmElementTypeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getElementType();
}

bool isGemmFloatElement(Type type) {
  return type.isF32() || type.isBF16() || type.isF16();
}

SmallVector<int64_t> gemmBroadcastStrides(ArrayRef<int64_t> shape,
                                          ArrayRef<int64_t> to) {
  SmallVector<int64_t> strides(to.size(), 0);
  int64_t stride = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    size_t d = shape.size() - 1 - i, o = to.size() - 1 - i;
    strides[o] = shape[d] == 1 && to[o] != 1 ? 0 : stride;
    stride *= shape[d];
  }
  return strides;
}

int64_t gemmProduct(ArrayRef<int64_t> dims) {
  int64_t p = 1;
  for (int64_t d : dims)
    p *= d;
  return p;
}

namespace {

/// Whether `from` broadcasts (numpy, right-aligned) to `to`.
bool broadcastsTo(ArrayRef<int64_t> from, ArrayRef<int64_t> to) {
  if (from.size() > to.size())
    return false;
  for (size_t i = 0; i < from.size(); ++i) {
    int64_t f = from[from.size() - 1 - i], t = to[to.size() - 1 - i];
    if (f != t && f != 1)
      return false;
  }
  return true;
}

} // namespace

FailureOr<GemmPlan> analyzeGemm(FusionOp fusion, std::string &why) {
  if (fusion.getKind() != "gemm") {
    why = "the fusion's kind is not \"gemm\"";
    return failure();
  }
  Block &body = fusion.getBody().front();
  GemmPlan plan;
  // The matmul each value is computed from (-1: none, e.g. a bias or a
  // constant scaling; the epilogue recomputes such values per element;
  // kSummed: the sum of several products).
  constexpr int kSummed = std::numeric_limits<int>::max();
  llvm::DenseMap<Value, int> owner;
  // Matmul results and sums of them, each to be added exactly once.
  llvm::DenseSet<Value> summands;
  for (Operation &op : body.without_terminator()) {
    if (auto matmul = dyn_cast<MatmulOp>(op)) {
      owner[matmul.getResult()] = plan.problems.size();
      plan.problems.push_back({matmul});
      continue;
    }
    std::string name = op.getName().getStringRef().str();
    if (!ScalarEmitter::supportsOp(&op) ||
        !ScalarEmitter::remappedOperands(&op).empty() ||
        op.getNumResults() != 1) {
      why = "'" + name + "' is not an element-wise epilogue op";
      return failure();
    }
    int from = -1;
    bool combines = false;
    for (Value operand : op.getOperands()) {
      auto found = owner.find(operand);
      int o = found == owner.end() ? -1 : found->second;
      if (isa<BlockArgument>(operand) || o < 0)
        continue;
      combines |= from >= 0 && from != o;
      from = from < 0 ? o : from;
    }
    if (combines) {
      // Only an add of two products (or sums of them), before any other
      // epilogue op: one accumulation over the concatenated K.
      auto isSummand = [&](Value v) {
        return isa_and_nonnull<MatmulOp>(v.getDefiningOp()) ||
               summands.contains(v);
      };
      if (!isa<AddOp>(op) || !isSummand(op.getOperand(0)) ||
          !isSummand(op.getOperand(1)) ||
          op.getOperand(0).getType() != op.getResult(0).getType() ||
          op.getOperand(1).getType() != op.getResult(0).getType()) {
        why = "'" + name + "' combines the products of two matmuls";
        return failure();
      }
      summands.insert(op.getOperand(0));
      summands.insert(op.getOperand(1));
      summands.insert(op.getResult(0));
      from = kSummed;
      plan.sum = op.getResult(0);
    }
    owner[op.getResult(0)] = from;
  }
  if (plan.problems.empty()) {
    why = "no kiln.matmul";
    return failure();
  }
  MatmulOp first = plan.problems.front().matmul;
  for (GemmProblem &problem : plan.problems) {
    auto lhs = dyn_cast<BlockArgument>(problem.matmul.getLhs());
    auto rhs = dyn_cast<BlockArgument>(problem.matmul.getRhs());
    if (!lhs || !rhs || lhs.getOwner() != &body || rhs.getOwner() != &body) {
      why = "the matmul's operands must be arguments of the fusion";
      return failure();
    }
    problem.lhsArg = lhs.getArgNumber();
    problem.rhsArg = rhs.getArgNumber();
    if (lhs.getType() != first.getLhs().getType() ||
        rhs.getType() != first.getRhs().getType() ||
        problem.matmul.getTransposeLhs() != first.getTransposeLhs() ||
        problem.matmul.getTransposeRhs() != first.getTransposeRhs()) {
      why = "the matmuls of one fusion must have the same operand types and "
            "transposes";
      return failure();
    }
  }
  plan.transposeLhs = first.getTransposeLhs();
  plan.transposeRhs = first.getTransposeRhs();
  plan.elementType = gemmElementTypeOf(first.getResult());
  if (!isGemmFloatElement(plan.elementType) ||
      gemmElementTypeOf(first.getLhs()) != plan.elementType ||
      gemmElementTypeOf(first.getRhs()) != plan.elementType) {
    why = "the matmul must be f32, bf16 or f16 throughout";
    return failure();
  }
  ArrayRef<int64_t> out = gemmShapeOf(first.getResult());
  ArrayRef<int64_t> lhsShape = gemmShapeOf(first.getLhs()),
                    rhsShape = gemmShapeOf(first.getRhs());
  if (out.size() < 2 || lhsShape.size() < 2 || rhsShape.size() < 2) {
    why = "the matmul's operands must have rank >= 2";
    return failure();
  }
  plan.outShape.assign(out.begin(), out.end());
  plan.m = out[out.size() - 2];
  plan.n = out[out.size() - 1];
  plan.k = plan.transposeLhs ? lhsShape[lhsShape.size() - 2]
                             : lhsShape[lhsShape.size() - 1];
  ArrayRef<int64_t> outBatch = out.drop_back(2);
  plan.batch = gemmProduct(outBatch);
  plan.lhsBatchStrides = gemmBroadcastStrides(lhsShape.drop_back(2), outBatch);
  plan.rhsBatchStrides = gemmBroadcastStrides(rhsShape.drop_back(2), outBatch);

  // Every value is evaluated at an element of the product.
  for (Operation &op : body.without_terminator())
    if (!isa<MatmulOp>(op) &&
        !broadcastsTo(gemmShapeOf(op.getResult(0)), out)) {
      why = "'" + op.getName().getStringRef().str() +
            "' computes a value that does not broadcast to the product";
      return failure();
    }
  if (plan.sum) {
    // One tree of adds over every product, each summand used once, and the
    // epilogue after it.
    for (Value summand : summands)
      if (summand != plan.sum && !summand.hasOneUse()) {
        why = "a summed product is used besides the sum";
        return failure();
      }
    for (const GemmProblem &problem : plan.problems)
      if (!summands.contains(MatmulOp(problem.matmul).getResult())) {
        why = "a matmul whose product is not in the sum of the others";
        return failure();
      }
    for (Value summand : summands)
      if (summand != plan.sum && summand.hasOneUse() &&
          !summands.contains((*summand.getUsers().begin())->getResult(0))) {
        why = "two sums of products";
        return failure();
      }
  }
  for (auto [index, value] :
       llvm::enumerate(body.getTerminator()->getOperands())) {
    auto found = owner.find(value);
    int o = found == owner.end() ? -1 : found->second;
    if (isa<BlockArgument>(value) || o < 0) {
      why = "a yielded value is not computed from a matmul's product";
      return failure();
    }
    if (gemmShapeOf(value) != out ||
        !isGemmFloatElement(gemmElementTypeOf(value))) {
      why = "a yielded value must be a float tensor of the product's shape";
      return failure();
    }
    if (plan.sum && o != kSummed) {
      why = "a yielded value is computed from a product that is also summed";
      return failure();
    }
    plan.problems[plan.sum ? 0 : o].results.push_back(index);
  }
  for (const GemmProblem &problem : plan.problems)
    if (problem.results.empty() && !plan.sum) {
      why = "a matmul whose product no result needs";
      return failure();
    }
  return plan;
}

} // namespace mlir::kiln::codegen
