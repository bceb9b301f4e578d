//===- ReferenceCheckpoint.h - checkpoints of the CPU trainer ---*- C++ -*-===//
//
// The CPU reference trainer's state as a kiln training checkpoint
// (runtime/io/checkpoint.h), the file kiln-run --checkpoint writes and
// --resume reads: every parameter, model state buffer, optimizer state buffer
// and master weight by its kiln.name, in its storage type, and the update
// count. A checkpoint of one holds the same tensors, by name, dtype and shape,
// as the other's for the same model and optimizer.
//
// Values go through their storage types (f32, bf16, f16, i32), which the
// trainer's values are rounded to in Precision::F32: saving and restoring is
// exact there. Precision::F64 keeps values a checkpoint would round.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_TRAINING_REFERENCECHECKPOINT_H
#define KILN_COMPILER_TRAINING_REFERENCECHECKPOINT_H

#include "compiler/training/ReferenceTrainer.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace mlir::kiln {

/// Writes `trainer`'s state and step count to `path`, atomically.
llvm::Error saveCheckpoint(const ReferenceTrainer &trainer,
                           llvm::StringRef path);

/// Loads the checkpoint at `path` into `trainer`: it must hold exactly the
/// trainer's state tensors with their dtypes and shapes, which is checked
/// before anything changes; errors name the file and the tensor.
llvm::Error restoreCheckpoint(ReferenceTrainer &trainer, llvm::StringRef path);

} // namespace mlir::kiln

#endif // KILN_COMPILER_TRAINING_REFERENCECHECKPOINT_H
