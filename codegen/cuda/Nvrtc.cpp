//===- Nvrtc.cpp - CUDA C++ to PTX and cubin with NVRTC -------------------===//

#include "codegen/cuda/Nvrtc.h"

#include "codegen/cuda/KernelEmitter.h"
#include "codegen/cuda/KernelTemplates.h"
#include "llvm/ADT/StringExtras.h"

#include <nvrtc.h>

#include <mutex>
#include <unordered_map>

namespace mlir::kiln::codegen {

uint64_t contentHash(llvm::StringRef text) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

/// NVRTC's options besides the architecture. No fast math: kernels must match
/// the reference's IEEE semantics.
static const char *const kNvrtcOptions[] = {
    "--std=c++17", "--include-path=/usr/local/cuda/include"};

std::string compilerIdentity() {
  int nvrtcMajor = 0, nvrtcMinor = 0;
  nvrtcVersion(&nvrtcMajor, &nvrtcMinor);
  std::string identity = "nvrtc " + std::to_string(nvrtcMajor) + "." +
                         std::to_string(nvrtcMinor) +
                         " (cubins by nvrtc) options";
  for (const char *option : kNvrtcOptions)
    identity += std::string(" ") + option;
  identity += "\n";
  for (const KernelTemplate &header : kernelTemplates())
    identity += header.name.str() + "\n" + header.text.str();
  return identity;
}

bool waitsForPredecessor(llvm::StringRef source, llvm::StringRef arch) {
  return archNumber(arch) >= 90 && source.contains(kWaitForPredecessor);
}

namespace {
/// Compiled kernels by (arch, cubin?, source) hash: identical kernels of
/// different fusions and entries are compiled once per process.
struct Cache {
  std::mutex mutex;
  std::unordered_map<uint64_t, CompiledKernel> kernels;
};
Cache &cache() {
  static Cache *instance = new Cache();
  return *instance;
}
} // namespace

bool compileCuda(llvm::StringRef source, llvm::StringRef name,
                 llvm::StringRef arch, bool withCubin, CompiledKernel &out,
                 std::string &error) {
  std::string key = arch.str() + (withCubin ? "+cubin\n" : "\n") + source.str();
  uint64_t hash = contentHash(key);
  {
    std::lock_guard<std::mutex> lock(cache().mutex);
    auto it = cache().kernels.find(hash);
    if (it != cache().kernels.end()) {
      out = it->second;
      return true;
    }
  }
  if (!arch.starts_with("sm_")) {
    error = "architecture must look like sm_90, got '" + arch.str() + "'";
    return false;
  }
  // Every template is offered; NVRTC reads only those the kernel includes.
  static const auto templates = [] {
    std::vector<const char *> texts, names;
    for (const KernelTemplate &header : kernelTemplates()) {
      texts.push_back(header.text.data());
      names.push_back(header.name.data());
    }
    return std::make_pair(texts, names);
  }();
  const auto &[headers, headerNames] = templates;
  nvrtcProgram program;
  std::string sourceText = source.str(), fileName = name.str() + ".cu";
  if (nvrtcCreateProgram(&program, sourceText.c_str(), fileName.c_str(),
                         static_cast<int>(headers.size()), headers.data(),
                         headerNames.data()) != NVRTC_SUCCESS) {
    error = "nvrtcCreateProgram failed";
    return false;
  }
  // PTX for the virtual architecture, or for the real one with its cubin.
  // NVRTC assembles a whole program: nvJitLink, assembling the PTX for
  // linking, would ignore setmaxnreg (and with it the register split of
  // warp-specialised kernels).
  std::string archFlag =
      "--gpu-architecture=" +
      (withCubin ? arch.str() : "compute_" + arch.drop_front(3).str());
  const char *options[] = {archFlag.c_str(), kNvrtcOptions[0],
                           kNvrtcOptions[1]};
  nvrtcResult result = nvrtcCompileProgram(program, 3, options);
  size_t logSize = 0;
  nvrtcGetProgramLogSize(program, &logSize);
  std::string log(logSize, '\0');
  if (logSize > 1)
    nvrtcGetProgramLog(program, log.data());
  if (!log.empty() && log.back() == '\0')
    log.pop_back();
  if (result != NVRTC_SUCCESS) {
    error = std::string(nvrtcGetErrorString(result)) + " compiling " +
            fileName + ":\n" + log;
    nvrtcDestroyProgram(&program);
    return false;
  }
  CompiledKernel compiled;
  compiled.log = log;
  size_t ptxSize = 0;
  nvrtcGetPTXSize(program, &ptxSize);
  compiled.ptx.resize(ptxSize);
  nvrtcGetPTX(program, compiled.ptx.data());
  if (!compiled.ptx.empty() && compiled.ptx.back() == '\0')
    compiled.ptx.pop_back();
  if (withCubin) {
    size_t cubinSize = 0;
    if (nvrtcGetCUBINSize(program, &cubinSize) != NVRTC_SUCCESS ||
        cubinSize == 0) {
      error = "NVRTC produced no cubin for " + arch.str() + " compiling " +
              fileName;
      nvrtcDestroyProgram(&program);
      return false;
    }
    compiled.cubin.resize(cubinSize);
    nvrtcGetCUBIN(program, reinterpret_cast<char *>(compiled.cubin.data()));
  }
  nvrtcDestroyProgram(&program);
  {
    std::lock_guard<std::mutex> lock(cache().mutex);
    cache().kernels.emplace(hash, compiled);
  }
  out = std::move(compiled);
  return true;
}

} // namespace mlir::kiln::codegen
