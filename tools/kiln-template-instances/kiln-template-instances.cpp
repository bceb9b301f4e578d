//===- kiln-template-instances.cpp - write every template instance --------===//
//
//   kiln-template-instances OUTDIR
//
// Writes each instance of TemplateInstances.h as OUTDIR/<name>.cu and a
// manifest OUTDIR/instances.txt with one line per instance: its name and the
// architectures to compile it for. check_templates.sh compiles them with
// nvcc.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/TemplateInstances.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir::kiln::codegen;

static bool writeFile(const std::string &path, llvm::StringRef text) {
  std::error_code error;
  llvm::raw_fd_ostream os(path, error);
  if (error) {
    llvm::errs() << "kiln-template-instances: cannot write " << path << ": "
                 << error.message() << "\n";
    return false;
  }
  os << text;
  return true;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    llvm::errs() << "usage: kiln-template-instances OUTDIR\n";
    return 2;
  }
  std::string dir = argv[1];
  if (std::error_code error = llvm::sys::fs::create_directories(dir)) {
    llvm::errs() << "kiln-template-instances: cannot create " << dir << ": "
                 << error.message() << "\n";
    return 1;
  }
  std::string manifest;
  llvm::StringSet<> names;
  for (const TemplateInstance &instance : allTemplateInstances()) {
    if (!names.insert(instance.name).second) {
      llvm::errs() << "kiln-template-instances: duplicate instance name '"
                   << instance.name << "'\n";
      return 1;
    }
    if (!writeFile(dir + "/" + instance.name + ".cu", instance.source))
      return 1;
    manifest += instance.name;
    for (const std::string &arch : instance.arches)
      manifest += " " + arch;
    manifest += "\n";
  }
  return writeFile(dir + "/instances.txt", manifest) ? 0 : 1;
}
