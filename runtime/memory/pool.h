// A binned, stream-ordered device memory pool.
//
// Sizes are rounded into size classes: a request of `bytes` is rounded up to
// at least kMinBlockBytes (256); above that, with 2^p <= bytes < 2^(p+1), to
// the next multiple of 2^(p-2). Each power-of-two class [2^p, 2^(p+1)) thus
// has four sub-bins, 2^p * {1, 1.25, 1.5, 1.75}, and a block is never more
// than 1.25x the request (less than 2x in all cases, 256 bytes for tiny ones).
// Above kLargeBlockBytes (32 MiB) sizes are rounded to multiples of 2 MiB
// instead: such blocks are an entry's arena or a whole dataset window,
// requested again at the same size, so finer classes lose no reuse while a
// sub-bin's up to 25% would be hundreds of MiB of device memory.
// Every block is one allocation of the underlying Allocator (blocks are never
// split or merged), so it keeps the allocator's alignment (256 bytes for
// cuMemAlloc).
//
// Freed blocks are cached per rounded size and reused in stream order: a
// block freed on stream S is reusable at once by a request on S (the stream
// orders the new work after the old), and by a request on another stream only
// once a fence recorded on S at free time has completed.
//
// Handles (DeviceBuffer, kiln/device_buffer.h) share ownership; the block
// returns to the pool when the last handle dies. The pool lives as long as
// any handle.
#ifndef KILN_RUNTIME_MEMORY_POOL_H_
#define KILN_RUNTIME_MEMORY_POOL_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "kiln/device_buffer.h"

namespace kiln {

// Raw device memory, e.g. cuMemAlloc / cuMemFree.
class Allocator {
 public:
  virtual ~Allocator() = default;
  // ResourceExhaustedError when the device is out of memory (the pool then
  // trims its cache and retries once); other errors are passed through.
  virtual absl::StatusOr<DevicePtr> Allocate(size_t bytes) = 0;
  // Returns memory from Allocate. The pool only frees blocks whose last use
  // has completed (their fence was waited for).
  virtual absl::Status Free(DevicePtr pointer, size_t bytes) = 0;
};

// A point in a stream's work, e.g. a CUDA event.
class Fence {
 public:
  virtual ~Fence() = default;
  // True once everything enqueued on the stream before the fence finished.
  virtual absl::StatusOr<bool> IsComplete() = 0;
  // Blocks until IsComplete().
  virtual absl::Status Wait() = 0;
};

// Records fences on streams, e.g. cuEventRecord with pooled events.
class FenceRecorder {
 public:
  virtual ~FenceRecorder() = default;
  virtual absl::StatusOr<std::unique_ptr<Fence>> Record(StreamId stream) = 0;
};

struct PoolStats {
  int64_t requests = 0;     // Allocate calls
  int64_t hits = 0;         // served from the cache
  int64_t misses = 0;       // went to the Allocator (requests = hits + misses)
  int64_t failures = 0;     // misses that failed even after trim-and-retry
  int64_t oom_retries = 0;  // misses that trimmed and retried
  int64_t device_allocations = 0;  // successful Allocator::Allocate calls
  int64_t device_frees = 0;        // Allocator::Free calls
  int64_t blocks_in_use = 0;
  int64_t blocks_cached = 0;
  size_t bytes_in_use = 0;    // rounded sizes of live blocks
  size_t bytes_cached = 0;    // rounded sizes of cached (free) blocks
  size_t bytes_reserved = 0;  // held from the Allocator = in use + cached
  size_t peak_bytes_in_use = 0;
  size_t peak_bytes_reserved = 0;
  std::string ToString() const;
};

class DevicePool : public std::enable_shared_from_this<DevicePool> {
 public:
  static constexpr size_t kMinBlockBytes = 256;
  // Above this, sizes round to multiples of kLargeBlockStep.
  static constexpr size_t kLargeBlockBytes = size_t{32} << 20;
  static constexpr size_t kLargeBlockStep = size_t{2} << 20;
  // Requests above this are refused outright (the rounding would overflow).
  static constexpr size_t kMaxBlockBytes = size_t{1} << 62;

  // `fences` may be null when all work uses one stream (cross-stream reuse
  // is then never allowed).
  static std::shared_ptr<DevicePool> Create(
      std::shared_ptr<Allocator> allocator,
      std::shared_ptr<FenceRecorder> fences);

  DevicePool(const DevicePool&) = delete;
  DevicePool& operator=(const DevicePool&) = delete;
  // Returns every cached block to the allocator. No handle can outlive the
  // pool (each keeps it alive).
  ~DevicePool();

  // The block size a request of `bytes` gets (see the file comment).
  static size_t RoundSize(size_t bytes);

  // A block of at least `bytes` (0 gives a minimum block) usable in stream
  // order on `stream`. Out of memory: trims the cache, retries once, then
  // ResourceExhaustedError with the pool's statistics.
  absl::StatusOr<DeviceBuffer> Allocate(size_t bytes, StreamId stream = 0);

  // Returns every cached block to the allocator, waiting for each block's
  // fence first. Blocks in use are untouched. Returns the bytes released.
  absl::StatusOr<size_t> Trim();

  // Caps what the pool holds from the allocator (blocks in use and cached)
  // at `bytes`; 0 removes the cap. A miss that would pass it is treated as
  // the device running out: the cache is trimmed and the request retried,
  // then it fails with ResourceExhaustedError. Blocks already held stay.
  void SetLimit(size_t bytes);

  PoolStats stats() const;

 private:
  struct CachedBlock {
    DevicePtr pointer;
    StreamId stream;
    std::unique_ptr<Fence> fence;  // null: reusable only on `stream`
  };

  DevicePool(std::shared_ptr<Allocator> allocator,
             std::shared_ptr<FenceRecorder> fences)
      : allocator_(std::move(allocator)), fences_(std::move(fences)) {}

  // Takes a reusable cached block of exactly `rounded` bytes, if any.
  bool TakeCached(size_t rounded, StreamId stream, DevicePtr* pointer)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<size_t> TrimLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A fresh block of `rounded` bytes from the allocator, within the limit.
  absl::StatusOr<DevicePtr> AllocateFromDevice(size_t rounded)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Release(const DeviceBuffer::Block& block);
  DeviceBuffer MakeBuffer(DevicePtr pointer, size_t bytes, size_t rounded,
                          StreamId stream) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::shared_ptr<Allocator> allocator_;
  const std::shared_ptr<FenceRecorder> fences_;
  mutable absl::Mutex mu_;
  // Cached blocks by rounded size; within a size, in free order.
  std::map<size_t, std::vector<CachedBlock>> cache_ ABSL_GUARDED_BY(mu_);
  PoolStats stats_ ABSL_GUARDED_BY(mu_);
  size_t limit_bytes_ ABSL_GUARDED_BY(mu_) = 0;  // 0: no limit
};

}  // namespace kiln

#endif  // KILN_RUNTIME_MEMORY_POOL_H_
