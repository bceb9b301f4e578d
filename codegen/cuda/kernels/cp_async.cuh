//===- cp_async.cuh - asynchronous copies into shared memory (sm_80) ------===//
//
// Thin wrappers of cp.async: a thread copies 4 or 16 bytes from global into
// shared memory without holding them in registers, zero-filling the bytes
// past `src_bytes` (0 for a chunk outside the tensor, whose source address
// is then never read). A thread's copies since its last commit form a
// group; wait<N> returns once at most N of its groups are still in flight.
// The pipelines that use them are the kernels'. The copies take the
// source as a pointer to its element type: NVVM's code for the caller's
// loop differs when the pointer reaches the instruction converted.
//
//===----------------------------------------------------------------------===//
#pragma once

namespace kiln {
namespace cp_async {

// BYTES (4, 8 or 16) from src into shared address dst, cached in L1 and L2.
template <int BYTES, typename T>
__device__ __forceinline__ void cache_all(unsigned dst, const T *src,
                                          int src_bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(dst),
               "l"(src), "n"(BYTES), "r"(src_bytes));
}
// 16 bytes from src into shared address dst, cached in L2 only: operand
// tiles that every block reads once.
template <typename T>
__device__ __forceinline__ void cache_global(unsigned dst, const T *src,
                                             int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst),
               "l"(src), "r"(src_bytes));
}
__device__ __forceinline__ void commit() {
  asm volatile("cp.async.commit_group;\n" ::);
}
template <int N> __device__ __forceinline__ void wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

} // namespace cp_async
} // namespace kiln
