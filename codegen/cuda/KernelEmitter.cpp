//===- KernelEmitter.cpp - emitter registry
//--------------------------------===//

#include "codegen/cuda/KernelEmitter.h"

#include "codegen/cuda/AttentionEmitter.h"

#include <cstring>

namespace mlir::kiln::codegen {

LaunchArg LaunchArg::f32(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return {Kind::F32, 0, bits};
}

const std::vector<std::unique_ptr<KernelEmitter>> &kernelEmitters() {
  static const std::vector<std::unique_ptr<KernelEmitter>> *emitters = [] {
    auto *list = new std::vector<std::unique_ptr<KernelEmitter>>();
    list->push_back(createGemmEmitter());
    list->push_back(createReductionEmitter());
    list->push_back(createAttentionEmitter());
    list->push_back(createBatchNormEmitter());
    list->push_back(createPointwiseEmitter());
    return list;
  }();
  return *emitters;
}

FailureOr<GeneratedFusion> emitFusion(FusionOp fusion,
                                      const CodegenOptions &options) {
  for (const auto &emitter : kernelEmitters())
    if (emitter->matches(fusion))
      return emitter->emit(fusion, options);
  InFlightDiagnostic diag =
      fusion.emitOpError("no kernel emitter handles this fusion of ");
  llvm::interleaveComma(fusion.getBody().front().without_terminator(), diag,
                        [&](Operation &op) { diag << op.getName(); });
  return failure();
}

} // namespace mlir::kiln::codegen
