//===- ModelText.cpp - checks of a model's bytes before parsing -----------===//

#include "compiler/import/ModelText.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/MemoryBuffer.h"

namespace mlir::kiln {
namespace {

/// How much of the start of a file decides whether it is text.
constexpr size_t kSniffBytes = 1024;

/// Whether `head` holds a NUL byte or a byte sequence that is not UTF-8; a
/// sequence that the end of `head` cuts counts as UTF-8 when `cut` (the
/// file goes on) and as not when `head` is the whole file.
bool looksBinary(llvm::StringRef head, bool cut) {
  if (head.contains('\0'))
    return true;
  const auto *p = reinterpret_cast<const llvm::UTF8 *>(head.begin());
  const auto *end = reinterpret_cast<const llvm::UTF8 *>(head.end());
  while (p < end) {
    unsigned length = llvm::getNumBytesForUTF8(*p);
    if (end - p < length)
      return !cut;
    if (!llvm::isLegalUTF8Sequence(p, p + length))
      return true;
    p += length;
  }
  return false;
}

/// What binary `bytes` look like, for the error that names them.
std::string describeBinary(llvm::StringRef bytes) {
  if (bytes.starts_with("\x7f"
                        "ELF"))
    return "an ELF executable or library";
  if (bytes.starts_with("KILNDATA"))
    return "a kiln dataset";
  if (bytes.size() >= 8 && bytes.substr(4, 4) == "KILN")
    return "a kiln artifact, which kiln-run runs";
  if (bytes.size() > 8 && bytes[8] == '{' &&
      bytes.substr(5, 3) == llvm::StringRef("\0\0\0", 3))
    return "a safetensors file";
  if (bytes.starts_with("\x1f\x8b"))
    return "gzip-compressed data";
  if (bytes.starts_with("PK\x03\x04"))
    return "a zip archive";
  // ONNX files start with the ModelProto's ir_version, field 1 (varint).
  if (bytes.starts_with("\x08"))
    return "a protobuf, such as an ONNX model, which kiln reads from files "
           "named .onnx";
  return "binary data";
}

/// Whether `text` holds nothing but white space and // comments.
bool isBlank(llvm::StringRef text) {
  while (true) {
    text = text.ltrim();
    if (!text.starts_with("//"))
      return text.empty();
    text = text.drop_until([](char c) { return c == '\n'; });
  }
}

/// Where a model's text goes wrong before parsing, and how.
struct TextProblem {
  const char *at = nullptr;
  std::string what;
};

/// The first element of a dense array of i1 at the start of `text`
/// ("array<i1: ...>") that is not `true` or `false`, or null: MLIR 19 takes
/// integers there but builds an attribute that crashes its printer.
const char *findIntegerBoolArray(llvm::StringRef text) {
  llvm::StringRef rest = text.drop_front(llvm::StringRef("array<i1").size());
  if (rest.empty() || llvm::isDigit(rest.front()))
    return nullptr; // array<i16 ...> and the like
  rest = rest.ltrim();
  if (!rest.consume_front(":"))
    return nullptr;
  llvm::StringRef elements = rest.take_until([](char c) { return c == '>'; });
  while (!elements.empty()) {
    auto [element, next] = elements.split(',');
    llvm::StringRef word = element.trim();
    if (word != "true" && word != "false")
      return word.empty() ? element.data() : word.data();
    elements = next;
  }
  return nullptr;
}

/// The first problem of `text` outside comments and string literals (the
/// MLIR lexer's: "..." with backslash escapes, ended by a newline at the
/// latest): a bracket nested deeper than kMaxModelNesting (`->` closes
/// nothing), or an integer in an array of i1.
TextProblem findProblem(llvm::StringRef text) {
  unsigned depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    switch (text[i]) {
    case '/':
      if (text.substr(i).starts_with("//"))
        i = std::min(text.find('\n', i), text.size());
      break;
    case '"':
      for (++i; i < text.size() && text[i] != '"' && text[i] != '\n'; ++i)
        if (text[i] == '\\')
          ++i;
      break;
    case 'a':
      if (text.substr(i).starts_with("array<i1"))
        if (const char *bad = findIntegerBoolArray(text.substr(i)))
          return {bad, "an array of i1 takes true and false, not integers"};
      break;
    case '(':
    case '[':
    case '{':
    case '<':
      if (++depth > kMaxModelNesting)
        return {text.data() + i,
                "brackets nest more than " + std::to_string(kMaxModelNesting) +
                    " levels deep here, past what kiln parses"};
      break;
    case '>':
      if (i > 0 && text[i - 1] == '-')
        break;
      [[fallthrough]];
    case ')':
    case ']':
    case '}':
      if (depth > 0)
        --depth;
      break;
    default:
      break;
    }
  }
  return {};
}

} // namespace

LogicalResult checkModelText(const llvm::MemoryBuffer &buffer,
                             std::string &error) {
  llvm::StringRef text = buffer.getBuffer();
  llvm::StringRef name = buffer.getBufferIdentifier();
  // MLIR bytecode is binary by design; its reader checks it.
  if (text.starts_with("ML\xef"
                       "R"))
    return success();
  if (looksBinary(text.take_front(kSniffBytes), text.size() > kSniffBytes)) {
    error = name.str() + " is not a text file (it looks like " +
            describeBinary(text) + ")";
    return failure();
  }
  if (isBlank(text)) {
    error = name.str() + " is empty: a kiln model defines at least one "
                         "func.func";
    return failure();
  }
  TextProblem problem = findProblem(text);
  if (!problem.at)
    return success();
  // Not through the diagnostic handler, which would echo the line: a line
  // of a hundred thousand brackets.
  llvm::StringRef before = text.take_front(problem.at - text.data());
  size_t line = before.count('\n') + 1;
  size_t newline = before.rfind('\n');
  size_t column = newline == llvm::StringRef::npos ? before.size() + 1
                                                   : before.size() - newline;
  error = (name + ":" + llvm::Twine(line) + ":" + llvm::Twine(column) + ": " +
           problem.what)
              .str();
  return failure();
}

} // namespace mlir::kiln
