//===- DeviceMemory.cpp - the device memory of each architecture ----------===//

#include "codegen/cuda/DeviceMemory.h"

#include "codegen/cuda/GpuTarget.h"

namespace mlir::kiln::codegen {
namespace {

constexpr uint64_t GiB = uint64_t{1} << 30;

struct KnownMemory {
  unsigned archNumber;
  DeviceMemory memory;
};

/// From NVIDIA's data sheets: the memory of each architecture's largest
/// data-centre part.
const KnownMemory kKnown[] = {
    {75, {"T4", 16 * GiB}},    {80, {"A100 80GB", 80 * GiB}},
    {86, {"A40", 48 * GiB}},   {89, {"L40S", 48 * GiB}},
    {90, {"H200", 141 * GiB}}, {100, {"B200", 180 * GiB}},
};

} // namespace

DeviceMemory largestDeviceMemory(llvm::StringRef arch) {
  const unsigned number = archNumber(arch);
  DeviceMemory found;
  for (const KnownMemory &known : kKnown)
    if (number != 0 && known.archNumber <= number)
      found = known.memory;
  return found;
}

} // namespace mlir::kiln::codegen
