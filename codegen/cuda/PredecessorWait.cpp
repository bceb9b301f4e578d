//===- PredecessorWait.cpp - what a kernel does before it waits -----------===//

#include "codegen/cuda/PredecessorWait.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

namespace mlir::kiln::codegen {
namespace {

/// Instructions that may read or write memory another grid wrote or reads,
/// or leave the straight line, by the start of their opcode.
constexpr llvm::StringLiteral kUnsafe[] = {
    "ld.",        "ldu.",      "st.",  "atom.", "red.",  "cp.",   "prefetch",
    "tensormap.", "multimem.", "tex.", "tld4.", "suld.", "sust.", "sured.",
    "discard.",   "bra",       "brx.", "call",  "ret",   "exit"};

/// State spaces of this block or thread alone, and the kernel's
/// parameters: no other grid touches them.
constexpr llvm::StringLiteral kPrivate[] = {
    "ld.param", "ld.shared", "ld.local", "st.shared", "st.local", "ld.const"};

bool unsafe(llvm::StringRef opcode) {
  if (llvm::any_of(kPrivate,
                   [&](llvm::StringRef p) { return opcode.starts_with(p); }))
    return false;
  return llvm::any_of(kUnsafe, [&](llvm::StringRef u) {
    return opcode == u.rtrim('.') || opcode.starts_with(u);
  });
}

/// The body of `.entry kernel(...)`: from after its opening brace.
std::optional<size_t> bodyStart(llvm::StringRef ptx, llvm::StringRef kernel) {
  std::string head = (".entry " + kernel).str();
  for (size_t at = ptx.find(head); at != llvm::StringRef::npos;
       at = ptx.find(head, at + 1)) {
    llvm::StringRef rest = ptx.drop_front(at + head.size()).ltrim();
    if (!rest.starts_with("("))
      continue; // a longer name that starts with this one
    size_t close = ptx.find(')', at);
    size_t open = close == llvm::StringRef::npos ? close : ptx.find('{', close);
    if (open == llvm::StringRef::npos)
      return std::nullopt;
    return open + 1;
  }
  return std::nullopt;
}

} // namespace

std::optional<std::string> accessBeforeWait(llvm::StringRef ptx,
                                            llvm::StringRef kernel) {
  std::optional<size_t> start = bodyStart(ptx, kernel);
  if (!start)
    return "no entry '" + kernel.str() + "' in the PTX";
  unsigned line = 1 + ptx.take_front(*start).count('\n');
  llvm::SmallVector<llvm::StringRef> lines;
  ptx.drop_front(*start).split(lines, '\n');
  int depth = 1; // braces: the body's and inline assembly's scopes
  for (auto [i, raw] : llvm::enumerate(lines)) {
    llvm::StringRef text = raw.split("//").first.trim();
    depth += text.count('{') - text.count('}');
    if (depth <= 0)
      break; // the end of the entry
    text = text.trim("{} \t");
    if (text.empty() || text.starts_with("."))
      continue; // declarations and directives
    const std::string where =
        "line " + std::to_string(line + i) + ": " + text.str();
    if (text.ends_with(":"))
      return where; // a label: some branch may come back before the wait
    // The opcode, after a guard predicate (@%p1, @!%p1).
    llvm::StringRef opcode = text;
    if (opcode.starts_with("@"))
      opcode = opcode.split(' ').second.ltrim();
    opcode = opcode.split(' ').first.split('\t').first.rtrim(';');
    if (opcode == "griddepcontrol.wait")
      return std::nullopt;
    if (opcode.starts_with("ret") || opcode.starts_with("exit"))
      return "it ends without a griddepcontrol.wait (" + where + ")";
    if (unsafe(opcode))
      return where;
  }
  return std::string("it ends without a griddepcontrol.wait");
}

} // namespace mlir::kiln::codegen
