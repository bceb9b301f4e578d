//===- host_cuda.h - kernel templates run on the CPU, for tests ---*- C++ -*-===//
//
// Just enough of CUDA for a host compiler to build kernel templates and run
// them thread for thread: every CUDA thread of a block is a std::thread,
// blocks run one after another (so `__shared__` variables are statics),
// __syncthreads and the warp intrinsics are barriers over the threads still
// running (a thread that returned leaves them, as on the GPU), and the
// element types convert like the GPU's (bf16 and f16 rounded to nearest
// even). It checks what a kernel computes, not how fast: use small grids.
//
// Kernel templates include the prelude, which includes <cuda_bf16.h> and
// <cuda_fp16.h>; this folder's stand-ins for them include this header.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_CUDA_KERNELS_EMULATION_HOST_CUDA_H
#define KILN_CODEGEN_CUDA_KERNELS_EMULATION_HOST_CUDA_H

#include <cmath>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#define __host__
#define __device__
#define __global__
#define __forceinline__ inline
#define __shared__ static

// Vector types.
struct uint3 {
  unsigned x, y, z;
};
inline uint3 make_uint3(unsigned x, unsigned y, unsigned z) { return {x, y, z}; }
struct int2 {
  int x, y;
};
inline int2 make_int2(int x, int y) { return {x, y}; }
struct alignas(8) float2 {
  float x, y;
};
inline float2 make_float2(float x, float y) { return {x, y}; }
struct alignas(8) uint2 {
  unsigned x, y;
};
struct alignas(16) uint4 {
  unsigned x, y, z, w;
};

// Element types, converted as the GPU converts them.
struct __nv_bfloat16 {
  unsigned short bits;
};
struct __half {
  _Float16 value;
};
inline float __bfloat162float(__nv_bfloat16 x) {
  uint32_t bits = uint32_t(x.bits) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
inline __nv_bfloat16 __float2bfloat16_rn(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if (std::isnan(f))
    return {uint16_t((bits >> 16) | 0x40)};
  bits += 0x7fff + ((bits >> 16) & 1);
  return {uint16_t(bits >> 16)};
}
inline float __half2float(__half x) { return float(x.value); }
inline __half __float2half_rn(float f) { return {_Float16(f)}; }
inline float __ll2float_rn(long long x) { return float(x); }
inline __nv_bfloat16 __ll2bfloat16_rn(long long x) {
  return __float2bfloat16_rn(float(double(x)));
}
inline __half __ll2half_rn(long long x) { return {_Float16(double(x))}; }

// Arithmetic intrinsics the prelude uses.
inline float __int_as_float(int x) {
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}
inline unsigned __umulhi(unsigned a, unsigned b) {
  return unsigned((uint64_t(a) * b) >> 32);
}
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline float __fdividef(float a, float b) { return a / b; }
inline float __expf(float x) { return std::exp(x); }
inline float __logf(float x) { return std::log(x); }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
template <class T> inline T __ldg(const T *p) { return *p; }

namespace kiln::emulation {

/// A barrier over the threads that have not returned yet.
class Barrier {
public:
  explicit Barrier(int threads) : live(threads) {}
  void wait() {
    std::unique_lock<std::mutex> lock(mutex);
    unsigned generation = this->generation;
    if (++arrived == live)
      release();
    else
      changed.wait(lock, [&] { return generation != this->generation; });
  }
  void leave() {
    std::lock_guard<std::mutex> lock(mutex);
    if (--live > 0 && arrived == live)
      release();
  }

private:
  void release() {
    arrived = 0;
    ++generation;
    changed.notify_all();
  }
  std::mutex mutex;
  std::condition_variable changed;
  int live, arrived = 0;
  unsigned generation = 0;
};

/// The block being run: its barrier, and each warp's barrier and exchange
/// slots.
struct Block {
  explicit Block(int threads) : barrier(threads) {
    for (int w = 0; w < (threads + 31) / 32; ++w)
      warps.push_back(std::make_unique<Warp>(
          threads - 32 * w < 32 ? threads - 32 * w : 32));
    for (int t = 0; t < threads; ++t)
      warps[t / 32]->live[t % 32] = true;
  }
  struct Warp {
    explicit Warp(int lanes) : barrier(lanes) {}
    Barrier barrier;
    uint64_t slots[32] = {};
    /// Lanes that have not returned: only they take part in votes.
    std::atomic<bool> live[32] = {};
  };
  Barrier barrier;
  std::vector<std::unique_ptr<Warp>> warps;
  std::mutex atomics;
};

inline Block *&currentBlock() {
  static Block *block = nullptr;
  return block;
}
inline thread_local uint3 thread_index, block_index;
inline uint3 grid_size, block_size;

/// The thread's rank in its block, as warps are formed on the GPU.
inline unsigned thread_rank() {
  return thread_index.y * block_size.x + thread_index.x;
}

inline Block::Warp &warp() {
  return *currentBlock()->warps[thread_rank() / 32];
}
inline unsigned lane() { return thread_rank() % 32; }

/// Each lane's `value`, exchanged among the warp's lanes.
template <class T, class F> auto exchange(T value, F &&read) {
  static_assert(sizeof(T) <= 8, "one slot per lane");
  Block::Warp &w = warp();
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof(T));
  w.slots[lane()] = bits;
  w.barrier.wait();
  auto at = [&](unsigned l) {
    T v;
    std::memcpy(&v, &w.slots[l], sizeof(T));
    return v;
  };
  auto result = read(at, w.live);
  w.barrier.wait();
  return result;
}

/// Runs `kernel()` on a grid of grid.x * grid.y blocks of block.x * block.y
/// threads, block after block (z is 1).
inline void launch(uint3 grid, uint3 block,
                   const std::function<void()> &kernel) {
  grid_size = {grid.x, grid.y, 1};
  block_size = {block.x, block.y, 1};
  const unsigned threads = block.x * block.y;
  for (unsigned b = 0; b < grid.x * grid.y; ++b) {
    Block running_block(static_cast<int>(threads));
    currentBlock() = &running_block;
    std::vector<std::thread> running;
    for (unsigned t = 0; t < threads; ++t)
      running.emplace_back([&, t] {
        thread_index = {t % block.x, t / block.x, 0};
        block_index = {b % grid.x, b / grid.x, 0};
        kernel();
        running_block.warps[t / 32]->live[t % 32] = false;
        running_block.warps[t / 32]->barrier.leave();
        running_block.barrier.leave();
      });
    for (std::thread &thread : running)
      thread.join();
    currentBlock() = nullptr;
  }
}

/// Runs `kernel()` on a grid of `grid` one-dimensional blocks of `threads`
/// threads, block after block.
inline void launch(unsigned grid, unsigned threads,
                   const std::function<void()> &kernel) {
  launch(uint3{grid, 1, 1}, uint3{threads, 1, 1}, kernel);
}

} // namespace kiln::emulation

#define threadIdx (::kiln::emulation::thread_index)
#define blockIdx (::kiln::emulation::block_index)
#define gridDim (::kiln::emulation::grid_size)
#define blockDim (::kiln::emulation::block_size)

// CUDA's integer min and max.
inline int min(int a, int b) { return a < b ? a : b; }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline long long max(long long a, long long b) { return a > b ? a : b; }

inline void __syncthreads() {
  ::kiln::emulation::currentBlock()->barrier.wait();
}
inline void __syncwarp(unsigned = 0xffffffffu) {
  ::kiln::emulation::warp().barrier.wait();
}
template <class T> T __shfl_sync(unsigned, T value, int source) {
  return ::kiln::emulation::exchange(
      value, [&](auto at, const std::atomic<bool> *) { return at(unsigned(source) % 32); });
}
template <class T> T __shfl_xor_sync(unsigned, T value, int mask) {
  unsigned l = ::kiln::emulation::lane();
  return ::kiln::emulation::exchange(
      value, [&](auto at, const std::atomic<bool> *) { return at((l ^ unsigned(mask)) % 32); });
}
template <class T> T __shfl_up_sync(unsigned, T value, unsigned delta) {
  unsigned l = ::kiln::emulation::lane();
  return ::kiln::emulation::exchange(
      value,
      [&](auto at, const std::atomic<bool> *) { return l >= delta ? at(l - delta) : at(l); });
}
inline unsigned __ballot_sync(unsigned, int predicate) {
  return ::kiln::emulation::exchange(predicate != 0, [](auto at,
                                                       const std::atomic<bool> *live) {
    unsigned mask = 0;
    for (unsigned l = 0; l < 32; ++l)
      mask |= live[l] && at(l) ? 1u << l : 0u;
    return mask;
  });
}
inline unsigned __match_any_sync(unsigned, unsigned value) {
  return ::kiln::emulation::exchange(value, [&](auto at, const std::atomic<bool> *live) {
    unsigned mask = 0;
    for (unsigned l = 0; l < 32; ++l)
      mask |= live[l] && at(l) == value ? 1u << l : 0u;
    return mask;
  });
}
inline unsigned atomicAdd(unsigned *address, unsigned value) {
  std::lock_guard<std::mutex> lock(
      ::kiln::emulation::currentBlock()->atomics);
  unsigned old = *address;
  *address = old + value;
  return old;
}

#endif // KILN_CODEGEN_CUDA_KERNELS_EMULATION_HOST_CUDA_H
