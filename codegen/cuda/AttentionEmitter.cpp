#include "codegen/cuda/AttentionEmitter.h"
namespace mlir::kiln::codegen {
namespace {
class AttentionEmitter : public KernelEmitter {
public:
  bool matches(FusionOp) const override { return false; }
  FailureOr<GeneratedFusion> emit(FusionOp fusion, const CodegenOptions &) const override {
    return failure();
  }
};
}
std::unique_ptr<KernelEmitter> createAttentionEmitter() { return std::make_unique<AttentionEmitter>(); }
}
