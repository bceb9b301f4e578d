//===- SequenceGradients.cpp - gradient rules of attention and rnn --------===//
//
// Attention and the recurrent op differentiate into one fused backward op
// each (kiln.attention_backward, kiln.rnn_backward), which recompute what
// they need from the forward operands and results instead of keeping the
// attention weights or the gate activations alive.
//
//===----------------------------------------------------------------------===//

#include "dialects/kiln/Gradients/GradientUtils.h"

namespace mlir::kiln {
namespace {

/// (dq, dk, dv) = attention_backward(q, k, v, out, d_out) with the forward
/// op's causal flag, scale and (when it has one) row log-sum-exp.
struct AttentionGradient
    : public GradientOpInterface::ExternalModel<AttentionGradient,
                                                AttentionOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &builder,
                               ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) const {
    auto attention = cast<AttentionOp>(op);
    // The row log-sum-exp is what attention_backward reads; a loss that
    // depends on it would need its gradient too, which no rule gives.
    if (resultGrads.size() > 1 && resultGrads[1])
      return op->emitOpError("has no gradient through its row log-sum-exp "
                             "(with_row_lse): the loss depends on it through "
                             "a differentiated argument");
    Value dOut = resultGrads[0];
    if (!dOut) {
      operandGrads.append(op->getNumOperands(), Value());
      return success();
    }
    auto backward = builder.create<AttentionBackwardOp>(
        op->getLoc(), attention.getQuery(), attention.getKey(),
        attention.getValue(), attention.getResult(), dOut,
        attention.getCausalAttr(), attention.getScaleAttr(),
        attention.getRowLse());
    operandGrads.append(backward->result_begin(), backward->result_end());
    return success();
  }
};

/// (dWx, dR, db, dstates0) = rnn_backward(Wx, R, b, states0, states,
/// d_states, d_last_states); a result without a gradient contributes zeros.
struct RnnGradient
    : public GradientOpInterface::ExternalModel<RnnGradient, RnnOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &builder,
                               ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) const {
    auto rnn = cast<RnnOp>(op);
    if (!resultGrads[0] && !resultGrads[1]) {
      operandGrads.append(op->getNumOperands(), Value());
      return success();
    }
    auto gradOrZeros = [&](Value grad, Value result) {
      return grad ? grad
                  : splatLike(builder, op->getLoc(), result.getType(), 0.0);
    };
    Value dStates = gradOrZeros(resultGrads[0], rnn.getStates());
    Value dLast = gradOrZeros(resultGrads[1], rnn.getLastStates());
    auto backward = builder.create<RnnBackwardOp>(
        op->getLoc(), rnn.getInput(), rnn.getRecurrent(), rnn.getBias(),
        rnn.getStates0(), rnn.getStates(), dStates, dLast,
        rnn.getFunctionAttr());
    operandGrads.append(backward->result_begin(), backward->result_end());
    return success();
  }
};

} // namespace

void registerSequenceGradientRules(MLIRContext *context) {
  AttentionOp::attachInterface<AttentionGradient>(*context);
  RnnOp::attachInterface<RnnGradient>(*context);
}

} // namespace mlir::kiln
