//===- ArtifactEmitter.h - compiled module to the artifact file --*- C++
//-*-===//
//
// Converts the code generator's output into the runtime's artifact (the
// FlatBuffers format of runtime/artifact), which the runtime verifies on load.
// Entry inputs named "lr" and "step" are the learning rate and step number
// the runtime fills in; inputs and outputs bound to resident buffers are
// parameters, optimizer state and gradients, the rest are host tensors. The
// caller's i32 inputs carry the values they may hold (ValueRanges.h), and
// the artifact names kilnc's version as its producer.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_ARTIFACT_ARTIFACTEMITTER_H
#define KILN_CODEGEN_ARTIFACT_ARTIFACTEMITTER_H

#include "codegen/cuda/ModuleCodegen.h"
#include "runtime/artifact/artifact_writer.h"

#include <string>

namespace mlir::kiln::codegen {

/// Lays `module` out as an artifact file: its envelope and the bytes of
/// the values its resident buffers start from (constants; parameters and
/// state with a kiln.value), which point into the module's attributes where
/// they are stored as is, so the MLIR context must outlive the file. On
/// failure sets `error` to the runtime validator's message (naming the
/// field).
FailureOr<::kiln::artifact::ArtifactFile>
writeArtifact(const CompiledModule &module, std::string &error);

} // namespace mlir::kiln::codegen

#endif // KILN_CODEGEN_ARTIFACT_ARTIFACTEMITTER_H
