// Device memory as the C++ API hands it out: addresses, stream identities
// and DeviceBuffer, shared ownership of one block of a Runtime's pool
// (runtime/memory/pool.h, not installed, is the pool itself).
#ifndef KILN_DEVICE_BUFFER_H_
#define KILN_DEVICE_BUFFER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

namespace kiln {

// A device address (CUdeviceptr for CUDA).
using DevicePtr = uint64_t;
// An opaque stream identity (a CUstream cast to an integer for CUDA; any
// distinct values in tests). 0 is a valid stream (the default stream).
using StreamId = uintptr_t;

class DevicePool;

// Shared ownership of one pool block. Copies share the block; it returns to
// the pool (freed on `stream()`) when the last copy is destroyed or reset.
// Freeing records a fence on that stream, so the stream must outlive every
// handle of the blocks allocated for it.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;

  DevicePtr data() const { return block_ ? block_->pointer : 0; }
  // The requested size in bytes.
  size_t size() const { return block_ ? block_->requested : 0; }
  // The block's size (the request rounded to its size class).
  size_t capacity() const { return block_ ? block_->rounded : 0; }
  // The stream the block was allocated for and will be freed on.
  StreamId stream() const { return block_ ? block_->stream : 0; }
  long use_count() const { return block_.use_count(); }
  explicit operator bool() const { return block_ != nullptr; }
  void reset() { block_.reset(); }

 private:
  friend class DevicePool;
  struct Block {
    DevicePtr pointer = 0;
    size_t requested = 0;
    size_t rounded = 0;
    StreamId stream = 0;
  };
  explicit DeviceBuffer(std::shared_ptr<const Block> block)
      : block_(std::move(block)) {}
  std::shared_ptr<const Block> block_;
};

}  // namespace kiln

#endif  // KILN_DEVICE_BUFFER_H_
