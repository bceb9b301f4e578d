#include "runtime/memory/pool.h"

#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/memory/fake_allocator.h"

namespace kiln {
namespace {

class PoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    allocator_ = std::make_shared<FakeAllocator>();
    fences_ = std::make_shared<FakeFenceRecorder>();
    pool_ = DevicePool::Create(allocator_, fences_);
  }

  DeviceBuffer Alloc(size_t bytes, StreamId stream = 1) {
    auto buffer = pool_->Allocate(bytes, stream);
    EXPECT_TRUE(buffer.ok()) << buffer.status();
    return buffer.ok() ? *std::move(buffer) : DeviceBuffer();
  }

  std::shared_ptr<FakeAllocator> allocator_;
  std::shared_ptr<FakeFenceRecorder> fences_;
  std::shared_ptr<DevicePool> pool_;
};

TEST(RoundSizeTest, MinimumBlock) {
  EXPECT_EQ(DevicePool::RoundSize(0), 256u);
  EXPECT_EQ(DevicePool::RoundSize(1), 256u);
  EXPECT_EQ(DevicePool::RoundSize(255), 256u);
  EXPECT_EQ(DevicePool::RoundSize(256), 256u);
}

TEST(RoundSizeTest, FourSubBinsPerPowerOfTwo) {
  // [256, 512): steps of 64.
  EXPECT_EQ(DevicePool::RoundSize(257), 320u);
  EXPECT_EQ(DevicePool::RoundSize(320), 320u);
  EXPECT_EQ(DevicePool::RoundSize(321), 384u);
  EXPECT_EQ(DevicePool::RoundSize(449), 512u);
  // [1 MiB, 2 MiB): steps of 256 KiB.
  const size_t mib = size_t{1} << 20;
  EXPECT_EQ(DevicePool::RoundSize(mib), mib);
  EXPECT_EQ(DevicePool::RoundSize(mib + 1), mib + mib / 4);
  EXPECT_EQ(DevicePool::RoundSize(mib + mib / 2), mib + mib / 2);
  EXPECT_EQ(DevicePool::RoundSize(mib + mib / 2 + 1), mib + 3 * mib / 4);
  EXPECT_EQ(DevicePool::RoundSize(2 * mib - 1), 2 * mib);
}

TEST(RoundSizeTest, LargeBlocksInStepsOfTwoMiB) {
  const size_t mib = size_t{1} << 20;
  // Up to 32 MiB the sub-bins hold; above it, 2 MiB steps.
  EXPECT_EQ(DevicePool::RoundSize(32 * mib - 1), 32 * mib);
  EXPECT_EQ(DevicePool::RoundSize(32 * mib), 32 * mib);
  EXPECT_EQ(DevicePool::RoundSize(32 * mib + 1), 34 * mib);
  // An arena of 280 MiB and a little is 282 MiB, not the sub-bin's 320.
  EXPECT_EQ(DevicePool::RoundSize(293622784), 282 * mib);
  EXPECT_EQ(DevicePool::RoundSize(384 * mib), 384 * mib);
}

TEST(RoundSizeTest, WasteBoundAndMonotonic) {
  std::mt19937_64 rng(7);
  size_t previous = 0;
  for (size_t bytes = 1; bytes < 70000; bytes += 1 + rng() % 13) {
    size_t rounded = DevicePool::RoundSize(bytes);
    ASSERT_GE(rounded, bytes);
    ASSERT_GE(rounded, previous);
    previous = rounded;
    if (bytes > 256) {
      ASSERT_LT(rounded, bytes + bytes / 4 + 1) << bytes;
    }
  }
  for (int i = 0; i < 10000; ++i) {
    size_t bytes = 1 + (rng() >> (rng() % 40 + 1));
    size_t rounded = DevicePool::RoundSize(bytes);
    ASSERT_GE(rounded, bytes);
    ASSERT_LT(rounded, 2 * std::max<size_t>(bytes, 256));
    ASSERT_EQ(rounded % 64, 0u);
    // A rounded size is a fixed point.
    ASSERT_EQ(DevicePool::RoundSize(rounded), rounded);
  }
}

TEST_F(PoolTest, SameStreamReuseIsImmediate) {
  DevicePtr first;
  {
    DeviceBuffer buffer = Alloc(1000, /*stream=*/1);
    first = buffer.data();
    EXPECT_EQ(buffer.size(), 1000u);
    EXPECT_EQ(buffer.capacity(), 1024u);
    EXPECT_EQ(buffer.stream(), 1u);
  }
  // Same size class, same stream, fence not complete: reused.
  DeviceBuffer again = Alloc(900, /*stream=*/1);
  EXPECT_EQ(again.data(), first);
  PoolStats stats = pool_->stats();
  EXPECT_EQ(stats.requests, 2);
  EXPECT_EQ(stats.hits, 1);
  EXPECT_EQ(stats.misses, 1);
  EXPECT_EQ(allocator_->allocate_calls(), 1);
}

TEST_F(PoolTest, DifferentSizeClassIsNotReused) {
  DevicePtr first = Alloc(1000).data();  // freed at once
  DeviceBuffer other = Alloc(1100);      // class 1280
  EXPECT_NE(other.data(), first);
  EXPECT_EQ(pool_->stats().misses, 2);
}

TEST_F(PoolTest, OtherStreamWaitsForFence) {
  DevicePtr first = Alloc(4096, /*stream=*/1).data();
  EXPECT_EQ(fences_->recorded(), 1);
  // Stream 2 may not take the block while stream 1 may still use it.
  DeviceBuffer on_two = Alloc(4096, /*stream=*/2);
  EXPECT_NE(on_two.data(), first);
  on_two.reset();  // now cached for stream 2 (fence pending)

  fences_->Complete(1);
  DeviceBuffer on_three = Alloc(4096, /*stream=*/3);
  EXPECT_EQ(on_three.data(), first);  // stream 1's fence has completed
  // Stream 2's block is still pending for stream 3.
  DeviceBuffer another = Alloc(4096, /*stream=*/3);
  EXPECT_NE(another.data(), first);
  EXPECT_EQ(pool_->stats().hits, 1);
}

TEST_F(PoolTest, FailedFenceLimitsReuseToOwnStream) {
  fences_->FailNext(1);
  DevicePtr first = Alloc(512, /*stream=*/1).data();
  fences_->CompleteAll();
  EXPECT_NE(Alloc(512, /*stream=*/2).data(), first);
  EXPECT_EQ(Alloc(512, /*stream=*/1).data(), first);
}

TEST_F(PoolTest, SharedHandlesReleaseOnLastReference) {
  DeviceBuffer a = Alloc(300);
  DeviceBuffer b = a;
  EXPECT_EQ(a.use_count(), 2);
  a.reset();
  EXPECT_EQ(pool_->stats().blocks_in_use, 1);
  EXPECT_EQ(pool_->stats().bytes_in_use, 320u);
  b.reset();
  PoolStats stats = pool_->stats();
  EXPECT_EQ(stats.blocks_in_use, 0);
  EXPECT_EQ(stats.bytes_in_use, 0u);
  EXPECT_EQ(stats.blocks_cached, 1);
  EXPECT_EQ(stats.bytes_reserved, 320u);
  EXPECT_FALSE(a);
  EXPECT_EQ(a.data(), 0u);
}

TEST_F(PoolTest, HandleKeepsPoolAlive) {
  DeviceBuffer buffer = Alloc(2048);
  std::weak_ptr<DevicePool> weak = pool_;
  pool_.reset();
  EXPECT_FALSE(weak.expired());
  buffer.reset();
  EXPECT_TRUE(weak.expired());
  // The pool's destructor returned every block.
  EXPECT_EQ(allocator_->live_blocks(), 0u);
}

TEST_F(PoolTest, TrimReleasesCachedBlocksOnly) {
  DeviceBuffer kept = Alloc(10000);
  Alloc(20000);
  Alloc(30000);
  PoolStats before = pool_->stats();
  EXPECT_EQ(before.blocks_cached, 2);
  auto released = pool_->Trim();
  ASSERT_TRUE(released.ok()) << released.status();
  EXPECT_EQ(*released,
            DevicePool::RoundSize(20000) + DevicePool::RoundSize(30000));
  PoolStats after = pool_->stats();
  EXPECT_EQ(after.blocks_cached, 0);
  EXPECT_EQ(after.bytes_reserved, DevicePool::RoundSize(10000));
  EXPECT_EQ(after.device_frees, 2);
  EXPECT_EQ(fences_->waits(), 2);  // each block's fence was waited for
  EXPECT_EQ(allocator_->live_blocks(), 1u);
  EXPECT_EQ(after.peak_bytes_reserved, DevicePool::RoundSize(10000) +
                                           DevicePool::RoundSize(20000) +
                                           DevicePool::RoundSize(30000));
}

TEST_F(PoolTest, OutOfMemoryTrimsAndRetries) {
  allocator_->set_cap(4096);
  Alloc(2048);  // cached
  Alloc(1024);  // cached
  DeviceBuffer live = Alloc(512);
  // 3584 bytes reserved; 2048 more do not fit until the cache is trimmed.
  DeviceBuffer big = Alloc(2048 + 512);
  ASSERT_TRUE(big);
  PoolStats stats = pool_->stats();
  EXPECT_EQ(stats.oom_retries, 1);
  EXPECT_EQ(stats.failures, 0);
  EXPECT_EQ(stats.bytes_reserved, 512u + 2560u);
}

TEST_F(PoolTest, OutOfMemoryAfterTrimIsResourceExhausted) {
  allocator_->set_cap(4096);
  DeviceBuffer live = Alloc(4096);
  auto more = pool_->Allocate(256, 1);
  ASSERT_FALSE(more.ok());
  EXPECT_EQ(more.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(more.status().message().find("out of device memory allocating 256"),
            std::string::npos)
      << more.status();
  EXPECT_EQ(pool_->stats().failures, 1);
}

TEST_F(PoolTest, LimitTrimsThenRefusesAndThePoolStaysUsable) {
  // The device has room; the pool's own limit is what runs out.
  pool_->SetLimit(4096);
  Alloc(1536);  // cached
  DeviceBuffer live = Alloc(1024);
  // 2560 held: 2048 more pass the limit until the cached block goes.
  DeviceBuffer second = Alloc(2048);
  ASSERT_TRUE(second);
  EXPECT_EQ(pool_->stats().oom_retries, 1);
  EXPECT_EQ(pool_->stats().bytes_reserved, 3072u);
  // Nothing left to trim: refused, naming the limit and the request.
  auto more = pool_->Allocate(2048, 1);
  ASSERT_FALSE(more.ok());
  EXPECT_EQ(more.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(more.status().message().find("allocating 2048 bytes"),
            std::string::npos)
      << more.status();
  EXPECT_NE(more.status().message().find("the pool's limit of 4096 bytes"),
            std::string::npos)
      << more.status();
  EXPECT_EQ(allocator_->allocate_calls(), 3);
  // What fits still comes, and freed blocks serve later requests.
  EXPECT_TRUE(Alloc(1024));
  second.reset();
  EXPECT_TRUE(Alloc(2048));
  // A request larger than the limit itself is refused; removing the limit
  // lets it through.
  EXPECT_FALSE(pool_->Allocate(8192, 1).ok());
  pool_->SetLimit(0);
  EXPECT_TRUE(Alloc(8192));
}

TEST_F(PoolTest, InjectedFailureIsRetriedAfterTrim) {
  Alloc(512);  // cached, so the trim has something to release
  allocator_->FailNext(1);
  DeviceBuffer buffer = Alloc(8192);
  EXPECT_TRUE(buffer);
  EXPECT_EQ(pool_->stats().oom_retries, 1);
  EXPECT_EQ(pool_->stats().blocks_cached, 0);
}

TEST_F(PoolTest, HugeRequestIsRefused) {
  auto buffer = pool_->Allocate(SIZE_MAX, 1);
  EXPECT_EQ(buffer.status().code(), absl::StatusCode::kResourceExhausted);
}

TEST_F(PoolTest, WithoutFencesOnlySameStreamReuse) {
  auto pool = DevicePool::Create(allocator_, nullptr);
  DevicePtr first = (*pool->Allocate(700, 5)).data();
  EXPECT_NE((*pool->Allocate(700, 6)).data(), first);
  EXPECT_EQ((*pool->Allocate(700, 5)).data(), first);
}

// Thousands of random allocations and frees with random sizes, streams and
// lifetimes; checks that live blocks never overlap, that the statistics add
// up at every step, and that nothing leaks once all handles die and the
// pool is trimmed.
TEST_F(PoolTest, RandomizedStress) {
  std::mt19937_64 rng(12345);
  struct Live {
    DeviceBuffer buffer;
    int release_at;
  };
  std::vector<Live> live;
  // Live blocks by address, to check for overlap.
  std::map<DevicePtr, size_t> extents;
  int64_t requests = 0;
  const int kSteps = 20000;
  for (int step = 0; step < kSteps; ++step) {
    const int action = static_cast<int>(rng() % 10);
    if (action < 6 || live.empty()) {
      // Sizes spread across many classes, with repeats so reuse happens.
      size_t bytes;
      switch (rng() % 4) {
        case 0:
          bytes = rng() % 300;
          break;
        case 1:
          bytes = 256 + rng() % 4096;
          break;
        case 2:
          bytes = size_t{1} << (8 + rng() % 12);
          break;
        default:
          bytes = rng() % (1 << 22);
          break;
      }
      StreamId stream = 1 + rng() % 3;
      auto buffer = pool_->Allocate(bytes, stream);
      ++requests;
      ASSERT_TRUE(buffer.ok()) << buffer.status();
      const DevicePtr begin = buffer->data();
      const size_t size = buffer->capacity();
      ASSERT_GE(size, bytes);
      ASSERT_EQ(size, DevicePool::RoundSize(bytes));
      // No overlap with the neighbours in address order.
      auto next = extents.lower_bound(begin);
      if (next != extents.end()) {
        ASSERT_LE(begin + size, next->first);
      }
      if (next != extents.begin()) {
        auto prev = std::prev(next);
        ASSERT_LE(prev->first + prev->second, begin);
      }
      extents[begin] = size;
      // Sometimes share the handle, so the last reference decides.
      Live entry{*std::move(buffer), step + 1 + static_cast<int>(rng() % 200)};
      if (rng() % 4 == 0) live.push_back(entry);
      live.push_back(std::move(entry));
    } else if (action < 9) {
      size_t index = rng() % live.size();
      DevicePtr pointer = live[index].buffer.data();
      live[index] = std::move(live.back());
      live.pop_back();
      bool still_referenced = false;
      for (const Live& other : live) {
        if (other.buffer.data() == pointer) still_referenced = true;
      }
      if (!still_referenced) extents.erase(pointer);
    } else {
      // Streams make progress; sometimes the pool is trimmed.
      fences_->Complete(1 + rng() % 3);
      if (rng() % 20 == 0) {
        ASSERT_TRUE(pool_->Trim().ok());
      }
    }
    // Expired lifetimes.
    if (step % 50 == 0) {
      live.erase(
          std::remove_if(live.begin(), live.end(),
                         [&](const Live& l) { return l.release_at < step; }),
          live.end());
      std::map<DevicePtr, size_t> still;
      for (const Live& l : live) still[l.buffer.data()] = l.buffer.capacity();
      extents = std::move(still);
    }
    PoolStats stats = pool_->stats();
    ASSERT_EQ(stats.requests, requests);
    ASSERT_EQ(stats.hits + stats.misses, stats.requests);
    ASSERT_EQ(stats.bytes_reserved, stats.bytes_in_use + stats.bytes_cached);
    ASSERT_EQ(stats.bytes_reserved, allocator_->live_bytes());
    ASSERT_EQ(static_cast<size_t>(stats.blocks_in_use + stats.blocks_cached),
              allocator_->live_blocks());
    ASSERT_EQ(static_cast<size_t>(stats.blocks_in_use), extents.size());
    ASSERT_LE(stats.bytes_in_use, stats.peak_bytes_in_use);
    ASSERT_LE(stats.bytes_reserved, stats.peak_bytes_reserved);
  }
  live.clear();
  PoolStats drained = pool_->stats();
  EXPECT_EQ(drained.blocks_in_use, 0);
  EXPECT_EQ(drained.bytes_in_use, 0u);
  EXPECT_GT(drained.hits, 0);
  ASSERT_TRUE(pool_->Trim().ok());
  PoolStats trimmed = pool_->stats();
  EXPECT_EQ(trimmed.bytes_reserved, 0u);
  EXPECT_EQ(trimmed.blocks_cached, 0);
  EXPECT_EQ(trimmed.device_allocations, trimmed.device_frees);
  EXPECT_EQ(allocator_->live_blocks(), 0u);
  EXPECT_EQ(allocator_->live_bytes(), 0u);
}

}  // namespace
}  // namespace kiln
