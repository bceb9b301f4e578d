//===- Interpreter.cpp - the CPU reference executor of kiln IR ------------===//

#include "compiler/interpreter/Interpreter.h"

#include "mlir/IR/SymbolTable.h"

namespace mlir::kiln::ref {

const Evaluator *EvaluatorRegistry::lookup(Operation *op) const {
  std::optional<RegisteredOperationName> name = op->getRegisteredInfo();
  if (!name)
    return nullptr;
  auto it = evaluators.find(name->getTypeID());
  return it == evaluators.end() ? nullptr : &it->second;
}

const EvaluatorRegistry &EvaluatorRegistry::global() {
  static const EvaluatorRegistry *registry = [] {
    auto *r = new EvaluatorRegistry();
    registerElementwiseEvaluators(*r);
    registerShapeEvaluators(*r);
    registerNNEvaluators(*r);
    registerSequenceEvaluators(*r);
    registerCustomEvaluators(*r);
    return r;
  }();
  return *registry;
}

/// Checks that `value` matches `type` and returns its description otherwise.
static std::string mismatch(const Tensor &value, Type type) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (!ranked)
    return "unsupported argument type";
  std::optional<ElementKind> kind = elementKindOf(ranked.getElementType());
  if (!kind || *kind != value.kind ||
      llvm::ArrayRef<int64_t>(value.shape) != ranked.getShape())
    return "got " + value.typeString();
  return {};
}

namespace {
/// Values of one region activation.
class Frame {
public:
  void bind(Value value, const Tensor *tensor) { values[value] = tensor; }
  void own(Value value, Tensor tensor) {
    owned.push_back(std::make_unique<Tensor>(std::move(tensor)));
    values[value] = owned.back().get();
  }
  const Tensor *lookup(Value value) const { return values.lookup(value); }

private:
  llvm::DenseMap<Value, const Tensor *> values;
  std::vector<std::unique_ptr<Tensor>> owned;
};
} // namespace

static FailureOr<std::vector<Tensor>>
runBlock(Block &block, llvm::ArrayRef<const Tensor *> arguments,
         Interpreter &interpreter) {
  Frame frame;
  for (auto [argument, tensor] : llvm::zip(block.getArguments(), arguments))
    frame.bind(argument, tensor);
  // The bytes this block's results hold, against what the machine has.
  const uint64_t memory = hostMemoryBytes();
  uint64_t held = 0;
  EvalContext context{interpreter.getPrecision(), interpreter};
  const EvaluatorRegistry &registry = EvaluatorRegistry::global();

  for (Operation &op : block) {
    llvm::SmallVector<const Tensor *> operands;
    for (Value operand : op.getOperands()) {
      const Tensor *tensor = frame.lookup(operand);
      if (!tensor)
        return op.emitOpError("the reference interpreter has no value for an "
                              "operand (defined outside the function?)"),
               failure();
      operands.push_back(tensor);
    }
    if (op.hasTrait<OpTrait::IsTerminator>()) {
      std::vector<Tensor> results;
      for (const Tensor *tensor : operands)
        results.push_back(*tensor);
      return results;
    }
    if (auto call = dyn_cast<func::CallOp>(op)) {
      auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
          call, call.getCalleeAttr());
      if (!callee)
        return call.emitOpError("callee not found"), failure();
      llvm::SmallVector<Tensor> inputs;
      for (const Tensor *tensor : operands)
        inputs.push_back(*tensor);
      FailureOr<std::vector<Tensor>> results = interpreter.run(callee, inputs);
      if (failed(results))
        return failure();
      for (auto [result, tensor] : llvm::zip(op.getResults(), *results))
        frame.own(result, std::move(tensor));
      continue;
    }

    const Evaluator *evaluator = registry.lookup(&op);
    if (!evaluator)
      return op.emitOpError("is not supported by the reference interpreter"),
             failure();
    llvm::SmallVector<Tensor> results;
    for (Type type : op.getResultTypes()) {
      auto ranked = dyn_cast<RankedTensorType>(type);
      if (!ranked || !ranked.hasStaticShape() ||
          !elementKindOf(ranked.getElementType()))
        return op.emitOpError("result type ")
                   << type << " is not a static kiln tensor type",
               failure();
      uint64_t bytes = hostBytesOf(ranked);
      if (memory && (bytes > memory || held > memory - bytes))
        return op.emitOpError("needs ")
                   << (bytes == UINT64_MAX ? std::string("more than 2^64")
                                           : std::to_string(bytes))
                   << " bytes for its result of type " << type
                   << " in the reference interpreter (f64 values), with "
                   << held << " held already: more than this machine's "
                   << memory << " bytes of memory",
               failure();
      held += bytes;
      results.push_back(Tensor::ofType(ranked));
    }
    if (failed((*evaluator)(&op, operands, results, context)))
      return failure();
    for (auto [result, tensor] : llvm::zip(op.getResults(), results)) {
      for (double &element : tensor.data)
        element = roundToStorage(element, tensor.kind, context.precision);
      frame.own(result, std::move(tensor));
    }
  }
  return block.getParentOp()->emitOpError("block has no terminator"), failure();
}

FailureOr<std::vector<Tensor>> Interpreter::run(func::FuncOp function,
                                                llvm::ArrayRef<Tensor> inputs) {
  if (function.isExternal())
    return function.emitOpError("has no body to interpret"), failure();
  llvm::ArrayRef<Type> types = function.getArgumentTypes();
  if (inputs.size() != types.size())
    return function.emitOpError("expects ")
               << types.size() << " inputs, got " << inputs.size(),
           failure();
  llvm::SmallVector<const Tensor *> arguments;
  for (auto [index, input] : llvm::enumerate(inputs)) {
    std::string problem = mismatch(input, types[index]);
    if (!problem.empty())
      return function.emitOpError("input ")
                 << index << ": expected " << types[index] << ", " << problem,
             failure();
    arguments.push_back(&input);
  }
  return runBlock(function.getBody().front(), arguments, *this);
}

FailureOr<std::vector<Tensor>>
Interpreter::runRegion(Region &region,
                       llvm::ArrayRef<const Tensor *> arguments) {
  return runBlock(region.front(), arguments, *this);
}

} // namespace mlir::kiln::ref
