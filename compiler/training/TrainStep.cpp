//===- TrainStep.cpp - the training-step builder --------------------------===//

#include "compiler/training/TrainStep.h"

#include "compiler/autodiff/Autodiff.h"
#include "dialects/kiln/IR/KilnBuilder.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringSet.h"

#include <cmath>
#include <optional>

namespace mlir::kiln {

#define GEN_PASS_DEF_KILNMAKETRAINSTEP
#include "compiler/training/Passes.h.inc"

namespace {

/// One trained parameter of the loss function.
struct Parameter {
  unsigned argIndex;
  std::string name;
  RankedTensorType type;
  /// bf16/f16 parameters are updated through an f32 master copy.
  bool hasMaster;
};

/// One non-trainable state argument of the loss function (kiln.state): a
/// batch norm running statistic.
struct ModelState {
  unsigned argIndex;
  std::string name;
  RankedTensorType type;
};

/// One optimizer-state tensor.
struct StateSlot {
  std::string name;
  RankedTensorType type;
  StringRef role;
};

/// Names, roles and in-place targets of a function's arguments and results.
class Signature {
public:
  explicit Signature(MLIRContext *context) : context(context) {}

  void addArg(Type type, StringRef name, StringRef role) {
    argTypes.push_back(type);
    argAttrs.push_back(attrs(name, role, std::nullopt));
  }
  void addResult(Type type, StringRef name, StringRef role,
                 std::optional<unsigned> updates = std::nullopt) {
    resultTypes.push_back(type);
    resultAttrs.push_back(attrs(name, role, updates));
  }

  /// A function with this signature and an empty entry block.
  func::FuncOp create(OpBuilder &builder, Location loc, StringRef name) {
    auto function = builder.create<func::FuncOp>(
        loc, name, FunctionType::get(context, argTypes, resultTypes));
    function.setAllArgAttrs(argAttrs);
    function.setAllResultAttrs(resultAttrs);
    function.addEntryBlock();
    return function;
  }

private:
  DictionaryAttr attrs(StringRef name, StringRef role,
                       std::optional<unsigned> updates) {
    Builder b(context);
    SmallVector<NamedAttribute> list = {
        b.getNamedAttr(KilnDialect::kNameAttrName, b.getStringAttr(name)),
        b.getNamedAttr(KilnDialect::kRoleAttrName, b.getStringAttr(role))};
    if (updates)
      list.push_back(b.getNamedAttr(KilnDialect::kUpdatesAttrName,
                                    b.getI64IntegerAttr(*updates)));
    return DictionaryAttr::get(context, list);
  }

  MLIRContext *context;
  SmallVector<Type> argTypes, resultTypes;
  SmallVector<DictionaryAttr> argAttrs, resultAttrs;
};

} // namespace

/// Copies the body of `function` to `builder`'s insertion point with its
/// arguments replaced by `arguments`, and returns the values it returns.
static SmallVector<Value> inlineBody(OpBuilder &builder, func::FuncOp function,
                                     ValueRange arguments) {
  IRMapping mapping;
  mapping.map(function.getArguments(), arguments);
  Block &body = function.getBody().front();
  for (Operation &op : body.without_terminator())
    builder.clone(op, mapping);
  SmallVector<Value> results;
  for (Value value : body.getTerminator()->getOperands())
    results.push_back(mapping.lookupOrDefault(value));
  return results;
}

/// The kiln.batch_norm of `function` that updates state argument `index`
/// (takes it as a running statistic and is not in eval form) and the
/// position of the statistic among its running operands; null when none.
static std::pair<BatchNormOp, unsigned> updatingNorm(func::FuncOp function,
                                                     unsigned index) {
  for (OpOperand &use : function.getArgument(index).getUses()) {
    auto norm = dyn_cast<BatchNormOp>(use.getOwner());
    if (norm && norm.hasRunningStats() && !norm.getEval() &&
        use.getOperandNumber() >= 3)
      return {norm, use.getOperandNumber() - 3};
  }
  return {BatchNormOp(), 0};
}

/// Checks that state argument `state` of the loss function is used only as
/// a running statistic of one kiln.batch_norm, so that the training entries
/// can write that op's updated statistic back to its buffer in place.
static LogicalResult checkStateUse(func::FuncOp loss, const ModelState &state) {
  BlockArgument arg = loss.getArgument(state.argIndex);
  auto error = [&]() {
    return mlir::emitError(arg.getLoc())
           << "state argument '" << state.name << "' of @" << loss.getSymName()
           << " must be used only as the running mean or variance of one "
              "kiln.batch_norm (the training step updates it in place), ";
  };
  size_t norms = 0;
  for (OpOperand &use : arg.getUses()) {
    auto norm = dyn_cast<BatchNormOp>(use.getOwner());
    if (!norm || use.getOperandNumber() < 3) {
      InFlightDiagnostic diag = error() << "but '"
                                        << use.getOwner()->getName()
                                        << "' uses it";
      diag.attachNote(use.getOwner()->getLoc()) << "used here";
      return diag;
    }
    ++norms;
  }
  if (norms > 1)
    return error() << "but it is " << norms << " running-statistic operands";
  return success();
}

// The optimizer-state scalars of the non-finite gradient policy.
static constexpr StringLiteral kSkippedUpdates = "grad_stats.skipped_updates";
static constexpr StringLiteral kLossScaleExponent = "loss_scale.exponent";
static constexpr StringLiteral kLossScaleGoodSteps = "loss_scale.good_steps";

/// Optimizer state: each parameter's buffers in parameter order, then the
/// scalars of the non-finite gradient policy.
static SmallVector<StateSlot>
stateSlots(MLIRContext *context, ArrayRef<Parameter> params,
           const OptimizerOptions &optimizer,
           const GradientTransformOptions &transforms) {
  SmallVector<StateSlot> slots;
  for (const Parameter &p : params) {
    auto f32Type = RankedTensorType::get(p.type.getShape(),
                                         Float32Type::get(p.type.getContext()));
    if (p.hasMaster)
      slots.push_back({"master." + p.name, f32Type, "master_weight"});
    switch (optimizer.kind) {
    case OptimizerKind::SGD:
      if (optimizer.momentum != 0)
        slots.push_back({"momentum." + p.name, f32Type, "optimizer_state"});
      break;
    case OptimizerKind::Adam:
    case OptimizerKind::AdamW:
      slots.push_back({"adam_m." + p.name, f32Type, "optimizer_state"});
      slots.push_back({"adam_v." + p.name, f32Type, "optimizer_state"});
      break;
    }
  }
  auto scalar = RankedTensorType::get({}, Float32Type::get(context));
  if (transforms.skipNonFinite || transforms.dynamicLossScale)
    slots.push_back({kSkippedUpdates.str(), scalar, "optimizer_state"});
  if (transforms.dynamicLossScale) {
    slots.push_back({kLossScaleExponent.str(), scalar, "optimizer_state"});
    slots.push_back({kLossScaleGoodSteps.str(), scalar, "optimizer_state"});
  }
  return slots;
}

/// The position of the optimizer-state slot named `name`.
static size_t slotIndex(ArrayRef<StateSlot> slots, StringRef name) {
  auto it =
      llvm::find_if(slots, [&](const StateSlot &s) { return s.name == name; });
  assert(it != slots.end() && "missing optimizer-state slot");
  return it - slots.begin();
}

/// The loss scale 2^(initExponent + exponent) of dynamic loss scaling.
static Value lossScaleOf(KilnBuilder &kb, Value exponent,
                         const GradientTransformOptions &tf) {
  Type f32 = Float32Type::get(exponent.getContext());
  return kb.pow(kb.scalar(2.0, f32),
                kb.add(exponent, kb.scalar(tf.lossScaleInitExponent, f32)));
}

/// The number of NaN and infinite elements of `values` (f32), as an f32
/// scalar.
static Value countNonFinite(KilnBuilder &kb, ArrayRef<Value> values) {
  Type f32 = Float32Type::get(values.front().getContext());
  Value one = kb.scalar(1.0, f32), zero = kb.scalar(0.0, f32);
  Value infinity = kb.scalar(INFINITY, f32);
  Value total;
  for (Value g : values) {
    // NaN is the only value unequal to itself.
    Value isNan = kb.compare(CmpPredicate::ne, g, g);
    Value isInf = kb.compare(CmpPredicate::eq, kb.abs(g), infinity);
    Value count = kb.sumAll(kb.select(isNan, one, kb.select(isInf, one, zero)));
    total = total ? kb.add(total, count) : count;
  }
  return total;
}

static constexpr StringLiteral kStatisticNames[] = {
    "grad_stats.global_norm", "grad_stats.max_abs",
    "grad_stats.nonfinite_count"};

/// Builds apply_update(params..., state..., grads..., lr, step).
static func::FuncOp buildApplyUpdate(OpBuilder &moduleBuilder, Location loc,
                                     ArrayRef<Parameter> params,
                                     ArrayRef<StateSlot> slots,
                                     const TrainStepOptions &options) {
  MLIRContext *context = moduleBuilder.getContext();
  const OptimizerOptions &opt = options.optimizer;
  const GradientTransformOptions &tf = options.transforms;
  Type f32 = Float32Type::get(context);
  auto scalarF32 = RankedTensorType::get({}, f32);

  Signature signature(context);
  for (const Parameter &p : params)
    signature.addArg(p.type, p.name, "param");
  for (const StateSlot &s : slots)
    signature.addArg(s.type, s.name, s.role);
  for (const Parameter &p : params)
    signature.addArg(p.type, "grad." + p.name, "gradient");
  signature.addArg(scalarF32, "lr", "learning_rate");
  signature.addArg(RankedTensorType::get({}, IntegerType::get(context, 32)),
                   "step", "step");
  for (auto [i, p] : llvm::enumerate(params))
    signature.addResult(p.type, p.name, "param", i);
  for (auto [i, s] : llvm::enumerate(slots))
    signature.addResult(s.type, s.name, s.role, params.size() + i);
  if (tf.statistics)
    for (StringRef name : kStatisticNames)
      signature.addResult(scalarF32, name, "statistic");
  func::FuncOp function = signature.create(moduleBuilder, loc, "apply_update");

  Block &body = function.getBody().front();
  OpBuilder builder = OpBuilder::atBlockEnd(&body);
  KilnBuilder kb(builder, loc);
  size_t n = params.size();
  auto arg = [&](size_t i) -> Value { return body.getArgument(i); };
  Value lr = arg(n + slots.size() + n);
  Value step = arg(n + slots.size() + n + 1);

  // Gradients are transformed and applied in f32.
  SmallVector<Value> grads;
  for (size_t i = 0; i < n; ++i)
    grads.push_back(kb.cast(arg(n + slots.size() + i), f32));

  auto sumOfSquares = [&](ArrayRef<Value> values) {
    Value total;
    for (Value g : values) {
      Value s = kb.sumAll(kb.mul(g, g));
      total = total ? kb.add(total, s) : s;
    }
    return total;
  };

  // Dynamic loss scaling: the gradients arrive multiplied by the loss
  // scale, a power of two, so dividing by it is exact.
  bool skipNonFinite = tf.skipNonFinite || tf.dynamicLossScale;
  Value exponent, goodSteps, skipped;
  if (skipNonFinite)
    skipped = arg(n + slotIndex(slots, kSkippedUpdates));
  if (tf.dynamicLossScale) {
    exponent = arg(n + slotIndex(slots, kLossScaleExponent));
    goodSteps = arg(n + slotIndex(slots, kLossScaleGoodSteps));
    Value inverse = kb.div(kb.scalar(1.0, f32), lossScaleOf(kb, exponent, tf));
    for (Value &g : grads)
      g = kb.mul(g, inverse);
  }

  Value nonFinite;
  if (tf.statistics || skipNonFinite)
    nonFinite = countNonFinite(kb, grads);
  SmallVector<Value> statistics;
  if (tf.statistics) {
    Value maxAbs;
    for (Value g : grads) {
      Value m = kb.maxAll(kb.abs(g));
      maxAbs = maxAbs ? kb.max(maxAbs, m) : m;
    }
    statistics = {kb.sqrt(sumOfSquares(grads)), maxAbs, nonFinite};
  }
  if (tf.scale != 1.0)
    for (Value &g : grads)
      g = kb.scale(g, tf.scale);
  if (tf.clipValue > 0) {
    Value high = kb.scalar(tf.clipValue, f32),
          low = kb.scalar(-tf.clipValue, f32);
    for (Value &g : grads)
      g = kb.min(kb.max(g, low), high);
  }
  if (tf.clipNorm > 0) {
    Value norm = kb.sqrt(sumOfSquares(grads));
    Value factor =
        kb.min(kb.scalar(1.0, f32), kb.div(kb.scalar(tf.clipNorm, f32),
                                           kb.add(norm, kb.scalar(1e-6, f32))));
    for (Value &g : grads)
      g = kb.mul(g, factor);
  }
  if (tf.noiseScale > 0)
    for (auto [i, g] : llvm::enumerate(grads)) {
      Value noise = builder.create<RandomNormalOp>(
          loc, g.getType(), builder.getI64IntegerAttr(tf.noiseSeed),
          builder.getI64IntegerAttr(i), step, builder.getF64FloatAttr(0.0),
          builder.getF64FloatAttr(tf.noiseScale));
      g = kb.add(g, noise);
    }

  Value biasCorrection1, biasCorrection2;
  if (opt.kind != OptimizerKind::SGD) {
    Value one = kb.scalar(1.0, f32);
    // Skipped updates do not count (step numbers the calls).
    Value stepF32 = kb.cast(step, f32);
    if (skipNonFinite)
      stepF32 = kb.sub(stepF32, skipped);
    biasCorrection1 = kb.sub(one, kb.pow(kb.scalar(opt.beta1, f32), stepF32));
    biasCorrection2 = kb.sub(one, kb.pow(kb.scalar(opt.beta2, f32), stepF32));
  }

  SmallVector<Value> newParams, newState;
  size_t slot = 0;
  for (auto [i, p] : llvm::enumerate(params)) {
    Value g = grads[i];
    Value weights = p.hasMaster ? arg(n + slot) : arg(i);
    if (p.hasMaster)
      slot++;
    // This parameter's new optimizer buffers, in slot order.
    SmallVector<Value> buffers;
    Value update;
    switch (opt.kind) {
    case OptimizerKind::SGD: {
      if (opt.weightDecay != 0)
        g = kb.add(g, kb.scale(weights, opt.weightDecay));
      update = g;
      if (opt.momentum != 0) {
        Value buffer = kb.add(kb.scale(arg(n + slot), opt.momentum), g);
        buffers.push_back(buffer);
        slot++;
        update =
            opt.nesterov ? kb.add(g, kb.scale(buffer, opt.momentum)) : buffer;
      }
      break;
    }
    case OptimizerKind::Adam:
    case OptimizerKind::AdamW: {
      if (opt.kind == OptimizerKind::Adam && opt.weightDecay != 0)
        g = kb.add(g, kb.scale(weights, opt.weightDecay));
      Value m = kb.add(kb.scale(arg(n + slot), opt.beta1),
                       kb.scale(g, 1.0 - opt.beta1));
      Value v = kb.add(kb.scale(arg(n + slot + 1), opt.beta2),
                       kb.scale(kb.mul(g, g), 1.0 - opt.beta2));
      slot += 2;
      Value mHat = kb.div(m, biasCorrection1);
      Value vHat = kb.div(v, biasCorrection2);
      update = kb.div(mHat, kb.add(kb.sqrt(vHat), kb.scalar(opt.epsilon, f32)));
      if (opt.kind == OptimizerKind::AdamW && opt.weightDecay != 0)
        update = kb.add(update, kb.scale(weights, opt.weightDecay));
      buffers.push_back(m);
      buffers.push_back(v);
      break;
    }
    }
    Value updated = kb.sub(weights, kb.mul(lr, update));
    if (p.hasMaster) {
      newState.push_back(updated);
      newParams.push_back(kb.cast(updated, p.type.getElementType()));
    } else {
      newParams.push_back(updated);
    }
    newState.append(buffers);
  }

  if (skipNonFinite) {
    // A non-finite gradient leaves everything as it was.
    Value zero = kb.scalar(0.0, f32), one = kb.scalar(1.0, f32);
    Value finite = kb.compare(CmpPredicate::eq, nonFinite, zero);
    for (auto [i, value] : llvm::enumerate(newParams))
      value = kb.select(finite, value, arg(i));
    for (auto [i, value] : llvm::enumerate(newState))
      value = kb.select(finite, value, arg(n + i));
    newState.push_back(kb.add(skipped, kb.select(finite, zero, one)));
    if (tf.dynamicLossScale) {
      // Halve the scale on overflow; double it after an interval of
      // applied updates.
      Value good = kb.add(goodSteps, one);
      Value grow = kb.compare(
          CmpPredicate::ge, good,
          kb.scalar(static_cast<double>(tf.lossScaleGrowthInterval), f32));
      newState.push_back(
          kb.select(finite, kb.select(grow, kb.add(exponent, one), exponent),
                    kb.sub(exponent, one)));
      newState.push_back(kb.select(finite, kb.select(grow, zero, good), zero));
    }
  }

  SmallVector<Value> results(newParams);
  results.append(newState);
  results.append(statistics);
  builder.create<func::ReturnOp>(loc, results);
  return function;
}

/// Whether `value` is an argument or a view of one (which shares its buffer).
static bool aliasesArgument(Value value) {
  while (Operation *op = value.getDefiningOp()) {
    if (!isa<ReshapeOp, BroadcastToOp, TransposeOp, SliceOp>(op))
      return false;
    value = op->getOperand(0);
  }
  return true;
}

/// Builds train_step(params..., state..., inputs..., lr, step) from the two
/// halves, so that it computes exactly what they compute one after the other.
/// `updated` lists, for each updated state that forward_backward returns
/// after the gradients, its index in `states`.
static func::FuncOp buildTrainStep(OpBuilder &moduleBuilder, Location loc,
                                   func::FuncOp forwardBackward,
                                   func::FuncOp applyUpdate,
                                   ArrayRef<Parameter> params,
                                   ArrayRef<StateSlot> slots,
                                   ArrayRef<ModelState> states,
                                   ArrayRef<size_t> updated,
                                   const GradientTransformOptions &tf) {
  MLIRContext *context = moduleBuilder.getContext();
  size_t n = params.size();
  SmallVector<unsigned> inputPositions;
  // With dynamic loss scaling the last argument is the resident exponent.
  unsigned lossArgumentCount =
      forwardBackward.getNumArguments() - (tf.dynamicLossScale ? 1 : 0);
  for (unsigned i = 0; i < lossArgumentCount; ++i)
    if (argumentRole(forwardBackward, i) == "input")
      inputPositions.push_back(i);

  Signature signature(context);
  for (const Parameter &p : params)
    signature.addArg(p.type, p.name, "param");
  for (const StateSlot &s : slots)
    signature.addArg(s.type, s.name, s.role);
  for (const ModelState &s : states)
    signature.addArg(s.type, s.name, "state");
  for (unsigned i : inputPositions)
    signature.addArg(forwardBackward.getArgumentTypes()[i],
                     argumentName(forwardBackward, i), "input");
  Type scalarF32 = RankedTensorType::get({}, Float32Type::get(context));
  signature.addArg(scalarF32, "lr", "learning_rate");
  signature.addArg(RankedTensorType::get({}, IntegerType::get(context, 32)),
                   "step", "step");
  signature.addResult(forwardBackward.getResultTypes()[0], "loss", "loss");
  for (auto [i, p] : llvm::enumerate(params))
    signature.addResult(p.type, p.name, "param", i);
  for (auto [i, s] : llvm::enumerate(slots))
    signature.addResult(s.type, s.name, s.role, n + i);
  size_t firstState = n + slots.size();
  for (size_t k : updated)
    signature.addResult(states[k].type, states[k].name, "state",
                        firstState + k);
  if (tf.statistics)
    for (StringRef name : kStatisticNames)
      signature.addResult(scalarF32, name, "statistic");
  func::FuncOp function = signature.create(moduleBuilder, loc, "train_step");

  Block &body = function.getBody().front();
  OpBuilder builder = OpBuilder::atBlockEnd(&body);
  // forward_backward takes the loss function's arguments in their order.
  SmallVector<Value> lossArguments(forwardBackward.getNumArguments());
  for (auto [i, p] : llvm::enumerate(params))
    lossArguments[p.argIndex] = body.getArgument(i);
  for (auto [k, s] : llvm::enumerate(states))
    lossArguments[s.argIndex] = body.getArgument(firstState + k);
  size_t firstInput = firstState + states.size();
  for (auto [k, position] : llvm::enumerate(inputPositions))
    lossArguments[position] = body.getArgument(firstInput + k);
  // Dynamic loss scaling: forward_backward's last argument.
  if (tf.dynamicLossScale)
    lossArguments.back() =
        body.getArgument(slotIndex(slots, kLossScaleExponent) + n);
  // (loss, gradients..., updated state...)
  SmallVector<Value> lossAndGrads =
      inlineBody(builder, forwardBackward, lossArguments);
  // A loss that is a parameter (or a view of one) would be read after the
  // update overwrites it: the step returns a copy taken before.
  if (aliasesArgument(lossAndGrads[0]))
    lossAndGrads[0] =
        builder.create<CastOp>(loc, lossAndGrads[0].getType(), lossAndGrads[0]);

  SmallVector<Value> updateArguments;
  for (size_t i = 0; i < n + slots.size(); ++i)
    updateArguments.push_back(body.getArgument(i));
  updateArguments.append(lossAndGrads.begin() + 1,
                         lossAndGrads.begin() + 1 + n);
  size_t lrIndex = firstInput + inputPositions.size();
  updateArguments.push_back(body.getArgument(lrIndex));
  updateArguments.push_back(body.getArgument(lrIndex + 1));
  SmallVector<Value> update = inlineBody(builder, applyUpdate, updateArguments);
  // (loss, params', optimizer state', model state', statistics)
  SmallVector<Value> results = {lossAndGrads[0]};
  results.append(update.begin(), update.begin() + n + slots.size());
  results.append(lossAndGrads.begin() + 1 + n, lossAndGrads.end());
  results.append(update.begin() + n + slots.size(), update.end());
  builder.create<func::ReturnOp>(loc, results);
  return function;
}

/// Gives every gradient result of `forwardBackward` (results 1..count) a
/// value of its own. Each lands in a resident buffer of its own, which a
/// kernel writes; one value returned as two gradients (that of p and of q
/// in `p + q`) or an argument returned as one has no kernel for the second
/// buffer, so such a result becomes a copy (a cast to its own type, which
/// an element-wise kernel computes).
static void distinctGradients(func::FuncOp forwardBackward, size_t count) {
  Operation *terminator = forwardBackward.getBody().front().getTerminator();
  OpBuilder builder(terminator);
  llvm::SmallPtrSet<Value, 8> seen;
  for (size_t i = 1; i <= count; ++i) {
    OpOperand &operand = terminator->getOpOperand(i);
    Value grad = operand.get();
    if (seen.insert(grad).second && grad.getDefiningOp())
      continue;
    operand.set(
        builder.create<CastOp>(terminator->getLoc(), grad.getType(), grad));
  }
}

/// Replaces the seed argument of `forwardBackward` (its last, the gradient
/// the backward starts from) by the resident optimizer-state scalar
/// `loss_scale.exponent`, from which it computes the loss scale.
static void seedWithLossScale(func::FuncOp forwardBackward,
                              const GradientTransformOptions &tf) {
  MLIRContext *context = forwardBackward.getContext();
  Block &body = forwardBackward.getBody().front();
  unsigned seedIndex = forwardBackward.getNumArguments() - 1;
  BlockArgument seed = body.getArgument(seedIndex);
  Builder b(context);
  auto scalarF32 = RankedTensorType::get({}, Float32Type::get(context));
  forwardBackward.insertArgument(
      seedIndex + 1, scalarF32,
      b.getDictionaryAttr({b.getNamedAttr(KilnDialect::kNameAttrName,
                                          b.getStringAttr(kLossScaleExponent)),
                           b.getNamedAttr(KilnDialect::kRoleAttrName,
                                          b.getStringAttr("optimizer_state"))}),
      forwardBackward.getLoc());
  OpBuilder builder = OpBuilder::atBlockBegin(&body);
  KilnBuilder kb(builder, forwardBackward.getLoc());
  Value scale = lossScaleOf(kb, body.getArgument(seedIndex + 1), tf);
  auto seedType = cast<RankedTensorType>(seed.getType());
  if (seedType.getElementType() != scale.getType())
    scale = kb.cast(scale, seedType.getElementType());
  seed.replaceAllUsesWith(scale);
  forwardBackward.eraseArgument(seedIndex);
}

/// Sets each argument's role (param, state or input) on the loss-shaped
/// entries.
static void markArgumentRoles(func::FuncOp function) {
  Builder b(function.getContext());
  for (unsigned i = 0, e = function.getNumArguments(); i < e; ++i) {
    function.setArgAttr(i, KilnDialect::kRoleAttrName,
                        b.getStringAttr(argumentRole(function, i)));
    if (!function.getArgAttr(i, KilnDialect::kNameAttrName))
      function.setArgAttr(i, KilnDialect::kNameAttrName,
                          b.getStringAttr(argumentName(function, i)));
  }
}

LogicalResult buildTrainingEntries(ModuleOp module,
                                   const TrainStepOptions &options) {
  auto loss = module.lookupSymbol<func::FuncOp>(options.function);
  if (!loss)
    return module.emitError("kiln-make-train-step: no function named '")
           << options.function << "'";
  for (StringRef entry :
       {"forward", "forward_backward", "apply_update", "train_step"})
    if (module.lookupSymbol(entry))
      return module.emitError("kiln-make-train-step: the module already has "
                              "a symbol named '")
             << entry << "'";

  SmallVector<Parameter> params;
  SmallVector<ModelState> states;
  llvm::StringSet<> names;
  for (unsigned i = 0, e = loss.getNumArguments(); i < e; ++i) {
    std::string name = argumentName(loss, i);
    // The training entries take the learning rate and the step number as
    // inputs of these names.
    if (name == "lr" || name == "step")
      return mlir::emitError(loss.getArgument(i).getLoc())
             << "argument '" << name << "' of @" << loss.getSymName()
             << ": 'lr' and 'step' are reserved for the training entries' "
                "learning rate and step number; rename it (kiln.name)";
    if (!names.insert(name).second)
      return loss.emitOpError("has two arguments named '") << name << "'";
    auto type = cast<RankedTensorType>(loss.getArgumentTypes()[i]);
    if (loss.getArgAttr(i, KilnDialect::kStateAttrName)) {
      states.push_back({i, name, type});
      if (failed(checkStateUse(loss, states.back())))
        return failure();
    }
    if (!loss.getArgAttr(i, KilnDialect::kParamAttrName))
      continue;
    params.push_back({i, name, type, !type.getElementType().isF32()});
  }
  if (params.empty())
    return loss.emitOpError("has no kiln.param arguments to train");

  markArgumentRoles(loss);
  SmallVector<unsigned> positions;
  for (const Parameter &p : params)
    positions.push_back(p.argIndex);
  FailureOr<func::FuncOp> forwardBackward = buildGradientFunction(
      loss, positions, "forward_backward", options.transforms.dynamicLossScale);
  if (failed(forwardBackward))
    return failure();
  if (options.transforms.dynamicLossScale)
    seedWithLossScale(*forwardBackward, options.transforms);
  Builder b(module.getContext());
  forwardBackward->setResultAttr(0, KilnDialect::kRoleAttrName,
                                 b.getStringAttr("loss"));
  for (size_t i = 1; i <= params.size(); ++i)
    forwardBackward->setResultAttr(i, KilnDialect::kRoleAttrName,
                                   b.getStringAttr("gradient"));
  distinctGradients(*forwardBackward, params.size());
  // The forward pass of training updates the running statistics: their new
  // values follow the gradients and replace the state arguments in place.
  SmallVector<size_t> updated;
  Operation *terminator = forwardBackward->getBody().front().getTerminator();
  for (auto [k, state] : llvm::enumerate(states)) {
    auto [norm, which] = updatingNorm(*forwardBackward, state.argIndex);
    if (!norm)
      continue;
    Value value = norm.getUpdatedRunning()[which];
    unsigned index = forwardBackward->getNumResults();
    terminator->insertOperands(terminator->getNumOperands(), value);
    forwardBackward->insertResult(
        index, value.getType(),
        b.getDictionaryAttr(
            {b.getNamedAttr(KilnDialect::kNameAttrName,
                            b.getStringAttr(state.name)),
             b.getNamedAttr(KilnDialect::kRoleAttrName,
                            b.getStringAttr("state")),
             b.getNamedAttr(KilnDialect::kUpdatesAttrName,
                            b.getI64IntegerAttr(state.argIndex))}));
    updated.push_back(k);
  }
  loss.setSymName("forward");
  useRunningStatistics(loss);
  loss.setResultAttr(0, KilnDialect::kRoleAttrName, b.getStringAttr("loss"));
  if (!loss.getResultAttr(0, KilnDialect::kNameAttrName))
    loss.setResultAttr(0, KilnDialect::kNameAttrName, b.getStringAttr("loss"));

  SmallVector<StateSlot> slots = stateSlots(
      module.getContext(), params, options.optimizer, options.transforms);
  OpBuilder moduleBuilder = OpBuilder::atBlockEnd(module.getBody());
  func::FuncOp applyUpdate =
      buildApplyUpdate(moduleBuilder, loss.getLoc(), params, slots, options);
  buildTrainStep(moduleBuilder, loss.getLoc(), *forwardBackward, applyUpdate,
                 params, slots, states, updated, options.transforms);
  return success();
}

namespace {
struct MakeTrainStepPass
    : public impl::KilnMakeTrainStepBase<MakeTrainStepPass> {
  using KilnMakeTrainStepBase::KilnMakeTrainStepBase;

  void runOnOperation() override {
    TrainStepOptions options;
    options.function = function;
    OptimizerOptions &opt = options.optimizer;
    if (optimizer == "sgd")
      opt.kind = OptimizerKind::SGD;
    else if (optimizer == "adam")
      opt.kind = OptimizerKind::Adam;
    else if (optimizer == "adamw")
      opt.kind = OptimizerKind::AdamW;
    else {
      getOperation().emitError("kiln-make-train-step: unknown optimizer '")
          << optimizer << "'; expected sgd, adam or adamw";
      return signalPassFailure();
    }
    opt.momentum = momentum;
    opt.nesterov = nesterov;
    opt.beta1 = beta1;
    opt.beta2 = beta2;
    opt.epsilon = epsilon;
    opt.weightDecay = weightDecay >= 0
                          ? double(weightDecay)
                          : (opt.kind == OptimizerKind::AdamW ? 0.01 : 0.0);
    if (nesterov && momentum <= 0) {
      getOperation().emitError(
          "kiln-make-train-step: nesterov needs momentum > 0");
      return signalPassFailure();
    }
    GradientTransformOptions &tf = options.transforms;
    tf.statistics = statistics;
    tf.scale = gradScale;
    tf.clipValue = clipValue;
    tf.clipNorm = clipNorm;
    tf.noiseScale = noiseScale;
    tf.noiseSeed = noiseSeed;
    if (nonFiniteGrads != "apply" && nonFiniteGrads != "skip") {
      getOperation().emitError("kiln-make-train-step: nonfinite-grads must be "
                               "apply or skip, got '")
          << nonFiniteGrads << "'";
      return signalPassFailure();
    }
    if (lossScale != "none" && lossScale != "dynamic") {
      getOperation().emitError("kiln-make-train-step: loss-scale must be none "
                               "or dynamic, got '")
          << lossScale << "'";
      return signalPassFailure();
    }
    int initExponent = 0;
    double mantissa = std::frexp(double(lossScaleInit), &initExponent);
    if (mantissa != 0.5 || initExponent - 1 < -64 || initExponent - 1 > 64) {
      getOperation().emitError("kiln-make-train-step: loss-scale-init must be "
                               "a power of two between 2^-64 and 2^64, got ")
          << double(lossScaleInit);
      return signalPassFailure();
    }
    if (lossScaleGrowthInterval < 1) {
      getOperation().emitError("kiln-make-train-step: "
                               "loss-scale-growth-interval must be >= 1");
      return signalPassFailure();
    }
    tf.skipNonFinite = nonFiniteGrads == "skip";
    tf.dynamicLossScale = lossScale == "dynamic";
    tf.lossScaleInitExponent = initExponent - 1;
    tf.lossScaleGrowthInterval = lossScaleGrowthInterval;
    if (clipValue < 0 || clipNorm < 0 || noiseScale < 0) {
      getOperation().emitError("kiln-make-train-step: clip-value, clip-norm "
                               "and grad-noise must be >= 0");
      return signalPassFailure();
    }
    if (failed(buildTrainingEntries(getOperation(), options)))
      signalPassFailure();
  }
};
} // namespace

} // namespace mlir::kiln
