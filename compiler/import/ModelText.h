//===- ModelText.h - checks of a model's bytes before parsing ---*- C++ -*-===//
//
// MLIR's parser recurses once per bracket, so a file nested a hundred
// thousand brackets deep exhausts the stack, and it echoes the line of an
// error, so a binary file given as .mlir fills the terminal. These checks
// run on the bytes before the parser does: a binary file is named as one
// (with what it looks like) and never echoed; an empty file is named as
// one (MLIR would take it for an empty module); brackets nested deeper than
// kMaxModelNesting are an error at the bracket (file:line:col), and so is an
// integer in an array of i1 (`array<i1: 1, 0>`), which MLIR 19 parses into
// an attribute that crashes its printer. MLIR bytecode is left to the
// parser.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_MODELTEXT_H
#define KILN_COMPILER_IMPORT_MODELTEXT_H

#include "mlir/Support/LogicalResult.h"
#include "llvm/Support/MemoryBuffer.h"

#include <string>

namespace mlir::kiln {

/// The deepest nesting of (), [], {} and <> the tools parse. Models nest a
/// few levels; MLIR's recursive parser stays far from the stack's end here.
constexpr unsigned kMaxModelNesting = 256;

/// Checks the model text in `buffer` (named by its identifier): fails with
/// `error` set to "FILE is not a text file (it looks like ...)" for a binary
/// file, "FILE is empty: ..." for one of nothing but white space and
/// comments, and "FILE:LINE:COL: ..." at the first bracket past
/// kMaxModelNesting or integer in an array of i1 (not through a diagnostic
/// handler, which would echo the line).
LogicalResult checkModelText(const llvm::MemoryBuffer &buffer,
                             std::string &error);

} // namespace mlir::kiln

#endif // KILN_COMPILER_IMPORT_MODELTEXT_H
