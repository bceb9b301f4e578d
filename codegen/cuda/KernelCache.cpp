//===- KernelCache.cpp - compiled kernels kept on disk --------------------===//

#include "codegen/cuda/KernelCache.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <cstring>

namespace mlir::kiln::codegen {

namespace {
/// Entry layout: magic, the key, three little-endian u64 sizes (PTX, cubin,
/// log), the three byte strings, and an FNV-1a 64 of everything before it.
constexpr llvm::StringLiteral kMagic = "KILN-KERNEL-1\n";
constexpr size_t kKeyLength = 64;

void appendU64(std::string &out, uint64_t value) {
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

bool readU64(llvm::StringRef &in, uint64_t &value) {
  if (in.size() < 8)
    return false;
  value = 0;
  for (int i = 0; i < 8; ++i)
    value |= static_cast<uint64_t>(static_cast<unsigned char>(in[i]))
             << (8 * i);
  in = in.drop_front(8);
  return true;
}

bool readBytes(llvm::StringRef &in, uint64_t size, llvm::StringRef &bytes) {
  if (in.size() < size)
    return false;
  bytes = in.take_front(size);
  in = in.drop_front(size);
  return true;
}
} // namespace

std::string KernelCache::defaultDirectory() {
  if (const char *explicitDirectory = std::getenv("KILN_KERNEL_CACHE"))
    return explicitDirectory;
  llvm::SmallString<256> path;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    llvm::sys::path::append(path, xdg, "kiln", "kernels");
  } else if (const char *home = std::getenv("HOME"); home && *home) {
    llvm::sys::path::append(path, home, ".cache", "kiln", "kernels");
  }
  return std::string(path);
}

std::string KernelCache::keyOf(llvm::StringRef source, llvm::StringRef name,
                               llvm::StringRef arch, bool withCubin) {
  static const std::string identity = compilerIdentity();
  llvm::SHA256 hasher;
  // Each part with its length, so that no two different inputs concatenate
  // to the same bytes.
  for (llvm::StringRef part :
       {llvm::StringRef(kMagic), llvm::StringRef(identity), name, arch,
        llvm::StringRef(withCubin ? "cubin" : "ptx"), source}) {
    std::string length;
    appendU64(length, part.size());
    hasher.update(length);
    hasher.update(part);
  }
  std::array<uint8_t, 32> digest = hasher.final();
  return llvm::toHex(digest, /*LowerCase=*/true);
}

std::string KernelCache::entryPath(llvm::StringRef key) const {
  llvm::SmallString<256> path(directory);
  llvm::sys::path::append(path, key + ".kernel");
  return std::string(path);
}

bool KernelCache::load(llvm::StringRef key, CompiledKernel &out) const {
  auto file = llvm::MemoryBuffer::getFile(entryPath(key), /*IsText=*/false,
                                          /*RequiresNullTerminator=*/false);
  if (!file)
    return false;
  llvm::StringRef in = (*file)->getBuffer();
  if (in.size() < 8)
    return false;
  llvm::StringRef body = in.drop_back(8), checksum = in.take_back(8);
  uint64_t expected = 0;
  if (!readU64(checksum, expected) || expected != contentHash(body))
    return false;
  if (!body.consume_front(kMagic) || !body.consume_front(key) ||
      !body.consume_front("\n"))
    return false;
  uint64_t ptxSize = 0, cubinSize = 0, logSize = 0;
  llvm::StringRef ptx, cubin, log;
  if (!readU64(body, ptxSize) || !readU64(body, cubinSize) ||
      !readU64(body, logSize) || !readBytes(body, ptxSize, ptx) ||
      !readBytes(body, cubinSize, cubin) || !readBytes(body, logSize, log) ||
      !body.empty())
    return false;
  out.ptx = ptx.str();
  out.cubin.assign(cubin.bytes_begin(), cubin.bytes_end());
  out.log = log.str();
  return true;
}

bool KernelCache::store(llvm::StringRef key,
                        const CompiledKernel &kernel) const {
  if (llvm::sys::fs::create_directories(directory))
    return false;
  std::string bytes(kMagic);
  bytes += key;
  bytes += "\n";
  appendU64(bytes, kernel.ptx.size());
  appendU64(bytes, kernel.cubin.size());
  appendU64(bytes, kernel.log.size());
  bytes += kernel.ptx;
  bytes.append(reinterpret_cast<const char *>(kernel.cubin.data()),
               kernel.cubin.size());
  bytes += kernel.log;
  appendU64(bytes, contentHash(bytes));

  // A unique temporary file in the same directory, renamed over the entry:
  // readers see the old entry, no entry, or the whole new one.
  llvm::SmallString<256> temporary;
  int fd = -1;
  if (llvm::sys::fs::createUniqueFile(entryPath(key) + ".tmp-%%%%%%%%", fd,
                                      temporary))
    return false;
  {
    llvm::raw_fd_ostream stream(fd, /*shouldClose=*/true);
    stream << bytes;
    stream.close();
    if (stream.has_error()) {
      stream.clear_error();
      llvm::sys::fs::remove(temporary);
      return false;
    }
  }
  if (llvm::sys::fs::rename(temporary, entryPath(key))) {
    llvm::sys::fs::remove(temporary);
    return false;
  }
  return true;
}

bool KernelCache::compile(llvm::StringRef source, llvm::StringRef name,
                          llvm::StringRef arch, bool withCubin,
                          CompiledKernel &out, std::string &error) {
  if (!enabled())
    return compileCuda(source, name, arch, withCubin, out, error);
  std::string key = keyOf(source, name, arch, withCubin);
  if (load(key, out)) {
    ++hitCount;
    return true;
  }
  ++missCount;
  if (!compileCuda(source, name, arch, withCubin, out, error))
    return false;
  if (!store(key, out))
    ++failedStoreCount;
  return true;
}

void KernelCache::compileAll(llvm::MutableArrayRef<Job> jobs) {
  auto run = [this](Job &job) {
    job.compiled = compile(job.source, job.name, job.arch, job.withCubin,
                           job.out, job.error);
  };
  if (jobs.size() < 2) {
    llvm::for_each(jobs, run);
    return;
  }
  llvm::DefaultThreadPool pool(llvm::hardware_concurrency());
  for (Job &job : jobs)
    pool.async([&run, &job] { run(job); });
  pool.wait();
}

} // namespace mlir::kiln::codegen
