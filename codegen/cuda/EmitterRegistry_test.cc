// The registry of a binary that links every kernel family (as kilnc does):
// each family's emitter once, in EmitterOrder, whatever order the linker
// ran the families' registrations in.

#include "codegen/cuda/EmitterRegistry.h"
#include "codegen/cuda/KernelEmitter.h"

#include "gtest/gtest.h"

#include <memory>
#include <typeinfo>
#include <vector>

namespace mlir::kiln::codegen {
namespace {

TEST(EmitterRegistryTest, HoldsEveryFamilyOnceInOrder) {
  // The factories in EmitterOrder.
  const EmitterFactory inOrder[] = {
      createGemmEmitter,      createReductionEmitter, createAttentionEmitter,
      createEmbeddingEmitter, createPoolEmitter,      createResizeEmitter,
      createBatchNormEmitter, createRnnEmitter,       createConvEmitter,
      createCustomEmitter,    createPointwiseEmitter};
  const std::vector<std::unique_ptr<KernelEmitter>> &registered =
      kernelEmitters();
  ASSERT_EQ(registered.size(), std::size(inOrder));
  for (size_t i = 0; i < registered.size(); ++i) {
    std::unique_ptr<KernelEmitter> expected = inOrder[i]();
    EXPECT_EQ(typeid(*registered[i]), typeid(*expected)) << "position " << i;
  }
}

} // namespace
} // namespace mlir::kiln::codegen
