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

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <optional>
#include <vector>

namespace mlir::kiln::ref {

/// The unrounded (double) initial values under `seed` for the parameter at
/// argument position `stream`.
std::vector<double> initialValues(InitAttr init, llvm::ArrayRef<int64_t> shape,
                                  uint64_t seed, uint32_t stream);

/// The elements of `value` as doubles, row-major (i1 as 0 and 1).
std::vector<double> valuesOf(DenseElementsAttr value);

/// The values argument `index` of `function` starts from, as the runtime
/// starts its buffer: its `kiln.value` (an imported model's weights, a
/// constant), else the initialiser of its `kiln.param` or `kiln.state`
/// under `seed` (stream `index`); nullopt when it has neither.
std::optional<std::vector<double>>
startingValues(func::FuncOp function, unsigned index, uint64_t seed);

} // namespace mlir::kiln::ref

#endif // KILN_COMPILER_INTERPRETER_INITIALIZERS_H
