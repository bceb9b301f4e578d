#include "runtime/memory/fake_allocator.h"

#include "absl/strings/str_cat.h"

namespace kiln {

absl::StatusOr<DevicePtr> FakeAllocator::Allocate(size_t bytes) {
  absl::MutexLock lock(&mu_);
  ++allocate_calls_;
  if (fail_next_ > 0) {
    --fail_next_;
    return absl::ResourceExhaustedError("injected out-of-memory");
  }
  if (bytes > cap_ || live_bytes_ > cap_ - bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("fake device full: ", live_bytes_, " of ", cap_,
                     " bytes live, ", bytes, " requested"));
  }
  DevicePtr pointer = next_;
  next_ += (bytes + 255) / 256 * 256 + 256;  // a gap catches overruns
  live_[pointer] = bytes;
  live_bytes_ += bytes;
  return pointer;
}

absl::Status FakeAllocator::Free(DevicePtr pointer, size_t bytes) {
  absl::MutexLock lock(&mu_);
  ++free_calls_;
  auto it = live_.find(pointer);
  if (it == live_.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("free of unknown pointer 0x", absl::Hex(pointer)));
  }
  if (it->second != bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("free of ", bytes, " bytes, block has ", it->second));
  }
  live_bytes_ -= bytes;
  live_.erase(it);
  return absl::OkStatus();
}

void FakeAllocator::FailNext(int count) {
  absl::MutexLock lock(&mu_);
  fail_next_ = count;
}

void FakeAllocator::set_cap(size_t cap) {
  absl::MutexLock lock(&mu_);
  cap_ = cap;
}

size_t FakeAllocator::live_bytes() const {
  absl::MutexLock lock(&mu_);
  return live_bytes_;
}

size_t FakeAllocator::live_blocks() const {
  absl::MutexLock lock(&mu_);
  return live_.size();
}

int64_t FakeAllocator::allocate_calls() const {
  absl::MutexLock lock(&mu_);
  return allocate_calls_;
}

int64_t FakeAllocator::free_calls() const {
  absl::MutexLock lock(&mu_);
  return free_calls_;
}

struct FakeFenceRecorder::State {
  absl::Mutex mu;
  // Per stream: the sequence number of the last recorded and of the last
  // completed fence.
  std::map<StreamId, int64_t> recorded ABSL_GUARDED_BY(mu);
  std::map<StreamId, int64_t> completed ABSL_GUARDED_BY(mu);
  int fail_next ABSL_GUARDED_BY(mu) = 0;
  int64_t total_recorded ABSL_GUARDED_BY(mu) = 0;
  int64_t waits ABSL_GUARDED_BY(mu) = 0;
};

namespace {

class FakeFence : public Fence {
 public:
  FakeFence(std::shared_ptr<void> keep_alive, absl::Mutex* mu,
            std::map<StreamId, int64_t>* completed, int64_t* waits,
            StreamId stream, int64_t sequence)
      : keep_alive_(std::move(keep_alive)),
        mu_(mu),
        completed_(completed),
        waits_(waits),
        stream_(stream),
        sequence_(sequence) {}

  absl::StatusOr<bool> IsComplete() override {
    absl::MutexLock lock(mu_);
    return (*completed_)[stream_] >= sequence_;
  }

  absl::Status Wait() override {
    absl::MutexLock lock(mu_);
    ++*waits_;
    int64_t& done = (*completed_)[stream_];
    if (done < sequence_) done = sequence_;
    return absl::OkStatus();
  }

 private:
  std::shared_ptr<void> keep_alive_;
  absl::Mutex* mu_;
  std::map<StreamId, int64_t>* completed_;
  int64_t* waits_;
  StreamId stream_;
  int64_t sequence_;
};

}  // namespace

FakeFenceRecorder::FakeFenceRecorder() : state_(std::make_shared<State>()) {}

absl::StatusOr<std::unique_ptr<Fence>> FakeFenceRecorder::Record(
    StreamId stream) {
  absl::MutexLock lock(&state_->mu);
  if (state_->fail_next > 0) {
    --state_->fail_next;
    return absl::InternalError("injected fence failure");
  }
  ++state_->total_recorded;
  int64_t sequence = ++state_->recorded[stream];
  return std::unique_ptr<Fence>(
      new FakeFence(state_, &state_->mu, &state_->completed, &state_->waits,
                    stream, sequence));
}

void FakeFenceRecorder::Complete(StreamId stream) {
  absl::MutexLock lock(&state_->mu);
  state_->completed[stream] = state_->recorded[stream];
}

void FakeFenceRecorder::CompleteAll() {
  absl::MutexLock lock(&state_->mu);
  for (const auto& entry : state_->recorded) {
    state_->completed[entry.first] = entry.second;
  }
}

void FakeFenceRecorder::FailNext(int count) {
  absl::MutexLock lock(&state_->mu);
  state_->fail_next = count;
}

int64_t FakeFenceRecorder::recorded() const {
  absl::MutexLock lock(&state_->mu);
  return state_->total_recorded;
}

int64_t FakeFenceRecorder::waits() const {
  absl::MutexLock lock(&state_->mu);
  return state_->waits;
}

}  // namespace kiln
