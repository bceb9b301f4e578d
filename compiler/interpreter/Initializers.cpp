//===- Initializers.cpp - parameter initial values ------------------------===//

#include "compiler/interpreter/Initializers.h"

#include "runtime/random/initializers.h"

namespace mlir::kiln::ref {

static_assert(int(::kiln::InitKind::kZeros) == int(InitKind::zeros) &&
                  int(::kiln::InitKind::kOnes) == int(InitKind::ones) &&
                  int(::kiln::InitKind::kConstant) == int(InitKind::constant) &&
                  int(::kiln::InitKind::kNormal) == int(InitKind::normal) &&
                  int(::kiln::InitKind::kUniform) == int(InitKind::uniform) &&
                  int(::kiln::InitKind::kXavier) == int(InitKind::xavier) &&
                  int(::kiln::InitKind::kKaiming) == int(InitKind::kaiming),
              "the IR's and the runtime's initialiser kinds must agree");

std::vector<double> initialValues(InitAttr init, llvm::ArrayRef<int64_t> shape,
                                  uint64_t seed, uint32_t stream) {
  auto kind = static_cast<::kiln::InitKind>(init.getKind());
  return ::kiln::InitialValues(
      kind, init.getFirstValue(), init.getSecondValue(),
      std::vector<int64_t>(shape.begin(), shape.end()), seed, stream);
}

std::vector<double> valuesOf(DenseElementsAttr value) {
  std::vector<double> out;
  out.reserve(value.getNumElements());
  if (isa<FloatType>(value.getElementType())) {
    for (const llvm::APFloat &v : value.getValues<llvm::APFloat>())
      out.push_back(v.convertToDouble());
  } else {
    bool flag = value.getElementType().isInteger(1);
    for (const llvm::APInt &v : value.getValues<llvm::APInt>())
      out.push_back(flag ? double(v.getZExtValue()) : double(v.getSExtValue()));
  }
  return out;
}

std::optional<std::vector<double>>
startingValues(func::FuncOp function, unsigned index, uint64_t seed) {
  if (auto value = function.getArgAttrOfType<DenseElementsAttr>(
          index, KilnDialect::kValueAttrName))
    return valuesOf(value);
  auto init =
      function.getArgAttrOfType<InitAttr>(index, KilnDialect::kParamAttrName);
  if (!init)
    init =
        function.getArgAttrOfType<InitAttr>(index, KilnDialect::kStateAttrName);
  if (!init)
    return std::nullopt;
  auto type = cast<RankedTensorType>(function.getArgumentTypes()[index]);
  return initialValues(init, type.getShape(), seed, index);
}

} // namespace mlir::kiln::ref
