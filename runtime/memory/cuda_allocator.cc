#include "runtime/memory/cuda_allocator.h"

#include "kiln/status.h"

namespace kiln {

absl::StatusOr<DevicePtr> CudaAllocator::Allocate(size_t bytes) {
  KILN_RETURN_IF_ERROR(device_->MakeCurrent());
  return device_->Allocate(bytes);
}

absl::Status CudaAllocator::Free(DevicePtr pointer, size_t bytes) {
  KILN_RETURN_IF_ERROR(device_->MakeCurrent());
  return device_->Free(pointer);
}

// Idle events, shared with the fences so a fence may outlive the recorder.
struct CudaFenceRecorder::EventCache {
  explicit EventCache(const Device* device) : device(device) {}
  ~EventCache() {
    for (CUevent event : idle) {
      (void)device->driver().api().cuEventDestroy(event);
    }
  }
  const Device* device;
  absl::Mutex mu;
  std::vector<CUevent> idle ABSL_GUARDED_BY(mu);
};

class CudaFence : public Fence {
 public:
  CudaFence(std::shared_ptr<CudaFenceRecorder::EventCache> cache, CUevent event)
      : cache_(std::move(cache)), event_(event) {}
  ~CudaFence() override {
    absl::MutexLock lock(&cache_->mu);
    cache_->idle.push_back(event_);
  }

  absl::StatusOr<bool> IsComplete() override {
    const CudaDriver& driver = cache_->device->driver();
    CUresult result = driver.api().cuEventQuery(event_);
    if (result == CUDA_ERROR_NOT_READY) return false;
    KILN_RETURN_IF_ERROR(driver.Check(result, "cuEventQuery"));
    return true;
  }

  absl::Status Wait() override {
    return KILN_CU(&cache_->device->driver(), cuEventSynchronize, event_);
  }

 private:
  std::shared_ptr<CudaFenceRecorder::EventCache> cache_;
  CUevent event_;
};

CudaFenceRecorder::CudaFenceRecorder(const Device* device)
    : device_(device), events_(std::make_shared<EventCache>(device)) {}

CudaFenceRecorder::~CudaFenceRecorder() = default;

absl::StatusOr<std::unique_ptr<Fence>> CudaFenceRecorder::Record(
    StreamId stream) {
  const CudaDriver* driver = &device_->driver();
  KILN_RETURN_IF_ERROR(device_->MakeCurrent());
  CUevent event = nullptr;
  {
    absl::MutexLock lock(&events_->mu);
    if (!events_->idle.empty()) {
      event = events_->idle.back();
      events_->idle.pop_back();
    }
  }
  if (event == nullptr) {
    KILN_RETURN_IF_ERROR(
        KILN_CU(driver, cuEventCreate, &event, CU_EVENT_DISABLE_TIMING));
  }
  // The fence owns the event from here (and recycles it on destruction).
  auto fence = std::make_unique<CudaFence>(events_, event);
  KILN_RETURN_IF_ERROR(
      KILN_CU(driver, cuEventRecord, event, CuStreamOf(stream)));
  return std::unique_ptr<Fence>(std::move(fence));
}

std::shared_ptr<DevicePool> NewCudaDevicePool(const Device* device) {
  return DevicePool::Create(std::make_shared<CudaAllocator>(device),
                            std::make_shared<CudaFenceRecorder>(device));
}

}  // namespace kiln
