//===- OptionText.h - pass-option text split by option name ------*- C++ -*-===//
//
// A pipeline that forwards part of its option text to the passes it adds
// (kiln-pipeline to kiln-cuda, kiln-cuda to its two passes) splits the text by
// option name. The split follows MLIR's option parser: options are separated
// by spaces outside braces and quotes, so a list value ("a={b c}") or a quoted
// one stays whole.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_OPTIONS_OPTIONTEXT_H
#define KILN_COMPILER_OPTIONS_OPTIONTEXT_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <utility>

namespace mlir::kiln {

/// Splits pass-option text ("train=none codegen=true a={b c}") into the
/// options whose names `takes` accepts and the others, each as option text.
std::pair<std::string, std::string>
partitionOptions(llvm::StringRef text,
                 llvm::function_ref<bool(llvm::StringRef name)> takes);

} // namespace mlir::kiln

#endif // KILN_COMPILER_OPTIONS_OPTIONTEXT_H
