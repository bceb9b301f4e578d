//===- CustomGradients.cpp - the gradient rule of kiln.custom -------------===//
//
// A user kernel differentiates through the user's own backward kernel: one
// kiln.custom_backward that receives the forward inputs, the forward
// outputs and the output gradients, and writes the gradients of the
// floating-point inputs. kiln cannot derive a gradient from CUDA, so a
// kiln.custom without `backward` that a gradient must flow through is the
// user's error, at their op.
//
//===----------------------------------------------------------------------===//

#include "dialects/kiln/Gradients/GradientUtils.h"

namespace mlir::kiln {
namespace {

struct CustomGradient
    : public GradientOpInterface::ExternalModel<CustomGradient, CustomOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &builder,
                               ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) const {
    auto custom = cast<CustomOp>(op);
    SmallVector<unsigned> differentiable =
        CustomOp::differentiableInputs(custom.getInputs().getTypes());
    if (differentiable.empty() ||
        llvm::none_of(resultGrads, [](Value grad) { return bool(grad); })) {
      operandGrads.append(op->getNumOperands(), Value());
      return success();
    }
    if (!custom.getBackward())
      return op->emitOpError()
             << "has no 'backward' function, but the loss is differentiated "
                "through it: name the backward template of \""
             << custom.getSource() << "\" with `backward \"NAME\"`";

    // Outputs whose gradient does not reach the loss contribute zeros.
    SmallVector<Value> outputGrads;
    for (auto [grad, output] : llvm::zip(resultGrads, custom.getOutputs()))
      outputGrads.push_back(
          grad ? grad : splatLike(builder, op->getLoc(), output.getType(), 0));

    SmallVector<Type> gradTypes;
    for (unsigned input : differentiable)
      gradTypes.push_back(custom.getInputs()[input].getType());
    auto backward = builder.create<CustomBackwardOp>(
        op->getLoc(), gradTypes, custom.getInputs(), custom.getOutputs(),
        outputGrads, *custom.getBackward(), custom.getBackwardSourceOrDefault(),
        custom.getParamsAttr(), custom.getBlockSize());

    operandGrads.append(op->getNumOperands(), Value());
    for (auto [k, input] : llvm::enumerate(differentiable))
      operandGrads[input] = backward->getResult(k);
    return success();
  }
};

} // namespace

void registerCustomGradientRules(MLIRContext *context) {
  CustomOp::attachInterface<CustomGradient>(*context);
}

} // namespace mlir::kiln
