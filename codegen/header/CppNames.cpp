//===- CppNames.cpp - artifact names as C++ identifiers -------------------===//

#include "codegen/header/CppNames.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/Twine.h"

#include <cstdio>

namespace mlir::kiln::codegen {

bool isCppKeyword(llvm::StringRef identifier) {
  static const llvm::StringSet<> keywords = {
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor",
      "bool", "break", "case", "catch", "char", "char16_t", "char32_t", "class",
      "compl", "const", "constexpr", "const_cast", "continue", "decltype",
      "default", "delete", "do", "double", "dynamic_cast", "else", "enum",
      "explicit", "export", "extern", "false", "float", "for", "friend", "goto",
      "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept",
      "not", "not_eq", "nullptr", "operator", "or", "or_eq", "private",
      "protected", "public", "register", "reinterpret_cast", "return", "short",
      "signed", "sizeof", "static", "static_assert", "static_cast", "struct",
      "switch", "template", "this", "thread_local", "throw", "true", "try",
      "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual",
      "void", "volatile", "wchar_t", "while", "xor", "xor_eq",
      // C++20 keywords, so that headers stay valid under newer standards.
      "char8_t", "concept", "consteval", "constinit", "co_await", "co_return",
      "co_yield", "requires"};
  return keywords.contains(identifier);
}

std::string cppIdentifier(llvm::StringRef name) {
  std::string out;
  for (char c : name) {
    char mapped = llvm::isAlnum(c) ? c : '_';
    if (mapped == '_' && (out.empty() || out.back() == '_'))
      continue;
    out.push_back(mapped);
  }
  while (!out.empty() && out.back() == '_')
    out.pop_back();
  if (out.empty() || llvm::isDigit(out.front()))
    out = "t_" + out;
  if (isCppKeyword(out))
    out += "_";
  return out;
}

std::string cppCamelCase(llvm::StringRef name) {
  std::string identifier = cppIdentifier(name);
  std::string out;
  bool upper = true;
  for (char c : identifier) {
    if (c == '_') {
      upper = true;
      continue;
    }
    out.push_back(upper ? llvm::toUpper(c) : c);
    upper = false;
  }
  // "t_0" keeps a letter in front of its digit.
  if (out.empty() || llvm::isDigit(out.front()))
    out = "T" + out;
  return out;
}

std::string cppStringLiteral(llvm::StringRef text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c >= 0x20 && c < 0x7f) {
      out += c;
    } else {
      char octal[5];
      std::snprintf(octal, sizeof octal, "\\%03o", c);
      out += octal;
    }
  }
  return out + "\"";
}

void CppScope::reserve(llvm::StringRef identifier, llvm::StringRef what) {
  owners.try_emplace(identifier, what.str());
}

bool CppScope::add(llvm::StringRef identifier, llvm::StringRef what,
                   std::string &error) {
  auto [it, inserted] = owners.try_emplace(identifier, what.str());
  if (inserted)
    return true;
  error = (what + " and " + it->second + " both map to the C++ name '" +
           identifier + "' in " + scope +
           " (every character outside [A-Za-z0-9_] becomes '_', runs of '_' "
           "one; rename one of them)")
              .str();
  return false;
}

} // namespace mlir::kiln::codegen
