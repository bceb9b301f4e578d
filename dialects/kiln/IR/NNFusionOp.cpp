//===- NNFusionOp.cpp - kiln.fusion and its terminator --------------------===//

#include "dialects/kiln/IR/KilnDialect.h"
#include "dialects/kiln/IR/KilnOpUtils.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::kiln;

ArrayRef<StringLiteral> FusionOp::knownKinds() {
  static constexpr StringLiteral kinds[] = {
      "pointwise",  "reduction", "gemm",      "attention", "rnn",
      "conv",       "pool",      "resize",    "batch_norm", "embedding",
      "optimizer",  "custom"};
  return kinds;
}

LogicalResult FusionOp::verify() {
  if (!llvm::is_contained(knownKinds(), getKind()))
    return emitOpError() << "'kind' must be one of "
                         << llvm::join(knownKinds(), ", ") << "; got \""
                         << getKind() << "\"";
  return success();
}

LogicalResult FusionOp::verifyRegions() {
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError() << "body must have " << getInputs().size()
                         << " arguments (one per input), got "
                         << body.getNumArguments();
  for (auto [index, argument, input] :
       llvm::enumerate(body.getArguments(), getInputs()))
    if (argument.getType() != input.getType())
      return emitOpError() << "body argument #" << index << " must have type "
                           << input.getType() << " (the type of input #"
                           << index << "), got " << argument.getType();
  auto yield = dyn_cast<YieldOp>(body.getTerminator());
  if (!yield)
    return emitOpError() << "body must end in 'kiln.yield'";
  if (yield.getValues().size() != getNumResults())
    return yield.emitOpError() << "must yield " << getNumResults()
                               << " values (one per result of the fusion), got "
                               << yield.getValues().size();
  for (auto [index, value, result] :
       llvm::enumerate(yield.getValues(), getResults()))
    if (value.getType() != result.getType())
      return yield.emitOpError()
             << "value #" << index << " must have type " << result.getType()
             << " (the type of fusion result #" << index << "), got "
             << value.getType();
  return success();
}
