//===- MixedPrecision.h - narrow storage, f32 compute ------------*- C++
//-*-===//

#ifndef KILN_COMPILER_TRANSFORMS_MIXEDPRECISION_H
#define KILN_COMPILER_TRANSFORMS_MIXEDPRECISION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::kiln {

/// Stores every f32 tensor of `function` (parameters, activations) as
/// `storage` (bf16 or f16); see --kiln-mixed-precision.
LogicalResult narrowStorage(func::FuncOp function, FloatType storage);

} // namespace mlir::kiln

#endif // KILN_COMPILER_TRANSFORMS_MIXEDPRECISION_H
