//===- NNGradients.cpp - gradient rules of neural-network ops and losses --===//
//
// Softmax, log_softmax, the squared and binary losses, rope and dropout are
// differentiated with a few elementwise ops and reductions; the norms,
// convolution, pooling, embedding and the logit losses use the dedicated
// backward ops of KilnNNBackwardOps.td, which recompute their statistics
// instead of keeping them from the forward pass.
//
//===----------------------------------------------------------------------===//

#include "dialects/kiln/Gradients/GradientUtils.h"
#include "dialects/kiln/IR/KilnBuilder.h"

namespace mlir::kiln {
namespace {

/// `x * -1`, the form of negation these rules emit.
Value negated(KilnBuilder &kb, Value x) { return kb.scale(x, -1.0); }

/// 1/N for a mean over `count` elements, 1 for a sum.
double reductionScale(Reduction reduction, int64_t count) {
  return reduction == Reduction::mean ? 1.0 / double(count) : 1.0;
}

//===----------------------------------------------------------------------===//
// Softmax
//===----------------------------------------------------------------------===//

/// y = softmax(x): dx = y * (g - sum(g * y)), the sum along `dim`.
struct SoftmaxGradient
    : public GradientOpInterface::ExternalModel<SoftmaxGradient, SoftmaxOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &builder,
                               ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) const {
    auto softmax = cast<SoftmaxOp>(op);
    KilnBuilder kb(builder, op->getLoc());
    Value y = softmax.getResult(), g = resultGrads[0];
    int64_t dim = softmax.getDimAttr().getInt();
    Value dot = kb.reduceSum(kb.mul(g, y), {dim}, /*keepDim=*/true);
    operandGrads.push_back(kb.mul(y, kb.add(g, negated(kb, dot))));
    return success();
  }
};

/// y = log_softmax(x): dx = g - exp(y) * sum(g), the sum along `dim`.
struct LogSoftmaxGradient
    : public GradientOpInterface::ExternalModel<LogSoftmaxGradient,
                                                LogSoftmaxOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &builder,
                               ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) const {
    auto logSoftmax = cast<LogSoftmaxOp>(op);
    KilnBuilder kb(builder, op->getLoc());
    Value g = resultGrads[0];
    int64_t dim = logSoftmax.getDimAttr().getInt();
    Value total = kb.reduceSum(g, {dim}, /*keepDim=*/true);
    Value softmax = kb.exp(logSoftmax.getResult());
    operandGrads.push_back(kb.add(g, kb.mul(softmax, negated(kb, total))));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Normalisation
//===----------------------------------------------------------------------===//

struct LayerNormGradient
    : public GradientOpInterface::ExternalModel<LayerNormGradient,
                                                LayerNormOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &builder,
                               ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) const {
    auto norm = cast<LayerNormOp>(op);
    auto backward = builder.create<LayerNormBackwardOp>(
        op->getLoc(), resultGrads[0], norm.getInput(), norm.getWeight(),
        norm.getNumNormalizedDimsAttr(), norm.getEpsAttr());
    operandGrads.push_back(backward.getInputGrad());
    if (norm.getWeight())
      operandGrads.push_back(backward.getWeightGrad());
    if (norm.getBias())
      operandGrads.push_back(backward.getBiasGrad());
    return success();
  }
};

/// y = group_norm(x) w + b: kiln.group_norm_backward recomputes each
/// group's statistics and gives dx, dw = sum(g * xh) and db = sum(g) per
/// channel.
struct GroupNormGradient
    : public GradientOpInterface::ExternalModel<GroupNormGradient,
                                                GroupNormOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &builder,
                               ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) const {
    auto norm = cast<GroupNormOp>(op);
    auto backward = builder.create<GroupNormBackwardOp>(
        op->getLoc(), resultGrads[0], norm.getInput(), norm.getWeight(),
        norm.getGroupsAttr(), norm.getEpsAttr(), norm.getDimAttr());
    operandGrads.push_back(backward.getInputGrad());
    if (norm.getWeight())
      operandGrads.push_back(backward.getWeightGrad());
    if (norm.getBias())
      operandGrads.push_back(backward.getBiasGrad());
    return success();
  }
};

struct RmsNormGradient
    : public GradientOpInterface::ExternalModel<RmsNormGradient, RmsNormOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &builder,
                               ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) const {
    auto norm = cast<RmsNormOp>(op);
    auto backward = builder.create<RmsNormBackwardOp>(
        op->getLoc(), resultGrads[0], norm.getInput(), norm.getWeight(),
        norm.getEpsAttr());
    operandGrads.push_back(backward.getInputGrad());
    if (norm.getWeight())
      operandGrads.push_back(backward.getWeightGrad());
    return success();
  }
};

/// batch_norm has three results (five with running statistics). The
/// normalised result goes through batch_norm_backward; gradients of the
/// batch mean m and variance v add dm / M + dv * 2 (x - m) / M to the
/// input's gradient, M elements per channel. The updated running statistics
/// rm' = (1 - p) rm + p m and rv' = (1 - p) rv + p v M / (M - 1) pass their
/// gradients on to m and v and to the running operands (which are usually
/// kiln.state and not differentiated). The eval form is an affine map per
/// channel, differentiated with elementwise ops and reductions.
struct BatchNormGradient
    : public GradientOpInterface::ExternalModel<BatchNormGradient,
                                                BatchNormOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &builder,
                               ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) const {
    auto norm = cast<BatchNormOp>(op);
    KilnBuilder kb(builder, op->getLoc());
    Value x = norm.getInput();
    RankedTensorType type = KilnBuilder::typeOf(x);
    Type element = type.getElementType();
    int64_t dim = norm.getDimAttr().getInt();
    int64_t channels = type.getDimSize(dim);
    // Zero channels: every statistic is empty, and so are their terms.
    int64_t perChannel = channels ? type.getNumElements() / channels : 0;
    // [C] statistics as [1, .., C, .., 1] so they broadcast along `dim`.
    SmallVector<int64_t> statShape(type.getRank(), 1);
    statShape[dim] = type.getDimSize(dim);
    auto channelwise = [&](Value v) { return kb.reshape(v, statShape); };
    SmallVector<int64_t> otherDims;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (d != dim)
        otherDims.push_back(d);
    auto addTo = [&](Value sum, Value term) {
      return sum ? kb.add(sum, term) : term;
    };

    bool running = norm.hasRunningStats();
    double momentum = running ? norm.getMomentumValue() : 0.0;
    Value gRunningMean = running ? resultGrads[3] : Value();
    Value gRunningVar = running ? resultGrads[4] : Value();
    Value gm = resultGrads[1], gv = resultGrads[2];

    if (norm.getEval()) {
      // y = (x - rm) r gamma + beta, r = 1 / sqrt(rv + eps); the mean and
      // variance results and the updated statistics are rm and rv.
      Value rm = norm.getRunningMean(), rv = norm.getRunningVar();
      Value rvE = kb.cast(rv, element);
      Value r = kb.rsqrt(
          kb.add(rvE, kb.scalar(norm.getEps().convertToDouble(), element)));
      Value gamma = norm.getGamma();
      Value dx, dgamma, dbeta, drm, drv;
      if (Value gy = resultGrads[0]) {
        dx = kb.mul(gy, channelwise(kb.mul(gamma, r)));
        Value centred =
            kb.add(x, negated(kb, channelwise(kb.cast(rm, element))));
        dgamma = kb.reduceSum(kb.mul(gy, kb.mul(centred, channelwise(r))),
                              otherDims);
        dbeta = kb.reduceSum(gy, otherDims);
        drm = negated(kb, kb.mul(dbeta, kb.mul(gamma, r)));
        // d r / d rv = -r^3 / 2.
        Value r3 = kb.mul(r, kb.mul(r, r));
        drv = kb.mul(kb.reduceSum(kb.mul(gy, centred), otherDims),
                     kb.scale(kb.mul(gamma, r3), -0.5));
      }
      Type runningElement = KilnBuilder::elementOf(rm);
      for (auto [sum, direct, updated] :
           {std::tuple{&drm, gm, gRunningMean},
            std::tuple{&drv, gv, gRunningVar}}) {
        if (direct)
          *sum = addTo(*sum, direct);
        if (*sum)
          *sum = kb.cast(*sum, runningElement);
        if (updated)
          *sum = addTo(*sum, updated);
      }
      operandGrads.append({dx, dgamma, dbeta, drm, drv});
      return success();
    }

    Value dx, dgamma, dbeta;
    if (Value gy = resultGrads[0]) {
      auto backward = builder.create<BatchNormBackwardOp>(
          op->getLoc(), gy, x, norm.getGamma(), norm.getDimAttr(),
          norm.getEpsAttr());
      dx = backward.getInputGrad();
      dgamma = backward.getGammaGrad();
      dbeta = backward.getBetaGrad();
    }
    // The batch statistics also reach the loss through the updates.
    if (gRunningMean)
      gm = addTo(gm, kb.scale(kb.cast(gRunningMean, element), momentum));
    if (gRunningVar)
      gv = addTo(gv, kb.scale(kb.cast(gRunningVar, element),
                              momentum * double(perChannel) /
                                  double(perChannel - 1)));
    auto accumulate = [&](Value term) {
      dx = addTo(dx, kb.broadcastTo(term, type));
    };
    if (gm)
      accumulate(channelwise(kb.scale(gm, 1.0 / double(perChannel))));
    if (gv) {
      Value centred = kb.add(x, negated(kb, channelwise(norm.getMean())));
      Value factor = channelwise(kb.scale(gv, 2.0 / double(perChannel)));
      accumulate(kb.mul(centred, factor));
    }
    operandGrads.append({dx, dgamma, dbeta});
    if (running) {
      auto decayed = [&](Value g) {
        return g ? kb.scale(g, 1.0 - momentum) : Value();
      };
      operandGrads.append({decayed(gRunningMean), decayed(gRunningVar)});
    }
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

struct Conv2dGradient
    : public GradientOpInterface::ExternalModel<Conv2dGradient, Conv2dOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &builder,
                               ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) const {
    auto conv = cast<Conv2dOp>(op);
    KilnBuilder kb(builder, op->getLoc());
    Value g = resultGrads[0];
    operandGrads.push_back(builder.create<Conv2dBackwardInputOp>(
        op->getLoc(), conv.getInput().getType(), g, conv.getFilter(),
        conv.getLayoutAttr(), conv.getStrideAttr(), conv.getPaddingAttr(),
        conv.getDilationAttr(), conv.getGroupsAttr()));
    operandGrads.push_back(builder.create<Conv2dBackwardFilterOp>(
        op->getLoc(), conv.getFilter().getType(), g, conv.getInput(),
        conv.getLayoutAttr(), conv.getStrideAttr(), conv.getPaddingAttr(),
        conv.getDilationAttr(), conv.getGroupsAttr()));
    if (conv.getBias()) {
      // The bias is added at every (n, oh, ow): sum over all other dims.
      SmallVector<int64_t> dims = conv.getLayout() == ConvLayout::nhwc
                                      ? SmallVector<int64_t>{0, 1, 2}
                                      : SmallVector<int64_t>{0, 2, 3};
      operandGrads.push_back(kb.reduceSum(g, dims));
    }
    return success();
  }
};

/// y = conv2d_backward_input(g, w), a transposed convolution (ONNX
/// ConvTranspose): linear in g with the forward conv2d as its adjoint, so
/// dg = conv2d(dy, w); and dw[o, c, kh, kw] = sum g * dy at the positions
/// that tap pairs, which is conv2d_backward_filter(g, dy).
struct Conv2dBackwardInputGradient
    : public GradientOpInterface::ExternalModel<Conv2dBackwardInputGradient,
                                                Conv2dBackwardInputOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &builder,
                               ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) const {
    auto conv = cast<Conv2dBackwardInputOp>(op);
    Value dy = resultGrads[0];
    operandGrads.push_back(builder.create<Conv2dOp>(
        op->getLoc(), conv.getGrad().getType(), dy, conv.getFilter(), Value(),
        conv.getLayoutAttr(), conv.getStrideAttr(), conv.getPaddingAttr(),
        conv.getDilationAttr(), conv.getGroupsAttr()));
    operandGrads.push_back(builder.create<Conv2dBackwardFilterOp>(
        op->getLoc(), conv.getFilter().getType(), conv.getGrad(), dy,
        conv.getLayoutAttr(), conv.getStrideAttr(), conv.getPaddingAttr(),
        conv.getDilationAttr(), conv.getGroupsAttr()));
    return success();
  }
};

struct MaxPool2dGradient
    : public GradientOpInterface::ExternalModel<MaxPool2dGradient,
                                                MaxPool2dOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &builder,
                               ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) const {
    auto pool = cast<MaxPool2dOp>(op);
    OperationState state(op->getLoc(), MaxPool2dBackwardOp::getOperationName());
    MaxPool2dBackwardOp::build(builder, state, pool.getInput().getType(),
                               resultGrads[0], pool.getInput(),
                               pool.getKernelAttr(), pool.getStrideAttr(),
                               pool.getPaddingAttr(), pool.getLayoutAttr());
    operandGrads.push_back(builder.create(state)->getResult(0));
    return success();
  }
};

struct AvgPool2dGradient
    : public GradientOpInterface::ExternalModel<AvgPool2dGradient,
                                                AvgPool2dOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &builder,
                               ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) const {
    auto pool = cast<AvgPool2dOp>(op);
    operandGrads.push_back(builder.create<AvgPool2dBackwardOp>(
        op->getLoc(), pool.getInput().getType(), resultGrads[0],
        pool.getKernelAttr(), pool.getStrideAttr(), pool.getPaddingAttr(),
        pool.getLayoutAttr(), pool.getCountIncludePadAttr()));
    return success();
  }
};

/// y[o] = sum_i w(o, i) x[i] with fixed weights (one per output for
/// nearest, the blend weights for linear): dx[i] = sum_o w(o, i) g[o], which
/// kiln.resize_backward gathers per input element.
struct ResizeGradient
    : public GradientOpInterface::ExternalModel<ResizeGradient, ResizeOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &builder,
                               ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) const {
    auto resize = cast<ResizeOp>(op);
    operandGrads.push_back(builder.create<ResizeBackwardOp>(
        op->getLoc(), resize.getInput().getType(), resultGrads[0],
        resize.getModeAttr(), resize.getCoordinatesAttr(),
        resize.getRoundingAttr(), resize.getScalesAttr()));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Embedding, rope and dropout
//===----------------------------------------------------------------------===//

struct EmbeddingGradient
    : public GradientOpInterface::ExternalModel<EmbeddingGradient,
                                                EmbeddingOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &builder,
                               ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) const {
    auto embedding = cast<EmbeddingOp>(op);
    operandGrads.push_back(builder.create<EmbeddingBackwardOp>(
        op->getLoc(), embedding.getTable().getType(), resultGrads[0],
        embedding.getIndices()));
    operandGrads.push_back(Value()); // integer indices
    return success();
  }
};

/// rope rotates each pair (x[i], x[i + D/2]) by a; its transpose rotates by
/// -a: the same rope with `inverse` flipped.
struct RopeGradient
    : public GradientOpInterface::ExternalModel<RopeGradient, RopeOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &builder,
                               ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) const {
    auto rope = cast<RopeOp>(op);
    operandGrads.push_back(builder.create<RopeOp>(
        op->getLoc(), resultGrads[0], rope.getThetaAttr(),
        rope.getPositionOffsetAttr(),
        rope.getInverse() ? UnitAttr() : builder.getUnitAttr()));
    return success();
  }
};

/// Dropout is linear in its input with a fixed mask, so its gradient is the
/// same dropout (same seed, stream and offset) applied to g.
struct DropoutGradient
    : public GradientOpInterface::ExternalModel<DropoutGradient, DropoutOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &builder,
                               ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) const {
    auto dropout = cast<DropoutOp>(op);
    operandGrads.push_back(builder.create<DropoutOp>(
        op->getLoc(), resultGrads[0], dropout.getOffset(),
        dropout.getRateAttr(), dropout.getSeedAttr(), dropout.getStreamAttr()));
    if (dropout.getOffset())
      operandGrads.push_back(Value()); // the counter is an integer
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

/// l = s * sum (p - t)^2: dp = (p - t) * 2 s g, dt = -dp.
struct MseLossGradient
    : public GradientOpInterface::ExternalModel<MseLossGradient, MseLossOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &builder,
                               ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) const {
    auto loss = cast<MseLossOp>(op);
    KilnBuilder kb(builder, op->getLoc());
    Value p = loss.getPrediction(), t = loss.getTarget();
    double scale =
        2.0 * reductionScale(loss.getReduction(),
                             KilnBuilder::typeOf(p).getNumElements());
    Value difference = kb.add(p, negated(kb, t));
    Value dp = kb.mul(difference, kb.scale(resultGrads[0], scale));
    operandGrads.push_back(dp);
    operandGrads.push_back(negated(kb, dp));
    return success();
  }
};

struct CrossEntropyGradient
    : public GradientOpInterface::ExternalModel<CrossEntropyGradient,
                                                CrossEntropyOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &builder,
                               ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) const {
    auto loss = cast<CrossEntropyOp>(op);
    operandGrads.push_back(builder.create<CrossEntropyBackwardOp>(
        op->getLoc(), resultGrads[0], loss.getLogits(), loss.getLabels(),
        loss.getReductionAttr(), loss.getLabelSmoothingAttr(),
        loss.getIgnoreIndexAttr()));
    operandGrads.push_back(Value()); // integer labels
    return success();
  }
};

/// dx = s g (sigmoid(x) - t) through the backward op; dt = -s g x.
struct BinaryCrossEntropyGradient
    : public GradientOpInterface::ExternalModel<BinaryCrossEntropyGradient,
                                                BinaryCrossEntropyOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &builder,
                               ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) const {
    auto loss = cast<BinaryCrossEntropyOp>(op);
    KilnBuilder kb(builder, op->getLoc());
    Value x = loss.getLogits(), g = resultGrads[0];
    operandGrads.push_back(builder.create<BinaryCrossEntropyBackwardOp>(
        op->getLoc(), g, x, loss.getTarget(), loss.getReductionAttr()));
    double scale = reductionScale(loss.getReduction(),
                                  KilnBuilder::typeOf(x).getNumElements());
    operandGrads.push_back(kb.mul(x, kb.scale(g, -scale)));
    return success();
  }
};

} // namespace

void registerNNGradientRules(MLIRContext *context) {
  SoftmaxOp::attachInterface<SoftmaxGradient>(*context);
  LogSoftmaxOp::attachInterface<LogSoftmaxGradient>(*context);
  LayerNormOp::attachInterface<LayerNormGradient>(*context);
  RmsNormOp::attachInterface<RmsNormGradient>(*context);
  GroupNormOp::attachInterface<GroupNormGradient>(*context);
  BatchNormOp::attachInterface<BatchNormGradient>(*context);
  Conv2dOp::attachInterface<Conv2dGradient>(*context);
  Conv2dBackwardInputOp::attachInterface<Conv2dBackwardInputGradient>(
      *context);
  MaxPool2dOp::attachInterface<MaxPool2dGradient>(*context);
  AvgPool2dOp::attachInterface<AvgPool2dGradient>(*context);
  ResizeOp::attachInterface<ResizeGradient>(*context);
  EmbeddingOp::attachInterface<EmbeddingGradient>(*context);
  RopeOp::attachInterface<RopeGradient>(*context);
  DropoutOp::attachInterface<DropoutGradient>(*context);
  MseLossOp::attachInterface<MseLossGradient>(*context);
  CrossEntropyOp::attachInterface<CrossEntropyGradient>(*context);
  BinaryCrossEntropyOp::attachInterface<BinaryCrossEntropyGradient>(*context);
}

} // namespace mlir::kiln
