//===- MixedPrecision.cpp - narrow storage, f32 compute -------------------===//
//
// Every kiln op computes in f32 whatever its storage type and rounds once on
// store, so storing a tensor in bf16 changes only its type: the rewrite
// retypes values in place, converts constants, and puts casts where the host
// sees the function (data inputs in, loss out).
//
//===----------------------------------------------------------------------===//

#include "compiler/transforms/MixedPrecision.h"

#include "compiler/transforms/Fusion.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::kiln {

#define GEN_PASS_DEF_KILNMIXEDPRECISION
#include "compiler/transforms/Passes.h.inc"

static bool isF32Tensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getElementType().isF32();
}

static RankedTensorType narrowed(Type type, FloatType storage) {
  return cast<RankedTensorType>(type).clone(storage);
}

/// Whether `value` is an attention's row log-sum-exp, which is f32 whatever
/// the storage type (as computed, for attention_backward and the host).
static bool keepsF32(Value value) {
  auto attention = value.getDefiningOp<AttentionOp>();
  return attention && value == attention.getRowLse();
}

/// Gives the row log-sum-exp of `attention` converted to the storage type to
/// its users other than attention_backward and the return.
static void narrowRowLseUses(AttentionOp attention, FloatType storage) {
  Value lse = attention.getRowLse();
  if (!lse)
    return;
  OpBuilder builder(attention->getContext());
  builder.setInsertionPointAfter(attention);
  auto converted = builder.create<CastOp>(
      attention.getLoc(), narrowed(lse.getType(), storage), lse);
  lse.replaceUsesWithIf(converted, [&](OpOperand &use) {
    Operation *user = use.getOwner();
    return user != converted && !isa<AttentionBackwardOp, func::ReturnOp>(user);
  });
  if (converted.use_empty())
    converted.erase();
}

LogicalResult narrowStorage(func::FuncOp function, FloatType storage) {
  if (function.isExternal())
    return function.emitOpError("has no body");
  Block &body = function.getBody().front();
  OpBuilder builder = OpBuilder::atBlockBegin(&body);

  // Parameters are stored narrow; data inputs stay f32 for the host and are
  // converted once on entry. Model state (batch norm running statistics)
  // stays f32, as PyTorch's autocast keeps it: small momentum updates would
  // round away in bf16. Batch norm reads it as it is; other ops get it
  // converted.
  for (BlockArgument arg : function.getArguments()) {
    if (!isF32Tensor(arg.getType()))
      continue;
    unsigned index = arg.getArgNumber();
    if (function.getArgAttr(index, KilnDialect::kParamAttrName)) {
      arg.setType(narrowed(arg.getType(), storage));
      continue;
    }
    bool isState =
        static_cast<bool>(function.getArgAttr(index, KilnDialect::kStateAttrName));
    Value converted = builder.create<CastOp>(
        arg.getLoc(), narrowed(arg.getType(), storage), arg);
    arg.replaceUsesWithIf(converted, [&](OpOperand &use) {
      if (use.getOwner() == converted.getDefiningOp())
        return false;
      return !(isState && isa<BatchNormOp>(use.getOwner()) &&
               use.getOperandNumber() >= 3);
    });
    if (converted.use_empty())
      converted.getDefiningOp()->erase();
  }

  for (Operation &op : body.without_terminator()) {
    if (auto constant = dyn_cast<ConstantOp>(op)) {
      auto value = dyn_cast<DenseElementsAttr>(constant.getValue());
      if (value && value.getElementType().isF32()) {
        auto type = narrowed(value.getType(), storage);
        SmallVector<APFloat> converted;
        for (APFloat x : value.getValues<APFloat>()) {
          bool losesInfo;
          x.convert(storage.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                    &losesInfo);
          converted.push_back(x);
        }
        constant.setValueAttr(DenseElementsAttr::get(type, converted));
        constant.getResult().setType(type);
      }
      continue;
    }
    // A cast to f32 now casts to the storage type.
    for (Value result : op.getResults())
      if (isF32Tensor(result.getType()) && !keepsF32(result))
        result.setType(narrowed(result.getType(), storage));
    if (auto attention = dyn_cast<AttentionOp>(op))
      narrowRowLseUses(attention, storage);
    // Updated running statistics keep the type of the running ones.
    if (auto norm = dyn_cast<BatchNormOp>(op))
      for (auto [running, updated] :
           llvm::zip(norm.getRunning(), norm.getUpdatedRunning()))
        updated.setType(running.getType());
  }

  // The host reads the results in f32.
  Operation *terminator = body.getTerminator();
  builder.setInsertionPoint(terminator);
  for (OpOperand &operand : terminator->getOpOperands()) {
    Type original = function.getResultTypes()[operand.getOperandNumber()];
    if (!isF32Tensor(original) || operand.get().getType() == original)
      continue;
    operand.set(
        builder.create<CastOp>(terminator->getLoc(), original, operand.get()));
  }
  function.setFunctionType(FunctionType::get(function.getContext(),
                                             body.getArgumentTypes(),
                                             function.getResultTypes()));
  return success();
}

namespace {
struct MixedPrecisionPass
    : public impl::KilnMixedPrecisionBase<MixedPrecisionPass> {
  using KilnMixedPrecisionBase::KilnMixedPrecisionBase;

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    FloatType storage;
    if (precision == "bf16")
      storage = FloatType::getBF16(context);
    else if (precision == "f16")
      storage = FloatType::getF16(context);
    else {
      getOperation().emitError("kiln-mixed-precision: precision must be bf16 "
                               "or f16, got '")
          << precision << "'";
      return signalPassFailure();
    }
    auto function = getOperation().lookupSymbol<func::FuncOp>(this->function);
    if (!function) {
      getOperation().emitError("kiln-mixed-precision: no function named '")
          << this->function << "'";
      return signalPassFailure();
    }
    if (failed(narrowStorage(function, storage)))
      signalPassFailure();
  }
};
} // namespace

} // namespace mlir::kiln
