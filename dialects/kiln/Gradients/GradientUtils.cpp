//===- GradientUtils.cpp - helpers for writing gradient rules -------------===//

#include "dialects/kiln/Gradients/GradientUtils.h"

#include "dialects/kiln/IR/KilnBuilder.h"

#include "mlir/IR/DialectRegistry.h"

namespace mlir::kiln {

Value sumToShape(OpBuilder &builder, Location loc, Value grad,
                 RankedTensorType targetType) {
  auto gradType = cast<RankedTensorType>(grad.getType());
  ArrayRef<int64_t> from = gradType.getShape(), to = targetType.getShape();
  if (from == to)
    return grad;
  size_t leading = from.size() - to.size();
  // Dims where the target had size 1: summed but kept, so that the leading
  // dims can then be summed away and leave exactly the target's shape.
  SmallVector<int64_t> keptDims;
  for (size_t d = 0; d < to.size(); ++d)
    if (to[d] == 1 && from[leading + d] != 1)
      keptDims.push_back(leading + d);
  if (!keptDims.empty())
    grad = builder.create<ReduceSumOp>(loc, grad, keptDims, /*keepdim=*/true);
  if (leading > 0) {
    SmallVector<int64_t> leadingDims;
    for (size_t d = 0; d < leading; ++d)
      leadingDims.push_back(d);
    grad =
        builder.create<ReduceSumOp>(loc, grad, leadingDims, /*keepdim=*/false);
  }
  return grad;
}

Value splatLike(OpBuilder &builder, Location loc, Type like, double value) {
  return KilnBuilder(builder, loc).splat(cast<RankedTensorType>(like), value);
}

void registerGradientRules(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, KilnDialect *) {
    registerElementwiseGradientRules(context);
    registerShapeGradientRules(context);
    registerNNGradientRules(context);
    registerSequenceGradientRules(context);
    registerCustomGradientRules(context);
  });
}

} // namespace mlir::kiln
