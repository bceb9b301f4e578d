//===- CustomKernelSource.cpp - the user's file of a kiln.custom ----------===//

#include "codegen/cuda/custom/CustomKernelSource.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

namespace mlir::kiln::codegen {

std::vector<std::string>
customKernelSearchPath(Location location,
                       llvm::ArrayRef<std::string> includeDirs) {
  std::vector<std::string> dirs;
  // The first file location inside `location` (a fused or named location
  // of an op that passes moved or derived, e.g. a gradient op, keeps the
  // user's).
  std::string irFile;
  location->walk([&](Location inner) {
    if (auto file = dyn_cast<FileLineColLoc>(inner)) {
      irFile = file.getFilename().str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (!irFile.empty() && irFile != "-" && irFile != "<stdin>") {
    llvm::StringRef dir = llvm::sys::path::parent_path(irFile);
    dirs.push_back(dir.empty() ? "." : dir.str());
  }
  dirs.insert(dirs.end(), includeDirs.begin(), includeDirs.end());
  return dirs;
}

FailureOr<CustomKernelSource>
loadCustomKernelSource(llvm::StringRef source, llvm::StringRef entry,
                       llvm::ArrayRef<std::string> searchPath,
                       llvm::function_ref<InFlightDiagnostic()> emitError) {
  std::vector<std::string> candidates;
  if (llvm::sys::path::is_absolute(source)) {
    candidates.push_back(source.str());
  } else {
    for (const std::string &dir : searchPath) {
      llvm::SmallString<256> path(dir);
      llvm::sys::path::append(path, source);
      candidates.push_back(std::string(path));
    }
  }
  for (const std::string &path : candidates) {
    if (!llvm::sys::fs::is_regular_file(path))
      continue;
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
        llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
    if (!buffer) {
      emitError() << "cannot read the kernel file '" << path
                  << "': " << buffer.getError().message();
      return failure();
    }
    CustomKernelSource result{source.str(), path, (*buffer)->getBuffer().str()};
    if (!mentionsIdentifier(result.text, entry)) {
      emitError() << "the kernel file '" << path << "' defines no function '"
                  << entry << "'";
      return failure();
    }
    return result;
  }
  InFlightDiagnostic diag = emitError();
  diag << "kernel file '" << source << "' not found";
  if (llvm::sys::path::is_absolute(source)) {
    return failure();
  }
  diag << " (looked in ";
  if (searchPath.empty())
    diag << "no directory: the IR has no file location; give kilnc -I DIR";
  else
    diag << llvm::join(searchPath, ", ");
  diag << ")";
  return failure();
}

bool mentionsIdentifier(llvm::StringRef text, llvm::StringRef name) {
  size_t colons = name.rfind("::");
  if (colons != llvm::StringRef::npos)
    name = name.drop_front(colons + 2);
  auto isIdentifierChar = [](char c) { return llvm::isAlnum(c) || c == '_'; };
  size_t i = 0, n = text.size();
  while (i < n) {
    char c = text[i];
    if (text.substr(i).starts_with("//")) {
      i = text.find('\n', i);
      if (i == llvm::StringRef::npos)
        return false;
      continue;
    }
    if (text.substr(i).starts_with("/*")) {
      i = text.find("*/", i + 2);
      if (i == llvm::StringRef::npos)
        return false;
      i += 2;
      continue;
    }
    if (c == '"' || c == '\'') {
      for (++i; i < n && text[i] != c; ++i)
        if (text[i] == '\\')
          ++i;
      ++i;
      continue;
    }
    if (isIdentifierChar(c)) {
      size_t end = i;
      while (end < n && isIdentifierChar(text[end]))
        ++end;
      if (text.slice(i, end) == name)
        return true;
      i = end;
      continue;
    }
    ++i;
  }
  return false;
}

} // namespace mlir::kiln::codegen
