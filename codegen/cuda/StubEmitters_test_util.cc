//===- StubEmitters_test_util.cc - weak emitter factories for tests -------===//
//
// Tests of one emitter link the whole `emitters` library, whose registry
// names every factory. Factories defined in files that are not part of the
// build get these weak definitions: emitters that match nothing. A real
// (strong) definition replaces them at link time.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/KernelEmitter.h"

namespace mlir::kiln::codegen {
namespace {
class MatchesNothing : public KernelEmitter {
public:
  bool matches(FusionOp) const override { return false; }
  FailureOr<GeneratedFusion> emit(FusionOp fusion,
                                  const CodegenOptions &) const override {
    return fusion.emitOpError("no emitter");
  }
};
} // namespace

__attribute__((weak)) std::unique_ptr<KernelEmitter> createPointwiseEmitter() {
  return std::make_unique<MatchesNothing>();
}
__attribute__((weak)) std::unique_ptr<KernelEmitter> createGemmEmitter() {
  return std::make_unique<MatchesNothing>();
}

} // namespace mlir::kiln::codegen
