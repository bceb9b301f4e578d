//===- ElementwiseGradients.cpp - gradient rules of elementwise ops -------===//

#include "dialects/kiln/Gradients/GradientUtils.h"

namespace mlir::kiln {
namespace {

/// d(a + b) = (g, g), each summed back to its operand's shape.
struct AddGradient
    : public GradientOpInterface::ExternalModel<AddGradient, AddOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &builder,
                               ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) const {
    auto add = cast<AddOp>(op);
    Value g = resultGrads[0];
    operandGrads.push_back(sumToShape(builder, op->getLoc(), g,
                                      add.getLhs().getType()));
    operandGrads.push_back(sumToShape(builder, op->getLoc(), g,
                                      add.getRhs().getType()));
    return success();
  }
};

/// d(exp x) = g * exp(x), reusing the forward result.
struct ExpGradient
    : public GradientOpInterface::ExternalModel<ExpGradient, ExpOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &builder,
                               ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) const {
    operandGrads.push_back(builder.create<MulOp>(op->getLoc(), resultGrads[0],
                                                 op->getResult(0)));
    return success();
  }
};

} // namespace

void registerElementwiseGradientRules(MLIRContext *context) {
  AddOp::attachInterface<AddGradient>(*context);
  ExpOp::attachInterface<ExpGradient>(*context);
}

} // namespace mlir::kiln
