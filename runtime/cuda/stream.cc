#include "runtime/cuda/stream.h"

#include "kiln/status.h"

namespace kiln {

absl::StatusOr<std::unique_ptr<Stream>> Stream::Create(const Device& device) {
  CUstream stream = nullptr;
  KILN_RETURN_IF_ERROR(KILN_CU(&device.driver(), cuStreamCreate, &stream,
                               CU_STREAM_NON_BLOCKING));
  return std::unique_ptr<Stream>(new Stream(&device, stream));
}

Stream::~Stream() { (void)device_->driver().api().cuStreamDestroy(stream_); }

absl::Status Stream::Synchronize() const {
  return KILN_CU(&device_->driver(), cuStreamSynchronize, stream_);
}

absl::Status Stream::Wait(const Event& event) const {
  return KILN_CU(&device_->driver(), cuStreamWaitEvent, stream_, event.handle(),
                 0);
}

absl::Status Stream::CopyToDevice(CUdeviceptr dst, const void* src,
                                  size_t bytes) const {
  if (bytes == 0) return absl::OkStatus();
  return KILN_CU(&device_->driver(), cuMemcpyHtoDAsync, dst, src, bytes,
                 stream_);
}

absl::Status Stream::CopyToHost(void* dst, CUdeviceptr src,
                                size_t bytes) const {
  if (bytes == 0) return absl::OkStatus();
  return KILN_CU(&device_->driver(), cuMemcpyDtoHAsync, dst, src, bytes,
                 stream_);
}

absl::Status Stream::CopyDeviceToDevice(CUdeviceptr dst, CUdeviceptr src,
                                        size_t bytes) const {
  if (bytes == 0) return absl::OkStatus();
  return KILN_CU(&device_->driver(), cuMemcpyDtoDAsync, dst, src, bytes,
                 stream_);
}

absl::Status Stream::Memset(CUdeviceptr dst, uint8_t value,
                            size_t bytes) const {
  if (bytes == 0) return absl::OkStatus();
  return KILN_CU(&device_->driver(), cuMemsetD8Async, dst, value, bytes,
                 stream_);
}

absl::StatusOr<std::unique_ptr<Event>> Event::Create(const Device& device,
                                                     bool timing) {
  CUevent event = nullptr;
  KILN_RETURN_IF_ERROR(
      KILN_CU(&device.driver(), cuEventCreate, &event,
              timing ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING));
  return std::unique_ptr<Event>(new Event(&device, event));
}

Event::~Event() { (void)device_->driver().api().cuEventDestroy(event_); }

absl::Status Event::Record(const Stream& stream) const {
  return KILN_CU(&device_->driver(), cuEventRecord, event_, stream.handle());
}

absl::Status Event::Synchronize() const {
  return KILN_CU(&device_->driver(), cuEventSynchronize, event_);
}

absl::StatusOr<bool> Event::IsComplete() const {
  CUresult result = device_->driver().api().cuEventQuery(event_);
  if (result == CUDA_ERROR_NOT_READY) return false;
  KILN_RETURN_IF_ERROR(device_->driver().Check(result, "cuEventQuery"));
  return true;
}

absl::StatusOr<float> Event::ElapsedMs(const Event& start, const Event& end) {
  float ms = 0;
  KILN_RETURN_IF_ERROR(KILN_CU(&start.device_->driver(), cuEventElapsedTime,
                               &ms, start.event_, end.event_));
  return ms;
}

absl::StatusOr<std::unique_ptr<PinnedHostBuffer>> PinnedHostBuffer::Create(
    const Device& device, size_t bytes) {
  void* data = nullptr;
  KILN_RETURN_IF_ERROR(
      KILN_CU(&device.driver(), cuMemAllocHost, &data, bytes == 0 ? 1 : bytes));
  return std::unique_ptr<PinnedHostBuffer>(
      new PinnedHostBuffer(&device, data, bytes));
}

PinnedHostBuffer::~PinnedHostBuffer() {
  (void)device_->driver().api().cuMemFreeHost(data_);
}

}  // namespace kiln
