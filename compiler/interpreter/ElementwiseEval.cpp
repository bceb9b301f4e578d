//===- ElementwiseEval.cpp - evaluators of constants and elementwise ops --===//

#include "compiler/interpreter/EvalUtils.h"

#include "dialects/kiln/IR/KilnDialect.h"

#include <cmath>

namespace mlir::kiln::ref {

static LogicalResult evalConstant(Operation *op, llvm::ArrayRef<const Tensor *>,
                                  llvm::MutableArrayRef<Tensor> results,
                                  EvalContext &) {
  auto value = dyn_cast<DenseElementsAttr>(cast<ConstantOp>(op).getValue());
  if (!value)
    return op->emitOpError("the reference interpreter needs a dense value");
  std::vector<double> &out = results[0].data;
  if (isa<FloatType>(value.getElementType())) {
    size_t i = 0;
    for (const APFloat &x : value.getValues<APFloat>())
      out[i++] = x.convertToDouble() /* exact: f32/bf16/f16 widen exactly */;
  } else {
    bool isBool = value.getElementType().isInteger(1);
    size_t i = 0;
    for (const APInt &x : value.getValues<APInt>())
      out[i++] = isBool ? double(x.getBoolValue()) : double(x.getSExtValue());
  }
  return success();
}

void registerElementwiseEvaluators(EvaluatorRegistry &registry) {
  registry.add<ConstantOp>(evalConstant);
  registry.add<ExpOp>(unaryEvaluator([](double x) { return std::exp(x); }));
  registry.add<FloorOp>(unaryEvaluator([](double x) { return std::floor(x); }));
  registry.add<AddOp>(binaryEvaluator([](double a, double b) { return a + b; }));
  registry.add<MulOp>(binaryEvaluator([](double a, double b) { return a * b; }));
}

} // namespace mlir::kiln::ref
