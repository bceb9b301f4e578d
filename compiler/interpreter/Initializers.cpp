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

} // namespace mlir::kiln::ref
