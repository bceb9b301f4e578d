//===- GpuTarget.cpp - the known GPU architectures ------------------------===//

#include "codegen/cuda/GpuTarget.h"

#include "llvm/ADT/StringExtras.h"

namespace mlir::kiln::codegen {

std::string archSpecificTarget(llvm::StringRef arch) {
  return arch.ends_with("a") ? arch.str() : arch.str() + "a";
}

unsigned archNumber(llvm::StringRef arch) {
  unsigned number = 0;
  if (!arch.consume_front("sm_") ||
      arch.take_while(llvm::isDigit).getAsInteger(10, number))
    return 0;
  return number;
}

namespace {

constexpr uint32_t KiB = 1024;
constexpr uint64_t MiB = 1024 * 1024;

GpuTarget make(llvm::StringRef arch, unsigned number, llvm::StringRef part,
               unsigned sms, uint32_t sharedPerBlock, uint32_t sharedPerSm,
               unsigned maxThreadsPerSm, unsigned maxBlocksPerSm,
               uint64_t l2) {
  GpuTarget t;
  t.arch = arch;
  t.archNumber = number;
  t.part = part;
  t.smCount = sms;
  t.sharedBytesPerBlock = sharedPerBlock;
  t.sharedBytesPerSm = sharedPerSm;
  t.maxThreadsPerSm = maxThreadsPerSm;
  t.maxBlocksPerSm = maxBlocksPerSm;
  t.l2Bytes = l2;
  t.hasCpAsync = t.hasBf16Mma = number >= 80;
  t.hasTma = t.hasClusters = number >= 90;
  t.hasWgmma = number == 90;
  t.maxClusterBlocks = number >= 90 ? 8 : 1;
  return t;
}

/// Figures from NVIDIA's architecture tuning guides and data sheets.
const GpuTarget kTargets[] = {
    make("sm_75", 75, "T4", 40, 64 * KiB, 64 * KiB, 1024, 16, 4 * MiB),
    make("sm_80", 80, "A100 SXM", 108, 163 * KiB, 164 * KiB, 2048, 32,
         40 * MiB),
    make("sm_86", 86, "A10", 72, 99 * KiB, 100 * KiB, 1536, 16, 6 * MiB),
    make("sm_89", 89, "L40S", 142, 99 * KiB, 100 * KiB, 1536, 24, 96 * MiB),
    make("sm_90", 90, "H100/H200 SXM", 132, 227 * KiB, 228 * KiB, 2048, 32,
         50 * MiB),
    make("sm_100", 100, "B200", 148, 227 * KiB, 228 * KiB, 2048, 32,
         126 * MiB),
};

} // namespace

const GpuTarget *GpuTarget::forArch(llvm::StringRef arch) {
  unsigned number = codegen::archNumber(arch);
  const GpuTarget *found = nullptr;
  for (const GpuTarget &target : kTargets)
    if (number != 0 && target.archNumber <= number)
      found = &target;
  return found;
}

const GpuTarget &GpuTarget::oldest() { return kTargets[0]; }

} // namespace mlir::kiln::codegen
