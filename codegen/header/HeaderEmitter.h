//===- HeaderEmitter.h - the typed C++ header of an artifact ----*- C++ -*-===//
//
// Writes the header that `kilnc -H model.h` puts beside the artifact (and
// `kilnc --emit=header` alone): one class whose methods are the artifact's
// entries, one struct per entry with a kiln::TypedInput field per caller
// input (a misspelt name, a wrong static shape or dtype does not compile),
// typed outputs, one accessor per resident buffer, and the artifact's
// identity, which the runtime checks when the class loads an artifact
// (kiln/typed.h). The header includes only the runtime's public headers.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_HEADER_HEADEREMITTER_H
#define KILN_CODEGEN_HEADER_HEADEREMITTER_H

#include "codegen/header/HeaderPlan.h"

#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir::kiln::codegen {

/// Prints the header of `plan`.
void printHeader(const HeaderPlan &plan, llvm::raw_ostream &os);

/// Plans and prints the header of `artifact` (as LoadArtifact returns it)
/// into `text`; on failure returns false with the reason in `error`.
bool emitHeader(const ::kiln::artifact::Artifact &artifact,
                const HeaderOptions &options, std::string &text,
                std::string &error);

} // namespace mlir::kiln::codegen

#endif // KILN_CODEGEN_HEADER_HEADEREMITTER_H
