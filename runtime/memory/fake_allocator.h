// Test doubles for the pool: an allocator over a fake address space with a
// memory cap and injectable failures, and fences completed by hand.
#ifndef KILN_RUNTIME_MEMORY_FAKE_ALLOCATOR_H_
#define KILN_RUNTIME_MEMORY_FAKE_ALLOCATOR_H_

#include <cstdint>
#include <map>
#include <memory>

#include "absl/synchronization/mutex.h"
#include "runtime/memory/pool.h"

namespace kiln {

// Hands out 256-byte-aligned addresses that are never reused, so a stale
// pointer can never alias a newer block. Allocate fails with
// ResourceExhausted when `cap` bytes are live or when a failure is injected.
class FakeAllocator : public Allocator {
 public:
  explicit FakeAllocator(size_t cap = SIZE_MAX) : cap_(cap) {}

  absl::StatusOr<DevicePtr> Allocate(size_t bytes) override;
  absl::Status Free(DevicePtr pointer, size_t bytes) override;

  // The next `count` Allocate calls fail with ResourceExhausted.
  void FailNext(int count);
  void set_cap(size_t cap);

  size_t live_bytes() const;
  size_t live_blocks() const;
  int64_t allocate_calls() const;
  int64_t free_calls() const;

 private:
  mutable absl::Mutex mu_;
  size_t cap_ ABSL_GUARDED_BY(mu_);
  int fail_next_ ABSL_GUARDED_BY(mu_) = 0;
  DevicePtr next_ ABSL_GUARDED_BY(mu_) = 0x10000;
  std::map<DevicePtr, size_t> live_ ABSL_GUARDED_BY(mu_);
  size_t live_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t allocate_calls_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t free_calls_ ABSL_GUARDED_BY(mu_) = 0;
};

// Fences that complete only when the test says so: Complete(stream) finishes
// every fence recorded on `stream` so far. Wait() completes the stream up to
// the fence (what a blocking wait would observe).
class FakeFenceRecorder : public FenceRecorder {
 public:
  FakeFenceRecorder();
  absl::StatusOr<std::unique_ptr<Fence>> Record(StreamId stream) override;

  void Complete(StreamId stream);
  void CompleteAll();
  // The next `count` Record calls fail.
  void FailNext(int count);
  int64_t recorded() const;
  int64_t waits() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace kiln

#endif  // KILN_RUNTIME_MEMORY_FAKE_ALLOCATOR_H_
