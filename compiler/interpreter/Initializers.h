//===- Initializers.h - parameter initial values ----------------*- C++ -*-===//
//
// The initial values of a `#kiln.init` parameter: the runtime's formulas
// (runtime/random/initializers.h), so that the CPU reference and the GPU start
// from the same numbers.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_INTERPRETER_INITIALIZERS_H
#define KILN_COMPILER_INTERPRETER_INITIALIZERS_H

#include "dialects/kiln/IR/KilnDialect.h"

#include <vector>

namespace mlir::kiln::ref {

/// The unrounded (double) initial values under `seed` for the parameter at
/// argument position `stream`.
std::vector<double> initialValues(InitAttr init, llvm::ArrayRef<int64_t> shape,
                                  uint64_t seed, uint32_t stream);

} // namespace mlir::kiln::ref

#endif // KILN_COMPILER_INTERPRETER_INITIALIZERS_H
