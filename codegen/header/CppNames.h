//===- CppNames.h - artifact names as C++ identifiers -----------*- C++ -*-===//
//
// The rule that turns the names of an artifact (entries, inputs, outputs,
// resident buffers such as "adam_m.w1" or "grad.w1") into the identifiers of
// a generated header, and the scopes that refuse two names with one
// identifier. The rule, applied in order:
//   1. every character outside [A-Za-z0-9_] becomes '_';
//   2. runs of '_' become one '_', and leading and trailing '_' are dropped
//      (C++ reserves "__" and '_' before an uppercase letter);
//   3. an empty result, or one that starts with a digit, gets the prefix
//      "t_";
//   4. a C++ keyword or alternative token gets a '_' suffix ("new" ->
//      "new_").
// So "grad.w1" -> "grad_w1", "adam_m.w1" -> "adam_m_w1", "0" -> "t_0".
// Entries become methods in CamelCase: each '_'-separated part of the
// identifier with its first letter in upper case ("train_step" ->
// "TrainStep").
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_HEADER_CPPNAMES_H
#define KILN_CODEGEN_HEADER_CPPNAMES_H

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir::kiln::codegen {

/// The identifier of `name` under the rule above.
std::string cppIdentifier(llvm::StringRef name);
/// cppIdentifier in CamelCase ("train_step" -> "TrainStep").
std::string cppCamelCase(llvm::StringRef name);
/// `text` as a C++ string literal ("a\"b" for a"b), printable ASCII
/// as is, everything else escaped in octal.
std::string cppStringLiteral(llvm::StringRef text);
/// True for C++17 keywords and alternative tokens.
bool isCppKeyword(llvm::StringRef identifier);

/// The identifiers of one C++ scope (a class or a struct) and what each
/// names, so that two names that map to one identifier are an error.
class CppScope {
public:
  /// `scope` names the scope in messages ("class Mlp").
  explicit CppScope(std::string scope) : scope(std::move(scope)) {}

  /// Reserves `identifier` for a member the generator writes itself.
  void reserve(llvm::StringRef identifier, llvm::StringRef what);
  /// Adds `identifier` for `what` ("parameter 'grad.w1'"); on a clash
  /// returns false with a message naming both in `error`.
  bool add(llvm::StringRef identifier, llvm::StringRef what,
           std::string &error);

private:
  std::string scope;
  llvm::StringMap<std::string> owners;
};

} // namespace mlir::kiln::codegen

#endif // KILN_CODEGEN_HEADER_CPPNAMES_H
