//===- LossImporters.cpp - ONNX loss nodes and the --loss option ----------===//
//
// SoftmaxCrossEntropyLoss and NegativeLogLikelihoodLoss. The common case
// (logits [N, C], no class weights, mean or sum, with or without
// ignore_index) becomes kiln.cross_entropy, which the training pipeline
// fuses; every other form is
// composed exactly from a one-hot mask of the labels: per element
// l = -w[label] * logp[label], where w is 0 for ignore_index, reduced by
// sum, by sum / sum(w) (mean), or not at all (none).
//
//===----------------------------------------------------------------------===//

#include "compiler/import/onnx/GraphImporter.h"

#include <limits>

namespace mlir::kiln::onnx_import {
namespace {

LogicalResult importLoss(OnnxNode &node, bool fromLogits) {
  Value scores = node.input(0), labels = node.input(1);
  if (!scores || !labels)
    return failure();
  auto ts = KilnBuilder::typeOf(scores), tl = KilnBuilder::typeOf(labels);
  if (!llvm::isa<FloatType>(ts.getElementType()))
    return node.unsupported("integer scores");
  if (!tl.getElementType().isInteger(32))
    return node.emitError()
           << "the labels of " << node.opType() << " must be INT32 or INT64";
  if (ts.getRank() < 2 || tl.getRank() != ts.getRank() - 1 ||
      tl.getDimSize(0) != ts.getDimSize(0) ||
      tl.getShape().drop_front() != ts.getShape().drop_front(2))
    return node.emitError()
           << node.opType() << " needs scores [N, C, d...] "
           << "and labels [N, d...], not " << ts << " and " << tl;
  std::string reduction = node.stringAttr("reduction", "mean");
  if (reduction != "mean" && reduction != "sum" && reduction != "none")
    return node.unsupported("reduction = '" + reduction + "'");
  // The labels are i32 (INT64 ones are narrowed on import): an ignore_index
  // outside that range matches none of them.
  int64_t ignoreIndex = node.intAttr("ignore_index", 0);
  bool hasIgnore = node.hasAttr("ignore_index") &&
                   ignoreIndex >= std::numeric_limits<int32_t>::min() &&
                   ignoreIndex <= std::numeric_limits<int32_t>::max();
  Value weights = node.hasInput(2) ? node.input(2) : Value();
  if (node.hasInput(2) && !weights)
    return failure();
  if (weights && (KilnBuilder::typeOf(weights).getShape() !=
                      llvm::ArrayRef<int64_t>{ts.getDimSize(1)} ||
                  KilnBuilder::elementOf(weights) != ts.getElementType()))
    return node.emitError() << "the weights of " << node.opType()
                            << " must be [C] of the scores' type";
  OpBuilder &b = node.builder();
  KilnBuilder kb = node.kb();
  Location loc = node.loc();

  if (fromLogits && ts.getRank() == 2 && !weights && reduction != "none" &&
      !node.hasOutput(1)) {
    Reduction kind = reduction == "sum" ? Reduction::sum : Reduction::mean;
    node.setResult(
        0, b.create<CrossEntropyOp>(
               loc, scores, labels, kind, llvm::APFloat(0.0),
               hasIgnore ? b.getI64IntegerAttr(ignoreIndex) : IntegerAttr()));
    return success();
  }

  Value logp =
      fromLogits ? b.create<LogSoftmaxOp>(loc, scores, 1).getResult() : scores;
  // One-hot of the labels along dim 1; labels outside [0, C) (ignore_index)
  // select nothing.
  llvm::SmallVector<int64_t> labelShape(tl.getShape());
  labelShape.insert(labelShape.begin() + 1, 1);
  Value labelsC = node.reshape(labels, labelShape);
  Value iota = b.create<IotaOp>(
      loc, RankedTensorType::get(ts.getShape(), b.getI32Type()), 1);
  Value oneHot =
      kb.cast(kb.compare(CmpPredicate::eq, iota, labelsC), ts.getElementType());
  Value picked = b.create<ReduceSumOp>(loc, kb.mul(oneHot, logp),
                                       llvm::ArrayRef<int64_t>{1}, false);
  Value w = node.splat(
      RankedTensorType::get(tl.getShape(), ts.getElementType()), 1.0);
  if (weights) {
    llvm::SmallVector<int64_t> wShape(ts.getRank(), 1);
    wShape[1] = ts.getDimSize(1);
    w = b.create<ReduceSumOp>(loc,
                              kb.mul(oneHot, node.reshape(weights, wShape)),
                              llvm::ArrayRef<int64_t>{1}, false);
  }
  if (hasIgnore) {
    Value valid = kb.compare(CmpPredicate::ne, labels,
                             node.scalarLike(ignoreIndex, labels));
    w = b.create<SelectOp>(loc, valid, w, node.scalarLike(0.0, w));
  }
  Value losses = kb.neg(kb.mul(picked, w));
  Value result = losses;
  if (reduction == "sum") {
    result = kb.sumAll(losses);
  } else if (reduction == "mean") {
    result = kb.div(kb.sumAll(losses), kb.sumAll(w));
  }
  node.setResult(0, result);
  if (node.hasOutput(1))
    node.setResult(1, logp);
  return success();
}

} // namespace

void registerLossImporters(OpImporterRegistry &registry) {
  registry.add("SoftmaxCrossEntropyLoss",
               [](OnnxNode &node) { return importLoss(node, true); });
  registry.add("NegativeLogLikelihoodLoss",
               [](OnnxNode &node) { return importLoss(node, false); });
}

FailureOr<Value> buildRequestedLoss(OpBuilder &b, Location loc,
                                    llvm::StringRef kind, Value prediction,
                                    Value target) {
  auto type = KilnBuilder::typeOf(prediction);
  if (!llvm::isa<FloatType>(type.getElementType()))
    return emitError(loc) << "--loss needs a floating-point graph output, not "
                          << type,
           failure();
  if (kind == "mse")
    return b.create<MseLossOp>(loc, prediction, target, Reduction::mean)
        .getResult();
  return b
      .create<CrossEntropyOp>(loc, prediction, target, Reduction::mean,
                              llvm::APFloat(0.0), IntegerAttr())
      .getResult();
}

} // namespace mlir::kiln::onnx_import
