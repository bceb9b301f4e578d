//===- KilnDialect.cpp - dialect registration and argument attributes -----===//

#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace mlir::kiln;

#include "dialects/kiln/IR/KilnDialect.cpp.inc"

void KilnDialect::initialize() {
  registerAttributes();
  registerOps();
}

/// `kiln.value`: the values a parameter, state or constant argument starts
/// from, of its shape, and of its element type or a float type that rounds
/// to it.
static LogicalResult verifyStartingValue(Operation *op, Type valueType,
                                         NamedAttribute attribute,
                                         StringRef where) {
  StringRef name = attribute.getName().strref();
  if (where != "argument")
    return op->emitError() << "'" << name << "' may only mark a function "
                           << "argument, not a " << where;
  auto value = dyn_cast<DenseElementsAttr>(attribute.getValue());
  auto tensor = dyn_cast<RankedTensorType>(valueType);
  if (!value || !tensor)
    return op->emitError() << "'" << name
                           << "' must be a dense elements attribute for a "
                              "tensor argument, got "
                           << attribute.getValue();
  Type element = tensor.getElementType(), given = value.getElementType();
  bool rounds = isa<FloatType>(element) && isa<FloatType>(given);
  if (value.getType().getShape() != tensor.getShape() ||
      (given != element && !rounds))
    return op->emitError() << "'" << name << "' of type " << value.getType()
                           << " does not fit an argument of type " << tensor;
  return success();
}

/// `kiln.param` must hold a `#kiln.init` and may only mark a tensor argument of
/// a function; `kiln.name` must be a non-empty string.
static LogicalResult verifyValueAttribute(Operation *op, Type valueType,
                                          NamedAttribute attribute,
                                          StringRef where) {
  StringRef name = attribute.getName().strref();
  if (name == KilnDialect::kParamAttrName ||
      name == KilnDialect::kStateAttrName) {
    bool state = name == KilnDialect::kStateAttrName;
    if (where != "argument")
      return op->emitError() << "'" << name << "' may only mark a function "
                             << "argument, not a " << where;
    if (!isa<InitAttr>(attribute.getValue()))
      return op->emitError()
             << "'" << name << "' must be an initialiser such as "
             << (state ? "#kiln.init<zeros>" : "#kiln.init<normal, std = 0.02>")
             << ", got " << attribute.getValue();
    auto tensor = dyn_cast<RankedTensorType>(valueType);
    if (!tensor || !tensor.hasStaticShape() ||
        !isa<FloatType>(tensor.getElementType()))
      return op->emitError()
             << "'" << name << "' marks an argument of type " << valueType
             << "; " << (state ? "state tensors" : "parameters")
             << " must be static float tensors";
    return success();
  }
  if (name == KilnDialect::kNameAttrName) {
    auto text = dyn_cast<StringAttr>(attribute.getValue());
    if (!text || text.getValue().empty())
      return op->emitError() << "'" << name << "' must be a non-empty string";
    return success();
  }
  if (name == KilnDialect::kRoleAttrName) {
    auto text = dyn_cast<StringAttr>(attribute.getValue());
    static constexpr llvm::StringLiteral kRoles[] = {
        "param",    "state", "optimizer_state", "master_weight",
        "constant", "input", "gradient",        "learning_rate",
        "step",     "loss",  "statistic",       "output"};
    if (!text || !llvm::is_contained(kRoles, text.getValue()))
      return op->emitError()
             << "'" << name << "' must be one of param, state, "
             << "optimizer_state, master_weight, constant, input, gradient, "
             << "learning_rate, step, loss, statistic, output; got "
             << attribute.getValue();
    return success();
  }
  if (name == KilnDialect::kValueAttrName)
    return verifyStartingValue(op, valueType, attribute, where);
  if (name == "kiln.buffer") {
    // Written by --kiln-plan-memory: {buffer, offset, size}.
    auto dict = dyn_cast<DictionaryAttr>(attribute.getValue());
    if (!dict || !dict.getAs<StringAttr>("buffer") ||
        !dict.getAs<IntegerAttr>("offset") || !dict.getAs<IntegerAttr>("size"))
      return op->emitError() << "'kiln.buffer' must be {buffer = \"...\", "
                                "offset = N, size = N}";
    return success();
  }
  if (name == KilnDialect::kUpdatesAttrName) {
    if (where != "result")
      return op->emitError() << "'" << name << "' may only mark a result";
    auto index = dyn_cast<IntegerAttr>(attribute.getValue());
    auto func = dyn_cast<func::FuncOp>(op);
    if (!index || !func || index.getInt() < 0 ||
        index.getInt() >= func.getNumArguments())
      return op->emitError()
             << "'" << name << "' must be the index of a function argument";
    if (func.getArgumentTypes()[index.getInt()] != valueType)
      return op->emitError()
             << "'" << name << "' result of type " << valueType
             << " cannot update argument " << index.getInt() << " of type "
             << func.getArgumentTypes()[index.getInt()];
    return success();
  }
  return op->emitError() << "unknown kiln " << where << " attribute '" << name
                         << "'";
}

LogicalResult KilnDialect::verifyRegionArgAttribute(Operation *op,
                                                    unsigned regionIndex,
                                                    unsigned argIndex,
                                                    NamedAttribute attribute) {
  if (attribute.getName() == kStateAttrName)
    if (auto func = dyn_cast<func::FuncOp>(op))
      if (func.getArgAttr(argIndex, kParamAttrName))
        return op->emitError()
               << "argument " << argIndex << " is marked both '"
               << kParamAttrName << "' and '" << kStateAttrName
               << "': state is not trained";
  // Only buffers that live across calls start from values.
  if (attribute.getName() == kValueAttrName)
    if (auto func = dyn_cast<func::FuncOp>(op)) {
      auto role = func.getArgAttrOfType<StringAttr>(argIndex, kRoleAttrName);
      if (!func.getArgAttr(argIndex, kParamAttrName) &&
          !func.getArgAttr(argIndex, kStateAttrName) &&
          !(role && role.getValue() == "constant"))
        return op->emitError()
               << "argument " << argIndex << " has a '" << kValueAttrName
               << "' but is not a parameter ('" << kParamAttrName
               << "'), state ('" << kStateAttrName
               << "') or constant (kiln.role = \"constant\")";
    }
  Type type;
  if (op->getNumRegions() > regionIndex &&
      !op->getRegion(regionIndex).empty() &&
      argIndex < op->getRegion(regionIndex).getNumArguments())
    type = op->getRegion(regionIndex).getArgument(argIndex).getType();
  else if (auto func = dyn_cast<func::FuncOp>(op))
    type = func.getArgumentTypes()[argIndex];
  return verifyValueAttribute(op, type, attribute, "argument");
}

LogicalResult
KilnDialect::verifyRegionResultAttribute(Operation *op, unsigned regionIndex,
                                         unsigned resultIndex,
                                         NamedAttribute attribute) {
  Type type;
  if (auto func = dyn_cast<func::FuncOp>(op))
    type = func.getResultTypes()[resultIndex];
  return verifyValueAttribute(op, type, attribute, "result");
}
