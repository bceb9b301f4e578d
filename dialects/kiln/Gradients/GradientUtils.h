//===- GradientUtils.h - helpers for writing gradient rules ------*- C++
//-*-===//

#ifndef KILN_DIALECTS_KILN_GRADIENTS_GRADIENTUTILS_H
#define KILN_DIALECTS_KILN_GRADIENTS_GRADIENTUTILS_H

#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/IR/Builders.h"

namespace mlir::kiln {

/// Undoes numpy broadcasting in a gradient: sums `grad` over the dimensions
/// along which a value of `targetType` was broadcast (leading dims it lacked
/// and dims where it had size 1), giving a gradient of `targetType`'s shape.
Value sumToShape(OpBuilder &builder, Location loc, Value grad,
                 RankedTensorType targetType);

/// A splat constant shaped like `like` (a ranked tensor type) with `value`.
Value splatLike(OpBuilder &builder, Location loc, Type like, double value);

/// Registers the gradient rule of every op family with `registry`; a context
/// that loads the kiln dialect through the registry gets the rules attached.
void registerGradientRules(DialectRegistry &registry);

// Per-family registration (one file each).
void registerElementwiseGradientRules(MLIRContext *context);
void registerShapeGradientRules(MLIRContext *context);
void registerNNGradientRules(MLIRContext *context);
void registerSequenceGradientRules(MLIRContext *context);
void registerCustomGradientRules(MLIRContext *context);

} // namespace mlir::kiln

#endif // KILN_DIALECTS_KILN_GRADIENTS_GRADIENTUTILS_H
