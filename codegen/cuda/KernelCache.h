//===- KernelCache.h - compiled kernels kept on disk --------------*- C++
//-*-===//
//
// Compiling a kernel with NVRTC and assembling it takes 0.1-1 s, so a model
// with dozens of kernels recompiled on every kilnc run wastes most of the
// compiler's time. The cache keeps each compiled kernel in a file named by a
// SHA-256 of everything that determines the result: the kernel's source and
// name, the target architecture, whether a cubin was asked for, and the
// compiler identity (the NVRTC version, its options and the kernel
// templates), so a toolkit upgrade or a prelude change misses instead of
// returning stale code. Entries are written to a unique temporary file and
// renamed into place, so concurrent compilers never read half a file; an entry
// that fails its checksum is treated as missing and rewritten.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_CUDA_KERNELCACHE_H
#define KILN_CODEGEN_CUDA_KERNELCACHE_H

#include "codegen/cuda/Nvrtc.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <atomic>
#include <string>

namespace mlir::kiln::codegen {

class KernelCache {
public:
  /// A cache in `directory`, created on the first store. Empty: disabled
  /// (every lookup misses, stores do nothing).
  explicit KernelCache(std::string directory)
      : directory(std::move(directory)) {}

  /// The directory kilnc uses unless told otherwise: $KILN_KERNEL_CACHE if set
  /// (an empty value disables the cache), else $XDG_CACHE_HOME/kiln/kernels,
  /// else $HOME/.cache/kiln/kernels; empty when none of these is set.
  static std::string defaultDirectory();

  /// Compiles like compileCuda, through the cache.
  bool compile(llvm::StringRef source, llvm::StringRef name,
               llvm::StringRef arch, bool withCubin, CompiledKernel &out,
               std::string &error);

  /// One kernel of a batch: its inputs, and where its result goes.
  struct Job {
    std::string source, name, arch;
    bool withCubin = true;
    CompiledKernel out;
    std::string error;
    bool compiled = false;
  };
  /// Compiles every job like compile, on a pool of the machine's hardware
  /// threads (NVRTC compiles independent programs concurrently). Each job's
  /// result lands in the job, so the outcome does not depend on the order in
  /// which they finish.
  void compileAll(llvm::MutableArrayRef<Job> jobs);

  bool enabled() const { return !directory.empty(); }
  llvm::StringRef path() const { return directory; }
  /// Kernels found in the cache, and kernels compiled (and stored).
  unsigned hits() const { return hitCount; }
  unsigned misses() const { return missCount; }
  /// Stores that failed (unwritable directory, full disk): the kernel was
  /// still compiled, only not kept.
  unsigned failedStores() const { return failedStoreCount; }

  /// The file an entry of `key` lives in (for tests).
  std::string entryPath(llvm::StringRef key) const;
  /// The cache key of a compilation (64 hex digits).
  static std::string keyOf(llvm::StringRef source, llvm::StringRef name,
                           llvm::StringRef arch, bool withCubin);

private:
  bool load(llvm::StringRef key, CompiledKernel &out) const;
  bool store(llvm::StringRef key, const CompiledKernel &kernel) const;

  std::string directory;
  std::atomic<unsigned> hitCount{0}, missCount{0}, failedStoreCount{0};
};

} // namespace mlir::kiln::codegen

#endif // KILN_CODEGEN_CUDA_KERNELCACHE_H
