// A CUDA device opened through its primary context.
#ifndef KILN_RUNTIME_CUDA_DEVICE_H_
#define KILN_RUNTIME_CUDA_DEVICE_H_

#include <cuda.h>

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/cuda/driver.h"

namespace kiln {

struct ComputeCapability {
  int major = 0;
  int minor = 0;
  // The architecture number used in sm_XX / compute_XX, e.g. 90 for 9.0.
  int sm() const { return major * 10 + minor; }
};

struct MemoryInfo {
  size_t free_bytes = 0;
  size_t total_bytes = 0;
};

// One GPU. Open() retains the device's primary context (the one the CUDA
// runtime and other libraries share) and makes it current on the calling
// thread; the destructor releases it. Every other runtime object created for
// a device assumes its context is current on the thread that uses it; call
// MakeCurrent() on a new thread first.
class Device {
 public:
  // The number of CUDA devices; Unavailable without a driver.
  static absl::StatusOr<int> Count();

  // Opens device `ordinal` (0-based). InvalidArgument for an ordinal out of
  // range, Unavailable without a driver.
  static absl::StatusOr<std::unique_ptr<Device>> Open(int ordinal);

  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
  ~Device();

  int ordinal() const { return ordinal_; }
  const std::string& name() const { return name_; }
  ComputeCapability compute_capability() const { return capability_; }
  int sm_count() const { return sm_count_; }
  size_t total_memory() const { return total_memory_; }
  // The largest dynamic shared memory a kernel may opt in to, per block.
  int max_shared_memory_per_block_optin() const { return max_smem_optin_; }
  // Thread-block clusters (compute capability 9.0 and newer).
  bool supports_clusters() const { return cluster_launch_; }
  // Cooperative launches (all blocks resident at once).
  bool supports_cooperative_launch() const { return cooperative_launch_; }

  CUdevice handle() const { return device_; }
  CUcontext context() const { return context_; }
  const CudaDriver& driver() const { return *driver_; }

  // Binds this device's context to the calling thread.
  absl::Status MakeCurrent() const;
  // Free and total device memory (cuMemGetInfo).
  absl::StatusOr<MemoryInfo> GetMemoryInfo() const;
  // Raw device memory (cuMemAlloc / cuMemFree); most code uses a DevicePool.
  absl::StatusOr<CUdeviceptr> Allocate(size_t bytes) const;
  absl::Status Free(CUdeviceptr pointer) const;
  // Waits for all work on the device's context.
  absl::Status Synchronize() const;

 private:
  Device() = default;

  const CudaDriver* driver_ = nullptr;
  int ordinal_ = 0;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  std::string name_;
  ComputeCapability capability_;
  int sm_count_ = 0;
  size_t total_memory_ = 0;
  int max_smem_optin_ = 0;
  bool cluster_launch_ = false;
  bool cooperative_launch_ = false;
};

}  // namespace kiln

#endif  // KILN_RUNTIME_CUDA_DEVICE_H_
