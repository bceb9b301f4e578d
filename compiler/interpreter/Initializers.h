//===- Initializers.h - parameter initial values ----------------*- C++ -*-===//
//
// The initial value of a parameter from its `#kiln.init` attribute. Random
// initialisers draw element i from RandomStream{seed, stream, 0} where
// `stream` is the parameter's argument position in the loss function:
//   normal   mean + std * normal(i)
//   uniform  low + (high - low) * uniform(i)
//   xavier   a * (2 * uniform(i) - 1), a = gain * sqrt(6 / (fan_in + fan_out))
//   kaiming  gain / sqrt(fan_in) * normal(i)
// computed in double and rounded once to the parameter's storage type (an
// f32 master copy rounds the same double to f32). Fans are as documented on
// the attribute. The runtime initialises parameters with the same formulas.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_INTERPRETER_INITIALIZERS_H
#define KILN_COMPILER_INTERPRETER_INITIALIZERS_H

#include "compiler/interpreter/Tensor.h"

#include "dialects/kiln/IR/KilnDialect.h"

namespace mlir::kiln::ref {

/// Fan-in and fan-out of a weight of `shape` (see InitAttr).
std::pair<int64_t, int64_t> fans(llvm::ArrayRef<int64_t> shape);

/// The unrounded (double) initial values.
std::vector<double> initialValues(InitAttr init, llvm::ArrayRef<int64_t> shape,
                                  uint64_t seed, uint32_t stream);

} // namespace mlir::kiln::ref

#endif // KILN_COMPILER_INTERPRETER_INITIALIZERS_H
