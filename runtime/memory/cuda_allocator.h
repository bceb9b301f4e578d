// The pool's Allocator and FenceRecorder over the CUDA driver.
#ifndef KILN_RUNTIME_MEMORY_CUDA_ALLOCATOR_H_
#define KILN_RUNTIME_MEMORY_CUDA_ALLOCATOR_H_

#include <cuda.h>

#include <memory>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "runtime/cuda/device.h"
#include "runtime/cuda/stream.h"
#include "runtime/memory/pool.h"

namespace kiln {

// The StreamId the pool uses for a stream.
inline StreamId StreamIdOf(const Stream& stream) {
  return reinterpret_cast<StreamId>(stream.handle());
}
inline CUstream CuStreamOf(StreamId stream) {
  return reinterpret_cast<CUstream>(stream);
}

// cuMemAlloc / cuMemFree on one device (its context is made current first,
// so frees from any thread work). The device must outlive the allocator.
class CudaAllocator : public Allocator {
 public:
  explicit CudaAllocator(const Device* device) : device_(device) {}
  absl::StatusOr<DevicePtr> Allocate(size_t bytes) override;
  absl::Status Free(DevicePtr pointer, size_t bytes) override;

 private:
  const Device* device_;
};

// Fences as CUDA events (timing disabled), recycled through a free list.
class CudaFenceRecorder : public FenceRecorder {
 public:
  explicit CudaFenceRecorder(const Device* device);
  ~CudaFenceRecorder() override;
  absl::StatusOr<std::unique_ptr<Fence>> Record(StreamId stream) override;

 private:
  friend class CudaFence;
  struct EventCache;
  const Device* device_;
  std::shared_ptr<EventCache> events_;
};

// A pool over `device` with CUDA events for stream ordering.
std::shared_ptr<DevicePool> NewCudaDevicePool(const Device* device);

}  // namespace kiln

#endif  // KILN_RUNTIME_MEMORY_CUDA_ALLOCATOR_H_
