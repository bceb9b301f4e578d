// Streams, events and pinned host memory.
#ifndef KILN_RUNTIME_CUDA_STREAM_H_
#define KILN_RUNTIME_CUDA_STREAM_H_

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/cuda/device.h"

namespace kiln {

class Event;

// A non-blocking stream (it does not synchronise with the legacy default
// stream, and can be captured into a graph). The device must outlive it.
class Stream {
 public:
  static absl::StatusOr<std::unique_ptr<Stream>> Create(const Device& device);
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream();

  CUstream handle() const { return stream_; }
  const Device& device() const { return *device_; }

  // Blocks until all work enqueued so far has finished.
  absl::Status Synchronize() const;
  // Makes later work on this stream wait for `event`.
  absl::Status Wait(const Event& event) const;

  // Asynchronous copies and memset, ordered on this stream. Host memory must
  // stay valid until the stream reaches the copy (pinned memory makes the
  // copy truly asynchronous; pageable memory is staged by the driver).
  absl::Status CopyToDevice(CUdeviceptr dst, const void* src,
                            size_t bytes) const;
  absl::Status CopyToHost(void* dst, CUdeviceptr src, size_t bytes) const;
  absl::Status CopyDeviceToDevice(CUdeviceptr dst, CUdeviceptr src,
                                  size_t bytes) const;
  absl::Status Memset(CUdeviceptr dst, uint8_t value, size_t bytes) const;

 private:
  Stream(const Device* device, CUstream stream)
      : device_(device), stream_(stream) {}
  const Device* device_;
  CUstream stream_;
};

// A CUDA event, with timing enabled unless created otherwise.
class Event {
 public:
  static absl::StatusOr<std::unique_ptr<Event>> Create(const Device& device,
                                                       bool timing = true);
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event();

  CUevent handle() const { return event_; }

  absl::Status Record(const Stream& stream) const;
  absl::Status Synchronize() const;
  // True once all work captured by the last Record has finished.
  absl::StatusOr<bool> IsComplete() const;
  // Milliseconds between two recorded, completed timing events.
  static absl::StatusOr<float> ElapsedMs(const Event& start, const Event& end);

 private:
  Event(const Device* device, CUevent event) : device_(device), event_(event) {}
  const Device* device_;
  CUevent event_;
};

// Page-locked host memory (cuMemAllocHost), for asynchronous copies.
class PinnedHostBuffer {
 public:
  static absl::StatusOr<std::unique_ptr<PinnedHostBuffer>> Create(
      const Device& device, size_t bytes);
  PinnedHostBuffer(const PinnedHostBuffer&) = delete;
  PinnedHostBuffer& operator=(const PinnedHostBuffer&) = delete;
  ~PinnedHostBuffer();

  void* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  PinnedHostBuffer(const Device* device, void* data, size_t size)
      : device_(device), data_(data), size_(size) {}
  const Device* device_;
  void* data_;
  size_t size_;
};

}  // namespace kiln

#endif  // KILN_RUNTIME_CUDA_STREAM_H_
