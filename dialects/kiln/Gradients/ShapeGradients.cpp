//===- ShapeGradients.cpp - gradient rules of shape ops and reductions ----===//

#include "dialects/kiln/Gradients/GradientUtils.h"

namespace mlir::kiln {
namespace {

/// d(reduce_sum x) = g broadcast back over the reduced dims.
struct ReduceSumGradient
    : public GradientOpInterface::ExternalModel<ReduceSumGradient, ReduceSumOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &builder,
                               ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) const {
    auto reduce = cast<ReduceSumOp>(op);
    Location loc = op->getLoc();
    RankedTensorType inputType = reduce.getInput().getType();
    Value g = resultGrads[0];
    if (!reduce.getKeepdim()) {
      // Put the reduced dims back as size 1 so numpy broadcasting applies.
      SmallVector<int64_t> kept(inputType.getShape());
      for (int64_t d : reduce.getDims())
        kept[d] = 1;
      g = builder.create<ReshapeOp>(
          loc, RankedTensorType::get(kept, inputType.getElementType()), g);
    }
    operandGrads.push_back(builder.create<BroadcastToOp>(loc, inputType, g));
    return success();
  }
};

} // namespace

void registerShapeGradientRules(MLIRContext *context) {
  ReduceSumOp::attachInterface<ReduceSumGradient>(*context);
}

} // namespace mlir::kiln
