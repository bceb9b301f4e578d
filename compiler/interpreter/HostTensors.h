//===- HostTensors.h - interpreter tensors as file tensors ------*- C++ -*-===//
//
// The reference interpreter's tensors (doubles, whatever their element type)
// as the runtime's host tensors (runtime/io/safetensors.h: bytes in the
// element type), for the tools that read and write safetensors files:
// kiln-ref's inputs and outputs, the CPU trainer's checkpoints.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_INTERPRETER_HOSTTENSORS_H
#define KILN_COMPILER_INTERPRETER_HOSTTENSORS_H

#include "compiler/interpreter/Tensor.h"
#include "runtime/io/safetensors.h"

namespace mlir::kiln::ref {

/// The file dtype of `kind`: F32, BF16, F16, I32 or BOOL.
::kiln::DType fileDType(ElementKind kind);

/// `tensor` in its own dtype: floats rounded to nearest even (bf16 and f16
/// through f32), which is exact for values already rounded to their storage
/// type; integers truncated.
::kiln::io::HostTensor toHostTensor(const Tensor &tensor);

/// The values of `host` into `tensor`, whose kind and shape the caller has
/// checked to be `host`'s dtype and shape.
void fromHostTensor(const ::kiln::io::HostTensor &host, Tensor &tensor);

} // namespace mlir::kiln::ref

#endif // KILN_COMPILER_INTERPRETER_HOSTTENSORS_H
