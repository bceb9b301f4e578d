//===- Autodiff.cpp - symbolic reverse-mode differentiation ---------------===//
//
// One reverse sweep over the loss function's body: every op on a path from a
// differentiated argument to the loss asks its own gradient rule
// (GradientOpInterface) for the gradients of its operands, which are summed
// per value. Only "active" values get gradients: those that depend on a
// differentiated argument and that the loss depends on.
//
//===----------------------------------------------------------------------===//

#include "compiler/autodiff/Autodiff.h"

#include "dialects/kiln/Gradients/GradientUtils.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::kiln {

#define GEN_PASS_DEF_KILNAUTODIFF
#include "compiler/autodiff/Passes.h.inc"

SmallVector<unsigned> parameterPositions(func::FuncOp function) {
  SmallVector<unsigned> positions;
  for (unsigned i = 0, e = function.getNumArguments(); i < e; ++i)
    if (function.getArgAttr(i, KilnDialect::kParamAttrName))
      positions.push_back(i);
  return positions;
}

static bool isFloatTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && isa<FloatType>(tensor.getElementType());
}

namespace {
/// Values that depend on a differentiated argument and on which the loss
/// depends.
class ActivityAnalysis {
public:
  ActivityAnalysis(Block &body, ArrayRef<BlockArgument> sources, Value loss) {
    llvm::DenseSet<Value> varied(sources.begin(), sources.end());
    for (Operation &op : body)
      if (llvm::any_of(op.getOperands(),
                       [&](Value v) { return varied.contains(v); }))
        for (Value result : op.getResults())
          if (isFloatTensor(result.getType()))
            varied.insert(result);
    llvm::DenseSet<Value> useful = {loss};
    for (Operation &op : llvm::reverse(body))
      if (llvm::any_of(op.getResults(),
                       [&](Value v) { return useful.contains(v); }))
        for (Value operand : op.getOperands())
          useful.insert(operand);
    for (Value v : varied)
      if (useful.contains(v))
        active.insert(v);
  }
  bool isActive(Value value) const { return active.contains(value); }

private:
  llvm::DenseSet<Value> active;
};
} // namespace

/// Erases side-effect-free ops whose results are unused, last first, so the
/// gradient rules may build values that end up not being needed.
static void eraseDeadOps(Block &body) {
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
    if (!op.hasTrait<OpTrait::IsTerminator>() && op.use_empty() && isPure(&op))
      op.erase();
}

FailureOr<func::FuncOp> buildGradientFunction(func::FuncOp function,
                                              ArrayRef<unsigned> wrt,
                                              StringRef gradientName,
                                              bool seedArgument) {
  if (function.isExternal())
    return function.emitOpError("has no body to differentiate"), failure();
  if (function.getNumResults() == 0 ||
      !isFloatTensor(function.getResultTypes()[0]) ||
      cast<RankedTensorType>(function.getResultTypes()[0]).getRank() != 0)
    return function.emitOpError(
               "must return a scalar loss (a rank-0 float tensor) as its "
               "first result to be differentiated"),
           failure();
  for (unsigned index : wrt) {
    if (index >= function.getNumArguments())
      return function.emitOpError("cannot differentiate with respect to "
                                  "argument ")
                 << index << ": it has " << function.getNumArguments()
                 << " arguments",
             failure();
    if (!isFloatTensor(function.getArgumentTypes()[index]))
      return function.emitOpError("cannot differentiate with respect to "
                                  "argument ")
                 << index << " of non-float type "
                 << function.getArgumentTypes()[index],
             failure();
  }

  // The gradient function starts as a copy of the loss function.
  OpBuilder moduleBuilder(function);
  moduleBuilder.setInsertionPointAfter(function);
  auto gradient = cast<func::FuncOp>(moduleBuilder.clone(*function));
  gradient.setSymName(gradientName);
  Block &body = gradient.getBody().front();
  auto terminator = cast<func::ReturnOp>(body.getTerminator());
  Value loss = terminator.getOperand(0);

  SmallVector<BlockArgument> sources;
  for (unsigned index : wrt)
    sources.push_back(body.getArgument(index));
  ActivityAnalysis activity(body, sources, loss);

  OpBuilder builder(terminator);
  llvm::DenseMap<Value, Value> grads;
  if (seedArgument)
    gradient.insertArgument(gradient.getNumArguments(), loss.getType(),
                            DictionaryAttr(), function.getLoc());
  grads[loss] = seedArgument ? Value(body.getArguments().back())
                             : splatLike(builder, terminator.getLoc(),
                                         loss.getType(), 1.0);

  SmallVector<Operation *> forwardOps;
  for (Operation &op : body)
    if (&op != terminator)
      forwardOps.push_back(&op);
  for (Operation *op : llvm::reverse(forwardOps)) {
    SmallVector<Value> resultGrads;
    bool anyGrad = false;
    for (Value result : op->getResults()) {
      resultGrads.push_back(grads.lookup(result));
      anyGrad |= static_cast<bool>(resultGrads.back());
    }
    bool anyActiveOperand = llvm::any_of(
        op->getOperands(), [&](Value v) { return activity.isActive(v); });
    if (!anyGrad || !anyActiveOperand)
      continue;
    if (op->hasTrait<OpTrait::kiln::NonDifferentiable>())
      continue;
    auto rule = dyn_cast<GradientOpInterface>(op);
    if (rule && !rule.isDifferentiable())
      continue;
    if (!rule)
      return op->emitOpError("has no gradient rule, but the loss depends on "
                             "it through a differentiated argument"),
             failure();
    SmallVector<Value> operandGrads;
    if (failed(rule.buildGradients(builder, resultGrads, operandGrads)))
      return failure();
    if (operandGrads.size() != op->getNumOperands())
      return op->emitOpError("gradient rule returned ")
                 << operandGrads.size() << " gradients for "
                 << op->getNumOperands() << " operands",
             failure();
    for (auto [operand, grad] : llvm::zip(op->getOperands(), operandGrads)) {
      if (!grad || !activity.isActive(operand))
        continue;
      if (grad.getType() != operand.getType())
        return op->emitOpError("gradient rule produced ")
                   << grad.getType() << " for an operand of type "
                   << operand.getType(),
               failure();
      Value &sum = grads[operand];
      sum = sum ? builder.create<AddOp>(op->getLoc(), sum, grad).getResult()
                : grad;
    }
  }

  SmallVector<Value> results = {loss};
  for (BlockArgument source : sources) {
    Value grad = grads.lookup(source);
    results.push_back(
        grad ? grad
             : splatLike(builder, terminator.getLoc(), source.getType(), 0.0));
  }
  builder.create<func::ReturnOp>(terminator.getLoc(), results);
  terminator.erase();
  eraseDeadOps(body);

  SmallVector<Type> resultTypes;
  for (Value v : results)
    resultTypes.push_back(v.getType());
  gradient.setFunctionType(FunctionType::get(
      function.getContext(), body.getArgumentTypes(), resultTypes));
  MLIRContext *context = function.getContext();
  SmallVector<DictionaryAttr> resultAttrs;
  resultAttrs.push_back(DictionaryAttr::get(
      context,
      {NamedAttribute(StringAttr::get(context, KilnDialect::kNameAttrName),
                      StringAttr::get(context, "loss"))}));
  for (unsigned index : wrt)
    resultAttrs.push_back(DictionaryAttr::get(
        context, {NamedAttribute(
                     StringAttr::get(context, KilnDialect::kNameAttrName),
                     StringAttr::get(
                         context, "grad." + argumentName(function, index)))}));
  gradient.setAllResultAttrs(resultAttrs);
  return gradient;
}

namespace {
struct AutodiffPass : public impl::KilnAutodiffBase<AutodiffPass> {
  using KilnAutodiffBase::KilnAutodiffBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp function;
    if (!this->function.empty()) {
      function = module.lookupSymbol<func::FuncOp>(this->function);
      if (!function) {
        module.emitError("kiln-autodiff: no function named '")
            << this->function << "'";
        return signalPassFailure();
      }
    } else {
      auto functions = llvm::to_vector(module.getOps<func::FuncOp>());
      if (functions.size() == 1)
        function = functions.front();
      else
        function = module.lookupSymbol<func::FuncOp>("loss");
      if (!function) {
        module.emitError("kiln-autodiff: the module has ")
            << functions.size()
            << " functions; name the loss function with function=NAME";
        return signalPassFailure();
      }
    }
    SmallVector<unsigned> positions(wrt.begin(), wrt.end());
    if (positions.empty())
      positions = parameterPositions(function);
    llvm::sort(positions);
    if (failed(buildGradientFunction(function, positions,
                                     (function.getSymName() + "_grad").str())))
      signalPassFailure();
  }
};
} // namespace

} // namespace mlir::kiln
