//===- NNOps.cpp - norms, softmax, attention, dropout, losses, ... -------===//
//
// Verifiers and result-type inference of the neural-network ops. Convolution
// and pooling, the recurrent op and the fusion region have files of their own.
//
//===----------------------------------------------------------------------===//

#include "dialects/kiln/IR/KilnDialect.h"
#include "dialects/kiln/IR/KilnOpUtils.h"

#include <limits>

using namespace mlir;
using namespace mlir::kiln;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// Checks that the operand `name` (a ranked tensor after ODS constraints) has
/// shape `expected` and `elementType`; `why` says where `expected` comes from.
static LogicalResult checkOperand(Operation *op, StringRef name, Value value,
                                  ArrayRef<int64_t> expected, Type elementType,
                                  StringRef why, StringRef elementSource) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getShape() != expected)
    return op->emitOpError()
           << "'" << name << "' must have shape " << formatShape(expected)
           << " (" << why << "), got " << shapeString(type);
  if (type.getElementType() != elementType)
    return op->emitOpError()
           << "'" << name << "' must have element type " << elementType
           << " like '" << elementSource << "', got " << type.getElementType();
  return success();
}

static LogicalResult checkPositiveEps(Operation *op, double eps) {
  if (!(eps > 0))
    return op->emitOpError() << "'eps' must be positive, got " << eps;
  return success();
}

//===----------------------------------------------------------------------===//
// Softmax
//===----------------------------------------------------------------------===//

static LogicalResult verifySoftmaxDim(Operation *op, Value input, int64_t dim) {
  int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
  if (dim < 0 || dim >= rank)
    return op->emitOpError()
           << "'dim' must be in [0, " << rank << ") for an input of rank "
           << rank << ", got " << dim;
  return success();
}

LogicalResult SoftmaxOp::verify() {
  return verifySoftmaxDim(*this, getInput(), getDimAttr().getInt());
}

LogicalResult LogSoftmaxOp::verify() {
  return verifySoftmaxDim(*this, getInput(), getDimAttr().getInt());
}

//===----------------------------------------------------------------------===//
// Normalisation
//===----------------------------------------------------------------------===//

LogicalResult LayerNormOp::verify() {
  auto type = cast<RankedTensorType>(getInput().getType());
  int64_t rank = type.getRank();
  int64_t count = getNumNormalizedDimsAttr().getInt();
  if (rank == 0)
    return emitOpError() << "'input' must have rank >= 1, got a rank-0 tensor";
  if (count < 1 || count > rank)
    return emitOpError() << "'num_normalized_dims' must be in [1, " << rank
                         << "] for an input of rank " << rank << ", got "
                         << count;
  if (failed(checkPositiveEps(*this, getEps().convertToDouble())))
    return failure();
  if (getBias() && !getWeight())
    return emitOpError() << "'bias' requires 'weight' (pass a tensor of ones "
                            "for a pure shift)";
  ArrayRef<int64_t> normalized = type.getShape().take_back(count);
  for (auto [name, value] : {std::pair<StringRef, Value>{"weight", getWeight()},
                             {"bias", getBias()}})
    if (value && failed(checkOperand(
                     *this, name, value, normalized, type.getElementType(),
                     "the normalized dims of 'input'", "input")))
      return failure();
  return success();
}

LogicalResult RmsNormOp::verify() {
  auto type = cast<RankedTensorType>(getInput().getType());
  if (type.getRank() == 0)
    return emitOpError() << "'input' must have rank >= 1, got a rank-0 tensor";
  if (failed(checkPositiveEps(*this, getEps().convertToDouble())))
    return failure();
  if (Value weight = getWeight())
    return checkOperand(*this, "weight", weight, type.getShape().take_back(),
                        type.getElementType(), "the last dim of 'input'",
                        "input");
  return success();
}

LogicalResult BatchNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  RankedTensorType type = rankedType(adaptor.getInput());
  if (!type)
    return inferenceError(location, "'input' must be a ranked tensor");
  // Default-valued attributes are still absent while the custom parser infers.
  int64_t rank = type.getRank();
  int64_t dim = adaptor.getDimAttr() ? adaptor.getDimAttr().getInt() : 1;
  if (rank < 2)
    return inferenceError(location,
                          "'input' must have rank >= 2 ([N, C, ...]), "
                          "got rank ",
                          rank);
  if (dim < 0 || dim >= rank)
    return inferenceError(location, "'dim' must be in [0, ", rank,
                          ") for an input of rank ", rank, ", got ", dim);
  auto stats =
      RankedTensorType::get({type.getDimSize(dim)}, type.getElementType());
  results.append({type, stats, stats});
  // The updated running statistics have the types of the running ones.
  for (Value running : adaptor.getRunning())
    results.push_back(running.getType());
  return success();
}

LogicalResult BatchNormOp::verify() {
  if (failed(checkPositiveEps(*this, getEps().convertToDouble())))
    return failure();
  auto type = cast<RankedTensorType>(getInput().getType());
  int64_t dim = getDimAttr().getInt();
  // Checked here too: the op's verifier runs before the inferred types are.
  if (dim < 0 || dim >= type.getRank())
    return emitOpError() << "'dim' must be in [0, " << type.getRank()
                         << ") for an input of rank " << type.getRank()
                         << ", got " << dim;
  std::string why = "the channel dim " + std::to_string(dim) + " of 'input'";
  int64_t channels[] = {type.getDimSize(dim)};
  if (failed(checkOperand(*this, "gamma", getGamma(), channels,
                          type.getElementType(), why, "input")) ||
      failed(checkOperand(*this, "beta", getBeta(), channels,
                          type.getElementType(), why, "input")))
    return failure();

  size_t running = getRunning().size();
  if (running != 0 && running != 2)
    return emitOpError() << "'running' takes two operands (the running mean "
                            "and the running variance), got "
                         << running;
  if (running == 0) {
    if (getMomentum())
      return emitOpError() << "'momentum' updates running statistics: it "
                              "needs 'running %mean, %var'";
    if (getEval())
      return emitOpError() << "'eval' normalises with running statistics: it "
                              "needs 'running %mean, %var'";
    return success();
  }
  auto meanType = cast<RankedTensorType>(getRunningMean().getType());
  if (failed(checkOperand(*this, "running mean", getRunningMean(), channels,
                          meanType.getElementType(), why, "running mean")) ||
      failed(checkOperand(*this, "running variance", getRunningVar(), channels,
                          meanType.getElementType(), why, "running mean")))
    return failure();
  double momentum = getMomentumValue();
  if (!(momentum >= 0 && momentum <= 1))
    return emitOpError() << "'momentum' must be in [0, 1], got " << momentum;
  int64_t perChannel = channels[0] ? type.getNumElements() / channels[0] : 0;
  if (!getEval() && perChannel < 2)
    return emitOpError()
           << "updating running statistics needs more than one value per "
              "channel (the unbiased variance divides by n - 1), got "
           << perChannel;
  return success();
}

//===----------------------------------------------------------------------===//
// Embedding and rope
//===----------------------------------------------------------------------===//

LogicalResult EmbeddingOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  RankedTensorType table = rankedType(adaptor.getTable());
  RankedTensorType indices = rankedType(adaptor.getIndices());
  if (!table || !indices)
    return inferenceError(location, "operands must be ranked tensors");
  if (table.getRank() != 2)
    return inferenceError(location, "'table' must have rank 2 ([V, D]), got ",
                          shapeString(table));
  Shape shape(indices.getShape());
  shape.push_back(table.getDimSize(1));
  results.push_back(RankedTensorType::get(shape, table.getElementType()));
  return success();
}

LogicalResult RopeOp::verify() {
  auto type = cast<RankedTensorType>(getInput().getType());
  if (type.getRank() != 4)
    return emitOpError() << "'input' must have rank 4 ([B, T, H, D]), got "
                         << shapeString(type);
  if (type.getDimSize(3) % 2 != 0)
    return emitOpError() << "head dim D (dim 3 of 'input') must be even, got "
                         << type.getDimSize(3);
  if (!(getTheta().convertToDouble() > 0))
    return emitOpError() << "'theta' must be positive, got "
                         << getTheta().convertToDouble();
  if (int64_t offset = getPositionOffsetAttr().getInt(); offset < 0)
    return emitOpError() << "'position_offset' must be non-negative, got "
                         << offset;
  return success();
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

LogicalResult
mlir::kiln::checkAttentionOperandRanks(std::optional<Location> location,
                                       Value query, Value key, Value value) {
  std::pair<StringRef, Value> operands[] = {
      {"query", query}, {"key", key}, {"value", value}};
  StringRef layouts[] = {"[B, H, Tq, D]", "[B, H, Tk, D]", "[B, H, Tk, Dv]"};
  for (auto [index, operand] : llvm::enumerate(operands)) {
    RankedTensorType type = rankedType(operand.second);
    if (!type)
      return inferenceError(location, "'", operand.first,
                            "' must be a ranked tensor");
    if (type.getRank() != 4)
      return inferenceError(location, "'", operand.first,
                            "' must have rank 4 (", layouts[index], "), got ",
                            shapeString(type));
  }
  return success();
}

LogicalResult AttentionOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  if (failed(checkAttentionOperandRanks(location, adaptor.getQuery(),
                                        adaptor.getKey(), adaptor.getValue())))
    return failure();
  RankedTensorType query = rankedType(adaptor.getQuery());
  ArrayRef<int64_t> q = query.getShape();
  int64_t dv = rankedType(adaptor.getValue()).getDimSize(3);
  results.push_back(
      RankedTensorType::get({q[0], q[1], q[2], dv}, query.getElementType()));
  if (adaptor.getWithRowLse())
    results.push_back(RankedTensorType::get(
        {q[0], q[1], q[2]}, Float32Type::get(query.getContext())));
  return success();
}

LogicalResult AttentionOp::verify() {
  auto query = cast<RankedTensorType>(getQuery().getType());
  auto key = cast<RankedTensorType>(getKey().getType());
  auto value = cast<RankedTensorType>(getValue().getType());
  ArrayRef<int64_t> q = query.getShape();
  int64_t tk = key.getDimSize(2);
  if (failed(checkOperand(*this, "key", getKey(), {q[0], q[1], tk, q[3]},
                          query.getElementType(), "B, H and D of 'query'",
                          "query")) ||
      failed(checkOperand(
          *this, "value", getValue(), {q[0], q[1], tk, value.getDimSize(3)},
          query.getElementType(), "B and H of 'query', Tk of 'key'", "query")))
    return failure();
  if (std::optional<APFloat> scale = getScale();
      scale && !(scale->convertToDouble() > 0))
    return emitOpError() << "'scale' must be positive, got "
                         << scale->convertToDouble();
  if (getCausal() && q[2] > tk)
    return emitOpError() << "causal attention needs Tq <= Tk so that no query "
                            "row is fully masked, got Tq = "
                         << q[2] << " and Tk = " << tk;
  return success();
}

//===----------------------------------------------------------------------===//
// Dropout
//===----------------------------------------------------------------------===//

LogicalResult DropoutOp::verify() {
  double rate = getRate().convertToDouble();
  if (!(rate >= 0 && rate < 1))
    return emitOpError() << "'rate' must be in [0, 1), got " << rate;
  if (int64_t seed = getSeedAttr().getInt(); seed < 0)
    return emitOpError() << "'seed' must be non-negative, got " << seed;
  if (int64_t stream = getStreamAttr().getInt(); stream < 0)
    return emitOpError() << "'stream' must be non-negative, got " << stream;
  return success();
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

/// A loss reduces to a rank-0 tensor of its first operand's element type.
static LogicalResult inferScalarLoss(std::optional<Location> location,
                                     StringRef name, Value input,
                                     SmallVectorImpl<Type> &results) {
  RankedTensorType type = rankedType(input);
  if (!type)
    return inferenceError(location, "'", name, "' must be a ranked tensor");
  results.push_back(RankedTensorType::get({}, type.getElementType()));
  return success();
}

LogicalResult MseLossOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> location,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &results) {
  return inferScalarLoss(location, "prediction", adaptor.getPrediction(),
                         results);
}

LogicalResult BinaryCrossEntropyOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &results) {
  return inferScalarLoss(location, "logits", adaptor.getLogits(), results);
}

LogicalResult CrossEntropyOp::inferReturnTypes(MLIRContext *,
                                               std::optional<Location> location,
                                               Adaptor adaptor,
                                               SmallVectorImpl<Type> &results) {
  return inferScalarLoss(location, "logits", adaptor.getLogits(), results);
}

LogicalResult
mlir::kiln::verifyCrossEntropy(Operation *op, Value logitsValue,
                               Value labelsValue, double smoothing,
                               std::optional<int64_t> ignoreIndex) {
  auto logits = cast<RankedTensorType>(logitsValue.getType());
  auto labels = cast<RankedTensorType>(labelsValue.getType());
  if (logits.getRank() != 2)
    return op->emitOpError()
           << "'logits' must have rank 2 ([N, C]), got " << shapeString(logits);
  if (labels.getShape() != logits.getShape().take_front())
    return op->emitOpError()
           << "'labels' must have shape [" << logits.getDimSize(0)
           << "] (N of 'logits'), got " << shapeString(labels);
  if (!(smoothing >= 0 && smoothing <= 1))
    return op->emitOpError()
           << "'label_smoothing' must be in [0, 1], got " << smoothing;
  // Labels are i32: a wider value could never match one.
  if (ignoreIndex && (*ignoreIndex < std::numeric_limits<int32_t>::min() ||
                      *ignoreIndex > std::numeric_limits<int32_t>::max()))
    return op->emitOpError()
           << "'ignore_index' must be an i32 value like the labels, got "
           << *ignoreIndex;
  return success();
}

LogicalResult CrossEntropyOp::verify() {
  return verifyCrossEntropy(*this, getLogits(), getLabels(),
                            getLabelSmoothing().convertToDouble(),
                            getIgnoreIndex());
}
