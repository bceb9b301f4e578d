//===- KernelEmitter.cpp - emitter registry
//--------------------------------===//

#include "codegen/cuda/KernelEmitter.h"

#include "codegen/cuda/EmitterRegistry.h"
#include "codegen/cuda/RecordedKernel.h"
#include "codegen/dialect/KilnCudaDialect.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"

#include <cstring>
#include <utility>

namespace mlir::kiln::codegen {

LaunchArg LaunchArg::f32(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return {Kind::F32, 0, bits};
}

LaunchArg LaunchArg::tensorMapOf(const LaunchArg &buffer, TensorMapLayout map) {
  LaunchArg arg;
  arg.kind = Kind::TensorMap;
  arg.index = buffer.index;
  arg.mapsResult = buffer.kind == Kind::Result;
  arg.tensorMap = std::make_shared<const TensorMapLayout>(std::move(map));
  return arg;
}

/// The factories registered so far; a function's static, so that it exists
/// before the first registration whatever the order of initialisation.
static std::vector<std::pair<EmitterOrder, EmitterFactory>> &
registeredFactories() {
  static auto *factories =
      new std::vector<std::pair<EmitterOrder, EmitterFactory>>();
  return *factories;
}

EmitterRegistration::EmitterRegistration(EmitterOrder order,
                                         EmitterFactory factory) {
  registeredFactories().emplace_back(order, factory);
}

const std::vector<std::unique_ptr<KernelEmitter>> &kernelEmitters() {
  static const std::vector<std::unique_ptr<KernelEmitter>> *emitters = [] {
    std::vector<std::pair<EmitterOrder, EmitterFactory>> factories =
        registeredFactories();
    llvm::stable_sort(factories, llvm::less_first());
    auto *list = new std::vector<std::unique_ptr<KernelEmitter>>();
    for (const auto &[order, factory] : factories)
      list->push_back(factory());
    return list;
  }();
  return *emitters;
}

FailureOr<GeneratedFusion> emitFusion(FusionOp fusion,
                                      const CodegenOptions &options) {
  for (const auto &emitter : kernelEmitters())
    if (emitter->matches(fusion))
      return emitter->emit(fusion, options);
  return reportUnsupportedFusion(fusion);
}

LogicalResult selectFusionKernel(FusionOp fusion,
                                 const CodegenOptions &options) {
  for (const auto &emitter : kernelEmitters()) {
    if (!emitter->matches(fusion))
      continue;
    if (Attribute recorded = fusion->getAttr(cuda::kKernelAttrName))
      return emitter->verifyKernel(fusion, recorded, options);
    FailureOr<Attribute> chosen = emitter->selectKernel(fusion, options);
    if (failed(chosen))
      return failure();
    fusion->setAttr(cuda::kKernelAttrName, *chosen);
    return success();
  }
  return reportUnsupportedFusion(fusion);
}

/// What kind of kernel a fusion of `kind` needs, in a user's words.
static StringRef kernelKindDescription(StringRef kind) {
  return llvm::StringSwitch<StringRef>(kind)
      .Case("pointwise", "an element-wise kernel")
      .Case("reduction", "a reduction kernel")
      .Case("gemm", "a matrix-multiply kernel")
      .Case("attention", "an attention kernel")
      .Case("rnn", "a recurrent kernel")
      .Case("conv", "a convolution kernel")
      .Case("pool", "a pooling kernel")
      .Case("resize", "a resize-gradient kernel")
      .Case("batch_norm", "a batch-norm kernel")
      .Case("embedding", "an embedding-gradient kernel")
      .Case("custom", "the user's kernel")
      .Default("a kernel");
}

/// The op a user wrote that `op` comes from: the forward op of a gradient op
/// autodiff introduced (kiln.conv2d_backward_input -> kiln.conv2d).
static std::string userFacingName(Operation *op) {
  StringRef name = op->getName().getStringRef();
  size_t backward = name.find("_backward");
  if (backward == StringRef::npos)
    return ("'" + name + "'").str();
  return ("the gradient of '" + name.take_front(backward) + "'").str();
}

/// The ops of `fusion` a user wrote (or autodiff derived from theirs): all
/// but constants, which kernels copy in.
static SmallVector<Operation *> userOpsOf(FusionOp fusion) {
  SmallVector<Operation *> ops;
  for (Operation &op : fusion.getBody().front().without_terminator())
    if (!isa<ConstantOp>(op))
      ops.push_back(&op);
  return ops;
}

InFlightDiagnostic emitFusionError(FusionOp fusion) {
  SmallVector<Operation *> ops = userOpsOf(fusion);
  Operation *culprit = ops.empty() ? fusion.getOperation() : ops.front();
  return culprit->emitError() << userFacingName(culprit) << " op: ";
}

InFlightDiagnostic emitRecordedKernelError(FusionOp fusion) {
  SmallVector<Operation *> ops = userOpsOf(fusion);
  InFlightDiagnostic diag = fusion.emitOpError() << cuda::kKernelAttrName;
  if (!ops.empty())
    diag << " of " << userFacingName(ops.front());
  diag << ": ";
  return diag;
}

LogicalResult reportUnsupportedFusion(FusionOp fusion) {
  // Blame the op that needs the missing kernel, at its own location.
  SmallVector<Operation *> ops = userOpsOf(fusion);
  Operation *culprit = ops.empty() ? fusion.getOperation() : ops.front();
  InFlightDiagnostic diag = culprit->emitError()
                            << "no GPU kernel for " << userFacingName(culprit)
                            << " yet: it needs "
                            << kernelKindDescription(fusion.getKind());
  for (Operation *op : llvm::drop_begin(ops))
    diag.attachNote(op->getLoc())
        << "in one kernel with " << userFacingName(op) << " from here";
  return failure();
}

} // namespace mlir::kiln::codegen
