//===- EmitterRegistry.h - the emitters of the families linked --*- C++ -*-===//
//
// Each kernel family (codegen/cuda/<family>/) is one library, linked whole,
// that registers its emitter's factory at static initialisation.
// kernelEmitters() holds the emitters of the families a binary links, in
// EmitterOrder: kilnc links every family, a test of one family links that
// family and the shared core alone.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_CUDA_EMITTERREGISTRY_H
#define KILN_CODEGEN_CUDA_EMITTERREGISTRY_H

#include "codegen/cuda/KernelEmitter.h"

#include <memory>

namespace mlir::kiln::codegen {

/// The order in which the registry tries the emitters: the first that
/// matches a fusion generates it.
enum class EmitterOrder {
  Gemm,
  Reduction,
  Attention,
  Embedding,
  Pool,
  Resize,
  BatchNorm,
  Rnn,
  Conv,
  Custom,
  Pointwise,
};

using EmitterFactory = std::unique_ptr<KernelEmitter> (*)();

/// Registers `factory`'s emitter at `order`: one namespace-scope instance in
/// each family's emitter file.
class EmitterRegistration {
public:
  EmitterRegistration(EmitterOrder order, EmitterFactory factory);
};

} // namespace mlir::kiln::codegen

#endif // KILN_CODEGEN_CUDA_EMITTERREGISTRY_H
