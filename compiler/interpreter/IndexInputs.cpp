//===- IndexInputs.cpp - inputs that index classes or table rows ----------===//

#include "compiler/interpreter/IndexInputs.h"

#include "dialects/kiln/IR/KilnDialect.h"

#include "llvm/Support/raw_ostream.h"

namespace mlir::kiln::ref {
namespace {

/// The function argument `value` is, through reshapes, or null.
BlockArgument argumentBehind(Value value, func::FuncOp function) {
  while (auto reshape = value.getDefiningOp<ReshapeOp>())
    value = reshape->getOperand(0);
  auto argument = dyn_cast<BlockArgument>(value);
  return argument && argument.getOwner() == &function.getBody().front()
             ? argument
             : BlockArgument();
}

} // namespace

llvm::SmallVector<IndexInput> findIndexInputs(func::FuncOp function) {
  llvm::SmallVector<IndexInput> inputs;
  if (function.isExternal())
    return inputs;
  function.walk([&](Operation *op) {
    IndexInput input;
    input.user = op;
    Value indices;
    if (auto loss = dyn_cast<CrossEntropyOp>(op)) {
      indices = loss.getLabels();
      input.bound =
          cast<RankedTensorType>(loss.getLogits().getType()).getDimSize(1);
      input.ignore = loss.getIgnoreIndex();
    } else if (auto embedding = dyn_cast<EmbeddingOp>(op)) {
      indices = embedding.getIndices();
      input.bound =
          cast<RankedTensorType>(embedding.getTable().getType()).getDimSize(0);
    } else {
      return;
    }
    if (BlockArgument argument = argumentBehind(indices, function)) {
      input.argument = argument.getArgNumber();
      inputs.push_back(input);
    }
  });
  return inputs;
}

std::optional<int64_t> firstBadIndex(const IndexInput &input,
                                     const Tensor &values) {
  for (size_t i = 0, e = values.data.size(); i < e; ++i) {
    double v = values.data[i];
    if (!(v >= 0 && v < double(input.bound)) &&
        !(input.ignore && v == double(*input.ignore)))
      return int64_t(i);
  }
  return std::nullopt;
}

std::string describeBadIndex(const IndexInput &input, double value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  bool label = isa<CrossEntropyOp>(input.user);
  os << (label ? "label " : "index ") << int64_t(value) << " is outside the "
     << input.bound << (label ? " classes" : " rows") << " [0, " << input.bound
     << ")";
  if (input.ignore)
    os << " and is not ignore_index " << *input.ignore;
  os << " of " << input.user->getName() << " at ";
  if (auto file = dyn_cast<FileLineColLoc>(input.user->getLoc()))
    os << file.getFilename().getValue() << ":" << file.getLine() << ":"
       << file.getColumn();
  else
    os << input.user->getLoc();
  return os.str();
}

} // namespace mlir::kiln::ref
