//===- SequenceGradients.cpp - gradient rules of attention and rnn --------===//

#include "dialects/kiln/Gradients/GradientUtils.h"

namespace mlir::kiln {

void registerSequenceGradientRules(MLIRContext *context) {}

} // namespace mlir::kiln
