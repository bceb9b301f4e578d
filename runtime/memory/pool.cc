#include "runtime/memory/pool.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "kiln/status.h"

namespace kiln {

constexpr size_t DevicePool::kMinBlockBytes;
constexpr size_t DevicePool::kMaxBlockBytes;

std::string PoolStats::ToString() const {
  return absl::StrCat("requests ", requests, ", hits ", hits, ", misses ",
                      misses, ", failures ", failures, ", oom retries ",
                      oom_retries, ", in use ", bytes_in_use, " bytes in ",
                      blocks_in_use, " blocks, cached ", bytes_cached,
                      " bytes in ", blocks_cached, " blocks, reserved ",
                      bytes_reserved, " bytes, peak in use ", peak_bytes_in_use,
                      ", peak reserved ", peak_bytes_reserved);
}

std::shared_ptr<DevicePool> DevicePool::Create(
    std::shared_ptr<Allocator> allocator,
    std::shared_ptr<FenceRecorder> fences) {
  return std::shared_ptr<DevicePool>(
      new DevicePool(std::move(allocator), std::move(fences)));
}

DevicePool::~DevicePool() {
  absl::MutexLock lock(&mu_);
  // Nothing can report an error from here; a failing free leaks the block.
  (void)TrimLocked();
}

size_t DevicePool::RoundSize(size_t bytes) {
  if (bytes <= kMinBlockBytes) return kMinBlockBytes;
  if (bytes > kLargeBlockBytes) {
    return (bytes + kLargeBlockStep - 1) & ~(kLargeBlockStep - 1);
  }
  int p = 63;
  while ((bytes >> p) == 0) --p;  // 2^p <= bytes < 2^(p+1), p >= 8
  const size_t step = size_t{1} << (p - 2);
  return (bytes + step - 1) & ~(step - 1);
}

bool DevicePool::TakeCached(size_t rounded, StreamId stream,
                            DevicePtr* pointer) {
  auto bin = cache_.find(rounded);
  if (bin == cache_.end()) return false;
  std::vector<CachedBlock>& blocks = bin->second;
  // Newest first: the most recently freed block on this stream is the most
  // likely to be warm in L2 and needs no fence.
  ptrdiff_t chosen = -1;
  for (ptrdiff_t i = static_cast<ptrdiff_t>(blocks.size()) - 1; i >= 0; --i) {
    if (blocks[i].stream == stream) {
      chosen = i;
      break;
    }
  }
  if (chosen < 0) {
    // Oldest first for other streams: the likeliest to have completed.
    for (size_t i = 0; i < blocks.size(); ++i) {
      if (blocks[i].fence == nullptr) continue;
      absl::StatusOr<bool> done = blocks[i].fence->IsComplete();
      if (done.ok() && *done) {
        chosen = static_cast<ptrdiff_t>(i);
        break;
      }
    }
  }
  if (chosen < 0) return false;
  *pointer = blocks[chosen].pointer;
  blocks.erase(blocks.begin() + chosen);
  if (blocks.empty()) cache_.erase(bin);
  stats_.blocks_cached -= 1;
  stats_.bytes_cached -= rounded;
  return true;
}

DeviceBuffer DevicePool::MakeBuffer(DevicePtr pointer, size_t bytes,
                                    size_t rounded, StreamId stream) {
  stats_.blocks_in_use += 1;
  stats_.bytes_in_use += rounded;
  stats_.peak_bytes_in_use =
      std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
  auto* block = new DeviceBuffer::Block{pointer, bytes, rounded, stream};
  std::shared_ptr<DevicePool> self = shared_from_this();
  return DeviceBuffer(std::shared_ptr<const DeviceBuffer::Block>(
      block, [self](const DeviceBuffer::Block* b) {
        self->Release(*b);
        delete b;
      }));
}

absl::StatusOr<DeviceBuffer> DevicePool::Allocate(size_t bytes,
                                                  StreamId stream) {
  absl::MutexLock lock(&mu_);
  stats_.requests += 1;
  if (bytes > kMaxBlockBytes) {
    stats_.misses += 1;
    stats_.failures += 1;
    return absl::ResourceExhaustedError(
        absl::StrCat("device allocation of ", bytes, " bytes is too large"));
  }
  const size_t rounded = RoundSize(bytes);
  DevicePtr pointer = 0;
  if (TakeCached(rounded, stream, &pointer)) {
    stats_.hits += 1;
    return MakeBuffer(pointer, bytes, rounded, stream);
  }
  stats_.misses += 1;
  absl::StatusOr<DevicePtr> fresh = AllocateFromDevice(rounded);
  if (!fresh.ok() &&
      fresh.status().code() == absl::StatusCode::kResourceExhausted) {
    // Cached blocks of other sizes may be what stands in the way.
    stats_.oom_retries += 1;
    absl::StatusOr<size_t> trimmed = TrimLocked();
    if (trimmed.ok() && *trimmed > 0) fresh = AllocateFromDevice(rounded);
  }
  if (!fresh.ok()) {
    stats_.failures += 1;
    if (fresh.status().code() == absl::StatusCode::kResourceExhausted) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "out of device memory allocating ", bytes, " bytes (block ", rounded,
          ") after trimming the pool cache: ", fresh.status().message(),
          "; pool: ", stats_.ToString()));
    }
    return fresh.status();
  }
  stats_.device_allocations += 1;
  stats_.bytes_reserved += rounded;
  stats_.peak_bytes_reserved =
      std::max(stats_.peak_bytes_reserved, stats_.bytes_reserved);
  return MakeBuffer(*fresh, bytes, rounded, stream);
}

absl::StatusOr<DevicePtr> DevicePool::AllocateFromDevice(size_t rounded) {
  if (limit_bytes_ != 0 && (rounded > limit_bytes_ ||
                            stats_.bytes_reserved > limit_bytes_ - rounded)) {
    return absl::ResourceExhaustedError(
        absl::StrCat("the pool's limit of ", limit_bytes_, " bytes (",
                     stats_.bytes_reserved, " held)"));
  }
  return allocator_->Allocate(rounded);
}

void DevicePool::SetLimit(size_t bytes) {
  absl::MutexLock lock(&mu_);
  limit_bytes_ = bytes;
}

void DevicePool::Release(const DeviceBuffer::Block& block) {
  // Record the fence before taking the lock: it may call into the driver.
  std::unique_ptr<Fence> fence;
  if (fences_ != nullptr) {
    absl::StatusOr<std::unique_ptr<Fence>> recorded =
        fences_->Record(block.stream);
    // Without a fence the block stays usable on its own stream only.
    if (recorded.ok()) fence = std::move(recorded).value();
  }
  absl::MutexLock lock(&mu_);
  stats_.blocks_in_use -= 1;
  stats_.bytes_in_use -= block.rounded;
  stats_.blocks_cached += 1;
  stats_.bytes_cached += block.rounded;
  cache_[block.rounded].push_back(
      CachedBlock{block.pointer, block.stream, std::move(fence)});
}

absl::StatusOr<size_t> DevicePool::TrimLocked() {
  size_t released = 0;
  absl::Status first_error;
  for (auto bin = cache_.begin(); bin != cache_.end();) {
    const size_t rounded = bin->first;
    std::vector<CachedBlock>& blocks = bin->second;
    std::vector<CachedBlock> kept;
    for (CachedBlock& block : blocks) {
      absl::Status status;
      if (block.fence != nullptr) status = block.fence->Wait();
      if (status.ok()) status = allocator_->Free(block.pointer, rounded);
      if (!status.ok()) {
        if (first_error.ok()) first_error = status;
        kept.push_back(std::move(block));
        continue;
      }
      released += rounded;
      stats_.device_frees += 1;
      stats_.blocks_cached -= 1;
      stats_.bytes_cached -= rounded;
      stats_.bytes_reserved -= rounded;
    }
    if (kept.empty()) {
      bin = cache_.erase(bin);
    } else {
      blocks = std::move(kept);
      ++bin;
    }
  }
  if (!first_error.ok()) return Annotate(first_error, "trimming the pool");
  return released;
}

absl::StatusOr<size_t> DevicePool::Trim() {
  absl::MutexLock lock(&mu_);
  return TrimLocked();
}

PoolStats DevicePool::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

}  // namespace kiln
