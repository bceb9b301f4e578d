//===- ResidentConstants.cpp - large constants as resident buffers --------===//
//
// A large constant (an inference model's weights) would otherwise live in
// kernel code: a table in the CUDA source of every kernel that evaluates it,
// or a kernel that fills a buffer with it on every call. As an argument of
// role `constant` with its values as `kiln.value` it is a resident buffer
// whose values the artifact carries as data and the runtime uploads once, so
// the compiler's time and memory do not grow with the weights.
//
//===----------------------------------------------------------------------===//

#include "compiler/transforms/Fusion.h"
#include "dialects/kiln/IR/KilnDialect.h"
#include "dialects/kiln/IR/KilnNaming.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/StringSet.h"

#include <map>

namespace mlir::kiln {

#define GEN_PASS_DEF_KILNRESIDENTCONSTANTS
#include "compiler/transforms/Passes.h.inc"

namespace {

/// Whether `value` is a result of the function, directly or through
/// reshapes (which alias their operand): such a constant keeps a buffer of
/// its own, which a kernel fills.
bool isReturned(Value value) {
  for (Operation *user : value.getUsers()) {
    if (isa<func::ReturnOp>(user))
      return true;
    if (auto reshape = dyn_cast<ReshapeOp>(user))
      if (isReturned(reshape.getResult()))
        return true;
  }
  return false;
}

/// The constants that become resident: more than `maxInline` elements that
/// are not all equal, of a type the runtime stores.
DenseElementsAttr residentValue(ConstantOp constant, int64_t maxInline) {
  auto value = dyn_cast<DenseElementsAttr>(constant.getValue());
  if (!value || value.isSplat() || value.getNumElements() <= maxInline)
    return {};
  Type element = value.getElementType();
  if (!element.isF32() && !element.isBF16() && !element.isF16() &&
      !element.isInteger(32) && !element.isInteger(1))
    return {};
  if (isReturned(constant.getResult()))
    return {};
  return value;
}

/// Buffer names: the constant's `kiln.name` (an ONNX initializer's) or
/// `constant.<k>`, never a name the module already uses; the same values
/// under the same name are the same buffer in every function.
class BufferNames {
public:
  explicit BufferNames(ModuleOp module) {
    for (auto function : module.getOps<func::FuncOp>()) {
      for (unsigned i = 0, e = function.getNumArguments(); i < e; ++i)
        taken.insert(argumentName(function, i));
      for (unsigned i = 0, e = function.getNumResults(); i < e; ++i)
        taken.insert(resultName(function, i));
    }
  }

  StringRef nameOf(ConstantOp constant, DenseElementsAttr value) {
    auto given =
        constant->getAttrOfType<StringAttr>(KilnDialect::kNameAttrName);
    std::string base = given ? given.str() : "constant";
    std::string &name = names[{value.getAsOpaquePointer(), base}];
    if (!name.empty())
      return name;
    name = given ? base : base + "." + std::to_string(next[base]++);
    while (!taken.insert(name).second)
      name = base + "." + std::to_string(next[base]++);
    return name;
  }

private:
  llvm::StringSet<> taken;
  std::map<std::pair<const void *, std::string>, std::string> names;
  std::map<std::string, unsigned> next;
};

void hoistConstants(func::FuncOp function, BufferNames &names,
                    int64_t maxInline) {
  Builder b(function.getContext());
  llvm::StringMap<BlockArgument> arguments;
  Block &body = function.getBody().front();
  for (ConstantOp constant :
       llvm::make_early_inc_range(body.getOps<ConstantOp>())) {
    DenseElementsAttr value = residentValue(constant, maxInline);
    if (!value)
      continue;
    StringRef name = names.nameOf(constant, value);
    BlockArgument &argument = arguments[name];
    if (!argument) {
      unsigned index = function.getNumArguments();
      function.insertArgument(
          index, value.getType(),
          b.getDictionaryAttr(
              {b.getNamedAttr(KilnDialect::kNameAttrName,
                              b.getStringAttr(name)),
               b.getNamedAttr(KilnDialect::kRoleAttrName,
                              b.getStringAttr("constant")),
               b.getNamedAttr(KilnDialect::kValueAttrName, value)}),
          constant.getLoc());
      argument = function.getArgument(index);
    }
    constant.getResult().replaceAllUsesWith(argument);
    constant.erase();
  }
}

struct KilnResidentConstantsPass
    : public impl::KilnResidentConstantsBase<KilnResidentConstantsPass> {
  using KilnResidentConstantsBase::KilnResidentConstantsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    BufferNames names(module);
    for (auto function : module.getOps<func::FuncOp>())
      if (!function.isExternal())
        hoistConstants(function, names, maxInlineElements);
  }
};

} // namespace
} // namespace mlir::kiln
