//===- TemplateIncludes.cpp - which templates a kernel source includes ----===//

#include "codegen/cuda/KernelTemplates.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::kiln::codegen {
namespace {

/// Appends the templates `source` includes (depth first) to `out`.
void collect(llvm::StringRef source, llvm::StringSet<> &seen,
             std::vector<llvm::StringRef> &out) {
  llvm::SmallVector<llvm::StringRef> lines;
  source.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    line = line.trim();
    if (!line.consume_front("#include \"") || !line.consume_back("\""))
      continue;
    llvm::StringRef text = kernelTemplate(line);
    if (text.empty() || !seen.insert(line).second)
      continue;
    collect(text, seen, out);
    // The name as the table holds it, which outlives `source`.
    for (const KernelTemplate &t : kernelTemplates())
      if (t.name == line)
        out.push_back(t.name);
  }
}

} // namespace

std::vector<llvm::StringRef> includedTemplates(llvm::StringRef source) {
  llvm::StringSet<> seen;
  std::vector<llvm::StringRef> out;
  collect(source, seen, out);
  return out;
}

} // namespace mlir::kiln::codegen
