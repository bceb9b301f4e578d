//===- CustomOps.cpp - kiln.custom and kiln.custom_backward ---------------===//
//
// Verifiers of the ops that run a kernel of the user's. What can be checked
// without reading the user's file is checked here, at the user's op: names
// that must be C++ identifiers (they are spelled into the generated stub),
// parameters the stub can spell as constants, the launch's block size, the
// rank the ABI's tensors carry, and, for the backward, that its operands and
// results line up with the forward op's.
//
//===----------------------------------------------------------------------===//

#include "dialects/kiln/IR/KilnDialect.h"
#include "dialects/kiln/IR/KilnOpUtils.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::kiln;

/// Whether `name` is a C++ identifier, possibly qualified (`ns::fn`).
static bool isQualifiedIdentifier(StringRef name) {
  if (name.empty())
    return false;
  SmallVector<StringRef> parts;
  name.split(parts, "::");
  for (StringRef part : parts) {
    if (part.empty() || llvm::isDigit(part.front()))
      return false;
    if (!llvm::all_of(part,
                      [](char c) { return llvm::isAlnum(c) || c == '_'; }))
      return false;
  }
  return true;
}

static LogicalResult verifyEntry(Operation *op, StringRef what,
                                 StringRef entry) {
  if (!isQualifiedIdentifier(entry))
    return op->emitOpError() << "'" << what
                             << "' must name a C++ function template (an "
                                "identifier, optionally qualified with ::), "
                                "got \""
                             << entry << "\"";
  return success();
}

static LogicalResult verifySource(Operation *op, StringRef what,
                                  StringRef source) {
  if (source.empty())
    return op->emitOpError()
           << "'" << what << "' must name the CUDA C++ file of the kernel";
  return success();
}

/// Parameters become `static constexpr` members of the kernel's `params`:
/// identifiers with integer or float values.
static LogicalResult verifyParams(Operation *op,
                                  std::optional<DictionaryAttr> params) {
  if (!params)
    return success();
  for (NamedAttribute param : *params) {
    StringRef name = param.getName().strref();
    if (name.contains(':') || !isQualifiedIdentifier(name))
      return op->emitOpError()
             << "parameter \"" << name << "\" must be named by a C++ "
             << "identifier";
    Attribute value = param.getValue();
    if (auto integer = dyn_cast<IntegerAttr>(value)) {
      if (!integer.getType().isSignlessInteger() ||
          integer.getType().getIntOrFloatBitWidth() > 64)
        return op->emitOpError()
               << "parameter '" << name << "' must be a signless integer of "
               << "at most 64 bits or a float, got " << value;
      continue;
    }
    auto real = dyn_cast<FloatAttr>(value);
    if (!real || !(real.getType().isF32() || real.getType().isF64()))
      return op->emitOpError() << "parameter '" << name
                               << "' must be an integer or an f32 or f64 "
                                  "float, got "
                               << value;
  }
  return success();
}

static LogicalResult verifyBlockSize(Operation *op, int64_t blockSize) {
  if (blockSize < 32 || blockSize > 1024 || blockSize % 32 != 0)
    return op->emitOpError() << "'block_size' must be a multiple of 32 in "
                             << "[32, 1024], got " << blockSize;
  return success();
}

/// The ABI's tensors carry their shape in a fixed array.
static LogicalResult verifyRanks(Operation *op) {
  auto check = [&](Value value, StringRef what, size_t index) -> LogicalResult {
    auto type = cast<RankedTensorType>(value.getType());
    if (type.getRank() > CustomOp::kMaxRank)
      return op->emitOpError()
             << what << " #" << index << " has rank " << type.getRank()
             << "; a custom kernel's tensors have rank at most "
             << CustomOp::kMaxRank;
    return success();
  };
  for (auto [i, value] : llvm::enumerate(op->getOperands()))
    if (failed(check(value, "operand", i)))
      return failure();
  for (auto [i, value] : llvm::enumerate(op->getResults()))
    if (failed(check(value, "result", i)))
      return failure();
  return success();
}

LogicalResult CustomOp::verify() {
  if (getOutputs().empty())
    return emitOpError("must have at least one result");
  if (failed(verifyEntry(*this, "forward", getForward())) ||
      failed(verifySource(*this, "source", getSource())) ||
      failed(verifyParams(*this, getParams())) ||
      failed(verifyBlockSize(*this, getBlockSize())) ||
      failed(verifyRanks(*this)))
    return failure();
  if (getBackward() && failed(verifyEntry(*this, "backward", *getBackward())))
    return failure();
  if (getBackwardSource()) {
    if (!getBackward())
      return emitOpError("'backward_from' needs a 'backward' function");
    if (failed(verifySource(*this, "backward_from", *getBackwardSource())))
      return failure();
  }
  return success();
}

SmallVector<unsigned> CustomOp::differentiableInputs(TypeRange inputTypes) {
  SmallVector<unsigned> indices;
  for (auto [i, type] : llvm::enumerate(inputTypes))
    if (isa<FloatType>(cast<RankedTensorType>(type).getElementType()))
      indices.push_back(i);
  return indices;
}

LogicalResult CustomBackwardOp::verify() {
  if (failed(verifyEntry(*this, "backward", getBackward())) ||
      failed(verifySource(*this, "source", getSource())) ||
      failed(verifyParams(*this, getParams())) ||
      failed(verifyBlockSize(*this, getBlockSize())) ||
      failed(verifyRanks(*this)))
    return failure();
  if (getOutputs().empty())
    return emitOpError("must have at least one forward output");
  if (getOutputGrads().size() != getOutputs().size())
    return emitOpError() << "needs one output gradient per forward output ("
                         << getOutputs().size() << "), got "
                         << getOutputGrads().size();
  for (auto [i, output, grad] : llvm::enumerate(getOutputs(), getOutputGrads()))
    if (output.getType() != grad.getType())
      return emitOpError() << "output gradient #" << i << " must have type "
                           << output.getType() << " (forward output #" << i
                           << "), got " << grad.getType();
  SmallVector<unsigned> differentiable =
      CustomOp::differentiableInputs(getInputs().getTypes());
  if (getInputGrads().size() != differentiable.size())
    return emitOpError() << "must have one result per floating-point input ("
                         << differentiable.size() << "), got "
                         << getInputGrads().size();
  for (auto [k, input] : llvm::enumerate(differentiable)) {
    Type expected = getInputs()[input].getType();
    if (getInputGrads()[k].getType() != expected)
      return emitOpError() << "result #" << k << " (the gradient of input #"
                           << input << ") must have type " << expected
                           << ", got " << getInputGrads()[k].getType();
  }
  return success();
}
