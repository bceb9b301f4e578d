//===- GemmEmitterTestStubs.cc - emitters that match nothing --------------===//
//
// Stand-ins for the pointwise and reduction emitters in tests that exercise
// the GEMM emitter alone (never part of the `emitters` library).
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/KernelEmitter.h"

namespace mlir::kiln::codegen {
namespace {
class NoEmitter final : public KernelEmitter {
public:
  bool matches(FusionOp) const override { return false; }
  FailureOr<GeneratedFusion> emit(FusionOp fusion,
                                  const CodegenOptions &) const override {
    return fusion.emitOpError("no emitter in this test");
  }
};
} // namespace

std::unique_ptr<KernelEmitter> createPointwiseEmitter() {
  return std::make_unique<NoEmitter>();
}
std::unique_ptr<KernelEmitter> createReductionEmitter() {
  return std::make_unique<NoEmitter>();
}

} // namespace mlir::kiln::codegen
