//===- ModelText.cpp - checks of a model's bytes before parsing -----------===//

#include "compiler/import/ModelText.h"

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

/// The first bracket nested deeper than kMaxModelNesting, outside comments
/// and string literals (the MLIR lexer's: "..." with backslash escapes,
/// ended by a newline at the latest), or null. `->` closes nothing.
const char *findDeepNesting(llvm::StringRef text) {
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
    case '(':
    case '[':
    case '{':
    case '<':
      if (++depth > kMaxModelNesting)
        return text.data() + i;
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
  return nullptr;
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
  const char *deep = findDeepNesting(text);
  if (!deep)
    return success();
  // Not through the diagnostic handler, which would echo the line: a line
  // of a hundred thousand brackets.
  llvm::StringRef before = text.take_front(deep - text.data());
  size_t line = before.count('\n') + 1;
  size_t newline = before.rfind('\n');
  size_t column = newline == llvm::StringRef::npos ? before.size() + 1
                                                   : before.size() - newline;
  error = (name + ":" + llvm::Twine(line) + ":" + llvm::Twine(column) +
           ": brackets nest more than " + llvm::Twine(kMaxModelNesting) +
           " levels deep here, past what kiln parses")
              .str();
  return failure();
}

} // namespace mlir::kiln
