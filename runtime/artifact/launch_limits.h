// CUDA's limits on one kernel launch (compute capability 7.0 and later), as
// the artifact's validator checks them and as the compiler plans within
// them: its kernels are sized, split or tiled so that no launch passes them.

#ifndef KILN_RUNTIME_ARTIFACT_LAUNCH_LIMITS_H_
#define KILN_RUNTIME_ARTIFACT_LAUNCH_LIMITS_H_

#include <cstddef>
#include <cstdint>

namespace kiln {
namespace launch_limits {

inline constexpr uint64_t kMaxGridX = (1ULL << 31) - 1;
inline constexpr uint64_t kMaxGridYZ = 65535;
inline constexpr uint64_t kMaxBlockXY = 1024;
inline constexpr uint64_t kMaxBlockZ = 64;
inline constexpr uint64_t kMaxThreadsPerBlock = 1024;
// Kernel parameters are 8 bytes each, a tensor map 128 bytes aligned to 64;
// 4 KiB of them is the limit every driver takes.
inline constexpr size_t kMaxKernelParams = 512;
inline constexpr uint64_t kMaxKernelParamBytes = 4096;
inline constexpr uint64_t kParamBytes = 8;
inline constexpr uint64_t kTensorMapBytes = 128;
inline constexpr uint64_t kTensorMapAlignment = 64;

// The parameter bytes after one more parameter, `bytes` before it.
inline constexpr uint64_t WithParam(uint64_t bytes, bool tensor_map) {
  return tensor_map ? (bytes + kTensorMapAlignment - 1) / kTensorMapAlignment *
                              kTensorMapAlignment +
                          kTensorMapBytes
                    : bytes + kParamBytes;
}

}  // namespace launch_limits
}  // namespace kiln

#endif  // KILN_RUNTIME_ARTIFACT_LAUNCH_LIMITS_H_
