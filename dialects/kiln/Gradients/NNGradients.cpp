//===- NNGradients.cpp - gradient rules of neural-network ops and losses --===//

#include "dialects/kiln/Gradients/GradientUtils.h"

namespace mlir::kiln {

void registerNNGradientRules(MLIRContext *context) {}

} // namespace mlir::kiln
