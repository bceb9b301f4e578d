//===- EmitterStubs_testonly.cc - stand-ins for the other emitters (tests)
//-===//
//
// Tests of one emitter link the `emitters` library, whose registry names
// every factory. Until the GEMM and reduction emitters exist, these
// stand-ins match nothing. They are weak, so the real factories win
// wherever both are linked.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/KernelEmitter.h"

namespace mlir::kiln::codegen {
namespace {
class MatchesNothing final : public KernelEmitter {
public:
  bool matches(FusionOp) const override { return false; }
  FailureOr<GeneratedFusion> emit(FusionOp fusion,
                                  const CodegenOptions &) const override {
    return fusion.emitOpError("no emitter");
  }
};
} // namespace

__attribute__((weak)) std::unique_ptr<KernelEmitter> createReductionEmitter() {
  return std::make_unique<MatchesNothing>();
}
__attribute__((weak)) std::unique_ptr<KernelEmitter> createGemmEmitter() {
  return std::make_unique<MatchesNothing>();
}

} // namespace mlir::kiln::codegen
